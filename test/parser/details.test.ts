// The detail of a refusal is what a client's author reads to learn what to
// change (docs/protocol.md, Protocol errors), so it must be true of the bytes
// sent: it names what was found, where the rule it breaks is written, and the
// fix. The case table (cases.test.ts) checks codes and statuses; these check
// the words, for refusals whose first wording said something false or
// nothing useful about the input. Each is checked whole and one byte at a
// time: a detail, like the code, does not depend on how the input was cut.

import t from "tap";
import type { ProtocolErrorCode } from "../../src/http/parse/errors.js";
import { bytes, errorOf, feedBytewise, feedWhole, limitsWith } from "./fixtures/helpers.js";
import type { ParserLimits } from "../../src/http/parse/parser.js";

const POST = "POST / HTTP/1.1\r\nHost: h\r\n";
const CHUNKED = `${POST}Transfer-Encoding: chunked\r\n\r\n`;

interface Wording {
  readonly name: string;
  readonly raw: string;
  readonly limits?: Partial<ParserLimits>;
  readonly code: ProtocolErrorCode;
  /** What the detail must say. */
  readonly says: RegExp;
  /** What it must not say: the false reading the input invites. */
  readonly not?: RegExp;
}

const WORDINGS: readonly Wording[] = [
  {
    name: "RFC 9112 §7.1: 0x5 is a malformed chunk size, not a chunk extension",
    raw: `${CHUNKED}0x5\r\nhello\r\n0\r\n\r\n`,
    code: "INVALID_CHUNK_SIZE",
    says: /^Unexpected "x" \(0x78\) in a chunk size \(RFC 9112 §7\.1\)/,
    not: /extension/,
  },
  {
    name: "RFC 9110 §8.6: a digit after the whitespace that ends Content-Length's digits is not called a non-digit",
    raw: `${POST}Content-Length: 5 5\r\n\r\nhello`,
    code: "INVALID_CONTENT_LENGTH",
    says: /^Content-Length holds "5" \(0x35\) after the whitespace that ends its digits \(RFC 9110 §8\.6/,
    not: /where a decimal digit belongs/,
  },
  {
    name: "RFC 9112 §3: a long method, not the short target being read at the limit, is blamed",
    raw: `${"M".repeat(24)} /${"a".repeat(20)} HTTP/1.1\r\nHost: h\r\n\r\n`,
    limits: { maxRequestLineBytes: 32 },
    code: "REQUEST_LINE_TOO_LONG",
    says: /^The request line is longer than 32 bytes/,
    not: /target is longer/,
  },
  {
    name: "RFC 9110 §4.2.4: userinfo in an absolute-form target is named",
    raw: "GET http://user@example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n",
    code: "INVALID_TARGET",
    says: /userinfo/,
    not: /neither a path starting with "\/" nor an http\(s\) URI/,
  },
  {
    name: "RFC 3986 §3.2.2: the byte that breaks an absolute-form authority is named",
    raw: "GET http://a]b/ HTTP/1.1\r\nHost: x\r\n\r\n",
    code: "INVALID_TARGET",
    says: /^Unexpected "\]" \(0x5d\) in the authority \(host\[:port\]\) of the target/,
  },
  {
    name: "RFC 9110 §4.2.1: an absolute-form target without a host says so",
    raw: "GET http:///a HTTP/1.1\r\nHost: x\r\n\r\n",
    code: "INVALID_TARGET",
    says: /has no host/,
  },
  {
    name: "RFC 9110 §10.1.1: of a list of expectations, the one not met is named",
    raw: `${POST}Expect: 100-continue, something-else\r\nContent-Length: 2\r\n\r\nhi`,
    code: "EXPECTATION_FAILED",
    says: /^The request expects "something-else" \(RFC 9110 §10\.1\.1\)/,
  },
  {
    name: "RFC 9112 §7.1: a parameter on chunked is named as such, not as chunked missing from the end",
    raw: `${POST}Transfer-Encoding: chunked;a=b\r\n\r\n0\r\n\r\n`,
    code: "INVALID_TRANSFER_ENCODING",
    says: /^The chunked coding takes no parameters: Transfer-Encoding: chunked;a=b \(RFC 9112 §6\.1, §7\.1\)/,
    not: /must be the final coding/,
  },
];

for (const w of WORDINGS) {
  t.test(w.name, (t) => {
    const limits = limitsWith(w.limits);
    const input = bytes(w.raw);
    const error = errorOf(feedWhole(input, limits).outcome);
    t.equal(error?.code, w.code, "the code");
    t.match(error?.detail ?? "", w.says, `the detail says what was found (${error?.detail ?? "no error"})`);
    if (w.not !== undefined) t.notMatch(error?.detail ?? "", w.not, "and nothing false");
    t.same(errorOf(feedBytewise(input, limits).outcome), error, "the same, one byte at a time");
    t.end();
  });
}
