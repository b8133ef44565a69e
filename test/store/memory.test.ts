import t from "tap";
import { createMemoryStore } from "../../src/store/memory.js";
import { storeSuite } from "./suite.js";

await storeSuite(t, "memory store", (options) => createMemoryStore(options));

t.test("two memory stores share nothing", async (t) => {
  const a = createMemoryStore();
  const b = createMemoryStore();
  a.posts.create({ id: "p", title: "t", body: "b" });
  a.facts.create("text", "api");
  t.strictSame(b.posts.list(), []);
  t.strictSame(b.facts.list(), []);
  a.close();
  t.equal(b.posts.list().length, 0, "closing one leaves the other open");
  b.close();
});
