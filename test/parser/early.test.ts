// A request is refused at the byte that rules out every valid message, not
// at the end of its line: a client that never sends the CRLF is answered at
// once instead of when the headers timeout runs out. Each prefix below stops
// short of its line's end; it must already be an error, the same one however
// the prefix is cut, and the same one the whole line gets.

import t from "tap";
import type { ProtocolErrorCode } from "../../src/http/parse/errors.js";
import { bytes, errorOf, feedAt, feedBytewise, feedWhole, limitsWith } from "./fixtures/helpers.js";

const HOST = "Host: h\r\n";
const POST = `POST / HTTP/1.1\r\n${HOST}`;

const PREFIXES: readonly { name: string; raw: string; code: ProtocolErrorCode; rest: string }[] = [
  { name: "RFC 9110 §15.6.6: HTTP/5.6 is known unserved once its eight bytes are in", raw: "GET / HTTP/5.6", code: "VERSION_NOT_SUPPORTED", rest: "\r\n\r\n" },
  { name: "RFC 9112 §2.3: a version that is not HTTP/", raw: "GET / HTTX", code: "INVALID_VERSION", rest: "/1.1\r\n\r\n" },
  { name: "RFC 9112 §3: a NUL in the method", raw: "GE\x00", code: "INVALID_METHOD", rest: "T / HTTP/1.1\r\n\r\n" },
  { name: "RFC 9112 §3.2: a DEL in the target", raw: "GET /a\x7f", code: "INVALID_TARGET", rest: " HTTP/1.1\r\n\r\n" },
  { name: "RFC 9112 §3: a space in the target", raw: "GET /a b", code: "INVALID_REQUEST_LINE", rest: " HTTP/1.1\r\n\r\n" },
  { name: "RFC 9112 §2.2: the first header line starts with a space", raw: `GET / HTTP/1.1\r\n `, code: "OBS_FOLD", rest: `${HOST}\r\n` },
  { name: "RFC 9112 §5.1: whitespace before the colon", raw: `GET / HTTP/1.1\r\nHost `, code: "WHITESPACE_BEFORE_COLON", rest: ": h\r\n\r\n" },
  { name: "RFC 9110 §5.5: a NUL in a field value", raw: `GET / HTTP/1.1\r\n${HOST}X: a\x00`, code: "INVALID_FIELD_VALUE", rest: "\r\n\r\n" },
  { name: "RFC 9110 §8.6: a Content-Length of 25 digits", raw: `${POST}Content-Length: ${"9".repeat(25)}`, code: "CONTENT_TOO_LARGE", rest: "\r\n\r\n" },
  { name: "RFC 9110 §8.6: a letter in Content-Length", raw: `${POST}Content-Length: 1x`, code: "INVALID_CONTENT_LENGTH", rest: "\r\n\r\n" },
  { name: "RFC 9110 §8.6: a Content-Length list", raw: `${POST}Content-Length: 5,`, code: "REPEATED_CONTENT_LENGTH", rest: " 5\r\n\r\nhello" },
  { name: "RFC 9110 §8.6: a second Content-Length line", raw: `${POST}Content-Length: 5\r\nContent-length:`, code: "REPEATED_CONTENT_LENGTH", rest: " 5\r\n\r\nhello" },
  {
    name: "RFC 6585 §5: the first byte of field line 101",
    raw: `GET / HTTP/1.1\r\n${HOST}${"X: y\r\n".repeat(99)}Z`,
    code: "TOO_MANY_HEADERS",
    rest: ": z\r\n\r\n",
  },
];

for (const p of PREFIXES) {
  t.test(p.name, (t) => {
    const limits = limitsWith({});
    const prefix = bytes(p.raw);
    const whole = feedWhole(prefix, limits);
    const error = errorOf(whole.outcome);
    t.equal(error?.code, p.code, `refused before the line ends (${error?.detail ?? "no error yet"})`);
    const expected = JSON.stringify(whole.outcome);
    t.equal(JSON.stringify(feedBytewise(prefix, limits).outcome), expected, "the same, one byte at a time");
    for (let at = 1; at < prefix.length; at++) {
      const got = JSON.stringify(feedAt(prefix, [at], limits).outcome);
      if (got !== expected) t.fail(`split at ${at}: ${got}`);
    }
    // The complete message gets the very same verdict: the line's end changes nothing.
    const complete = feedWhole(bytes(p.raw + p.rest), limits);
    t.same(errorOf(complete.outcome), error, "the whole message is refused the same way");
    t.end();
  });
}

t.test("a line that is still valid so far waits for more bytes", (t) => {
  const limits = limitsWith({});
  for (const raw of ["GET / HTTP/1.", "GET / HTTP/1.1", "GET /a?b=c HT", `${POST}Content-Length: 00000000000000000000001`, `GET / HTTP/1.1\r\nX-Y: a b\tc`]) {
    const r = feedWhole(bytes(raw), limits);
    t.equal(errorOf(r.outcome), undefined, `no verdict yet: ${JSON.stringify(raw)}`);
  }
  t.end();
});
