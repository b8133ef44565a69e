// The grammar's refusals, read from the table itself (src/http/parse/line-scan.ts):
// every refusing cell and every refusing line end names a refusal declared
// beside its rule, each declared refusal is used, and each reports a code of
// the protocol error table with words made from the bytes. Then a request per
// refusal, through the parser, to show the code and words arrive as declared.

import t from "tap";
import { AT_END, CELL_REFUSED, GRAMMAR, PHASE_COUNT, refusals } from "../../src/http/parse/line-scan.js";
import { PROTOCOL_ERRORS } from "../../src/http/parse/errors.js";
import { DEFAULT_LIMITS } from "../../src/http/parse/parser.js";
import { inject } from "../../src/http/connection/inject.js";
import { splitResponses } from "../helpers/wire.js";

t.test("every refusal the table holds is declared, and every declared one is used or called by name", async (t) => {
  const declared = new Map(refusals().map((r) => [r.r, r.code]));
  const used = new Set<number>();
  for (let cell = 0; cell < GRAMMAR.length; cell++) {
    const value = GRAMMAR[cell]!;
    if (value < CELL_REFUSED) continue;
    const r = value - CELL_REFUSED;
    t.ok(declared.has(r), `cell ${cell} (phase ${Math.floor(cell / (GRAMMAR.length / PHASE_COUNT))}) refuses with a declared refusal`);
    used.add(r);
  }
  for (let phase = 0; phase < PHASE_COUNT; phase++) {
    const r = AT_END[phase]!;
    if (r === 0) continue;
    t.ok(declared.has(r), `the line's end in phase ${phase} refuses with a declared refusal`);
    used.add(r);
  }
  for (const { r, code } of refusals()) t.ok(code in PROTOCOL_ERRORS, `refusal ${r} reports ${code}, which errors.ts defines`);
  t.ok(used.size >= 20, `the table itself refuses in ${used.size} ways`);
});

const CASES: readonly (readonly [string, string, RegExp])[] = [
  [" GET / HTTP/1.1\r\n", "INVALID_REQUEST_LINE", /starts with whitespace/],
  ["G@T / HTTP/1.1\r\n", "INVALID_METHOD", /Unexpected "@" \(0x40\) in the method/],
  ["GET\t/ HTTP/1.1\r\n", "INVALID_REQUEST_LINE", /A tab separates the method/],
  ["GET  / HTTP/1.1\r\n", "INVALID_REQUEST_LINE", /empty or preceded by more than one space/],
  ["GET /a\"b HTTP/1.1\r\n", "INVALID_TARGET", /Unexpected """ \(0x22\) in the request target/],
  ["GET\r\n", "INVALID_REQUEST_LINE", /ends after the method/],
  ["GET /\r\n", "INVALID_REQUEST_LINE", /no HTTP version/],
  ["GET /  HTTP/1.1\r\n", "INVALID_REQUEST_LINE", /More than one space before the HTTP version/],
  ["GET / x HTTP/1.1\r\n", "INVALID_REQUEST_LINE", /more than three space-separated parts/],
  ["GET / HTTP/1.x\r\n", "INVALID_VERSION", /"HTTP\/1\.x" is not an HTTP version/],
  ["GET / HTTP/2.0\r\n", "VERSION_NOT_SUPPORTED", /asks for HTTP\/2\.0/],
  ["GET / HTTP/1.1\r\nHost: x\r\n folded\r\n", "OBS_FOLD", /starts with whitespace/],
  ["GET / HTTP/1.1\r\n: x\r\n", "INVALID_FIELD_NAME", /empty field name/],
  ["GET / HTTP/1.1\r\nHo(st: x\r\n", "INVALID_FIELD_NAME", /Unexpected "\(" \(0x28\) in a field name/],
  ["GET / HTTP/1.1\r\nHost : x\r\n", "WHITESPACE_BEFORE_COLON", /A space follows "Host"/],
  ["GET / HTTP/1.1\r\nHost\r\n", "MISSING_COLON", /"Host" has no colon/],
  ["GET / HTTP/1.1\r\nX-A: a\u0001b\r\n", "INVALID_FIELD_VALUE", /in the value of "X-A"/],
  ["POST / HTTP/1.1\r\nHost: x\r\nContent-Length:\r\n", "INVALID_CONTENT_LENGTH", /Content-Length is empty/],
  ["POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n", "INVALID_CONTENT_LENGTH", /where a decimal digit belongs/],
  ["POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1, 1\r\n", "REPEATED_CONTENT_LENGTH", /a list of values/],
  ["POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 12345678901234567\r\n", "CONTENT_TOO_LARGE", /more than \d+ digits/],
  ["POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n\r\n", "INVALID_CHUNK_SIZE", /chunk-size line is empty/],
  ["POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5g\r\n", "INVALID_CHUNK_SIZE", /Unexpected "g" \(0x67\) in a chunk size/],
  ["POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;=\r\n", "INVALID_CHUNK_EXTENSION", /in a chunk extension/],
  ["POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n", "INVALID_CHUNK_END", /Expected CR LF after the chunk data, found "b"/],
  ["GET / HTTP/1.1\rX", "BARE_CR", /A CR is not followed by LF/],
  ["GET / HTTP/1.1\nHost: x\n\n", "BARE_LF", /LF alone/],
  [`GET /${"a".repeat(DEFAULT_LIMITS.maxRequestLineBytes)} HTTP/1.1\r\n`, "URI_TOO_LONG", /request target is longer/],
  [`${"G".repeat(DEFAULT_LIMITS.maxRequestLineBytes + 10)} / HTTP/1.1\r\n`, "REQUEST_LINE_TOO_LONG", /request line is longer than/],
];

t.test("each refusal, through the connection: its code, status and words as declared", async (t) => {
  const router = { handle: () => ({ status: 204 }) };
  for (const [bytes, code, words] of CASES) {
    const [r] = splitResponses((await inject(router, bytes)).output);
    const body = JSON.parse(r!.body) as { type: string; detail: string };
    t.equal(body.type, `/problems/${code.toLowerCase().replaceAll("_", "-")}`, `${JSON.stringify(bytes.slice(0, 40))}: ${code}`);
    t.equal(r!.status, PROTOCOL_ERRORS[code as keyof typeof PROTOCOL_ERRORS].status);
    t.match(body.detail, words);
  }
});
