// The parser's limits are checked when it is made: each is a whole number of
// bytes or fields, and the body limit stays below what the scanner can tell
// apart, so that "larger than any body this server takes" is true whatever
// limit a library user sets.

import t from "tap";
import { checkLimits, MAX_BODY_LIMIT } from "../../src/http/parse/limits.js";
import { bytes, errorOf, feedWhole, limitsWith } from "./fixtures/helpers.js";

const COUNTED = ["maxRequestLineBytes", "maxHeaderBytes", "maxHeaderCount", "maxBodyBytes", "maxChunkExtensionBytes"] as const;

t.test("every counted limit is a whole number, 0 or more", async (t) => {
  for (const name of COUNTED) {
    for (const bad of [1.5, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      t.throws(() => checkLimits(limitsWith({ [name]: bad })), { name: "RangeError", message: new RegExp(`${name} must be a whole number`) }, `${name} = ${bad}`);
    }
    t.doesNotThrow(() => checkLimits(limitsWith({ [name]: 0 })), `${name} = 0`);
  }
});

t.test("the body limit is at most MAX_BODY_LIMIT, and the refusal names it", async (t) => {
  t.equal(MAX_BODY_LIMIT, 16 ** 12 - 1, "a chunk size of twelve hex digits");
  t.equal(checkLimits(limitsWith({ maxBodyBytes: MAX_BODY_LIMIT })).maxBodyBytes, MAX_BODY_LIMIT, "the largest is taken");
  t.throws(() => checkLimits(limitsWith({ maxBodyBytes: MAX_BODY_LIMIT + 1 })), { name: "RangeError", message: new RegExp(`maxBodyBytes must be at most ${MAX_BODY_LIMIT}`) });
  t.throws(() => checkLimits(limitsWith({ maxBodyBytes: 2e15 })), RangeError, "2e15: the scanner would call bodies within it too large");
});

t.test("at the largest body limit, what is refused as too large is larger than the limit, and what fits is read", async (t) => {
  const limits = limitsWith({ maxBodyBytes: MAX_BODY_LIMIT });
  const post = (fields: string) => `POST / HTTP/1.1\r\nHost: h\r\n${fields}\r\n`;

  const chunkAtLimit = feedWhole(bytes(post("Transfer-Encoding: chunked\r\n") + `${MAX_BODY_LIMIT.toString(16)}\r\n`), limits);
  t.equal(errorOf(chunkAtLimit.outcome), undefined, "a chunk of exactly the limit is taken; its data is awaited");
  const chunkPast = feedWhole(bytes(post("Transfer-Encoding: chunked\r\n") + `${(MAX_BODY_LIMIT + 1).toString(16)}\r\n`), limits);
  t.equal(errorOf(chunkPast.outcome)?.code, "CONTENT_TOO_LARGE", "a chunk one byte past it is refused");

  const lengthAtLimit = feedWhole(bytes(post(`Content-Length: ${MAX_BODY_LIMIT}\r\n`)), limits);
  t.equal(errorOf(lengthAtLimit.outcome), undefined, "a Content-Length of exactly the limit is taken; its body is awaited");
  for (const length of [MAX_BODY_LIMIT + 1, 10 ** 15]) {
    const refused = feedWhole(bytes(post(`Content-Length: ${length}\r\n`)), limits);
    t.equal(errorOf(refused.outcome)?.code, "CONTENT_TOO_LARGE", `Content-Length ${length} is refused`);
  }
});
