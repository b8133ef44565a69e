import t from "tap";
import { createMemoryStore } from "../../src/store/memory.js";
import { storeSuite } from "../helpers/store-suite.js";

await storeSuite(t, "memory store", async (options) => createMemoryStore(options));

t.test("two memory stores share nothing", async (t) => {
  const a = createMemoryStore();
  const b = createMemoryStore();
  await a.posts.create({ id: "p", title: "t", body: "b" });
  await a.facts.create("text", "api");
  t.strictSame(await b.posts.list(), []);
  t.strictSame(await b.facts.list(), []);
  await a.close();
  t.equal((await b.posts.list()).length, 0, "closing one leaves the other open");
  await b.close();
});
