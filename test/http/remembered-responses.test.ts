// Frozen responses are serialized once per Date value and then written from
// memory (response.ts); the one answered last is found by identity. Whatever
// order responses come in, each is written as itself: its own body, the
// framing asked for, the server's own fields of that call.

import t from "tap";
import { serialize, type Response, type WriteOptions } from "../../src/http/message/response.js";

const KEEP: WriteOptions = { omitBody: false, close: false, confirmKeepAlive: false, extraFields: "" };
const wire = (response: Response, opts: WriteOptions = KEEP) => {
  const out = serialize(response, opts);
  return out.bytes !== undefined ? out.bytes.toString("latin1") : out.head + (typeof out.body === "string" ? out.body : "");
};
const frozen = (body: string): Response => Object.freeze({ status: 200, headers: Object.freeze({ "Content-Type": "text/plain" }), body });

t.test("frozen responses answered in turn are each written with their own body", async (t) => {
  const a = frozen("alpha");
  const b = frozen("bravo");
  for (const [response, body] of [[a, "alpha"], [a, "alpha"], [b, "bravo"], [a, "alpha"], [b, "bravo"], [b, "bravo"]] as const) {
    const text = wire(response);
    t.ok(text.endsWith(`\r\n\r\n${body}`), `ends with ${body}`);
    t.match(text, `Content-Length: ${body.length}\r\n`);
  }
});

t.test("the same frozen response is written again as it was, and for another framing as that framing asks", async (t) => {
  const a = frozen("alpha");
  const first = serialize(a, KEEP);
  t.equal(serialize(a, KEEP), first, "the same object: nothing serialized again within the second");
  t.match(wire(a, { ...KEEP, close: true }), /\r\nConnection: close\r\n\r\nalpha$/);
  t.notMatch(wire(a), /Connection:/, "and the keep-alive answer after it has no Connection field");
  t.match(wire(a, { ...KEEP, extraFields: "Strict-Transport-Security: max-age=60\r\n" }), /Strict-Transport-Security: max-age=60\r\n/);
  t.notMatch(wire(a), /Strict-Transport-Security/, "the server's own fields are those of the call");
  t.match(wire(a, { ...KEEP, omitBody: true }), /Content-Length: 5\r\n\r\n$/, "HEAD: the length, no body");
});

t.test("a response that is not frozen is serialized as it is at each call", async (t) => {
  const mutable = { status: 200, headers: { "Content-Type": "text/plain" }, body: "one" };
  t.ok(wire(mutable).endsWith("\r\n\r\none"));
  mutable.body = "two";
  t.ok(wire(mutable).endsWith("\r\n\r\ntwo"));
  // Between two writes of the same mutable object, a frozen one is remembered: the mutable one still is not.
  t.ok(wire(frozen("three")).endsWith("three"));
  mutable.body = "four";
  t.ok(wire(mutable).endsWith("\r\n\r\nfour"));
});
