// The request-smuggling corpus: ambiguous framings, each with the requests a
// strict RFC 9112 reading hands the application and the error it answers.
// Shared by test/hardening/smuggling.test.ts (straight to the server, whole
// and split) and test/hardening/proxies.test.ts (through nginx and HAProxy).

import type { ProtocolErrorCode } from "../../src/http/parse/errors.js";


/** The request a mis-framing front end or back end would see. */
export const SMUG = "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n";
/** The honest next request on the connection. */
export const SECOND = "GET /second HTTP/1.1\r\nHost: x\r\n\r\n";
const hex = (n: number) => n.toString(16);
/** SMUG as the data of one chunk, then the last chunk: a chunked body whose content is SMUG. */
const SMUG_IN_CHUNK = `${hex(SMUG.length)}\r\n${SMUG}\r\n0\r\n\r\n`;
/** A chunked body that ends at once, followed by SMUG: SMUG is a request only to a chunked reader. */
const SMUG_AFTER_LAST_CHUNK = `0\r\n\r\n${SMUG}`;

const post = (...fieldLines: string[]) => `POST /first HTTP/1.1\r\nHost: x\r\n${fieldLines.map((l) => `${l}\r\n`).join("")}\r\n`;

export interface Seen {
  readonly target: string;
  readonly body: string;
}

export interface SmuggleCase {
  readonly name: string;
  /** The ambiguous request (SECOND is sent after it). */
  readonly first: string;
  /** Requests the handler must be handed, in order (target and body). */
  readonly handled: readonly Seen[];
  /** A protocol error answered after them: status and the parser's code. */
  readonly error?: { readonly status: number; readonly code: ProtocolErrorCode };
  /** Interim responses expected first (100 Continue). */
  readonly interim?: number;
  /** Field names the handler must not see on the first request. */
  readonly absentFields?: readonly string[];
}

const first = (body = ""): Seen => ({ target: "/first", body });
const second: Seen = { target: "/second", body: "" };
export const CASES: SmuggleCase[] = [];
const refused = (name: string, firstBytes: string, status: number, code: ProtocolErrorCode, handled: readonly Seen[] = []) =>
  CASES.push({ name, first: firstBytes, handled, error: { status, code } });
const served = (name: string, firstBytes: string, handled: readonly Seen[], extra: Partial<SmuggleCase> = {}) =>
  CASES.push({ name, first: firstBytes, handled, ...extra });

// ---- CL.TE and TE.CL: both framings in one head (RFC 9112 §6.3 item 3: a server MAY reject; it does) ----
refused("CL.TE: Content-Length covers a chunked body and the request after it", post(`Content-Length: ${SMUG_AFTER_LAST_CHUNK.length}`, "Transfer-Encoding: chunked") + SMUG_AFTER_LAST_CHUNK, 400, "CONTENT_LENGTH_WITH_TRANSFER_ENCODING");
refused("TE.CL: a short Content-Length inside a chunked body", post("Transfer-Encoding: chunked", "Content-Length: 4") + SMUG_IN_CHUNK, 400, "CONTENT_LENGTH_WITH_TRANSFER_ENCODING");
refused("CL.TE with Content-Length: 0", post("Content-Length: 0", "Transfer-Encoding: chunked") + SMUG_IN_CHUNK, 400, "CONTENT_LENGTH_WITH_TRANSFER_ENCODING");

// ---- TE.TE: obfuscated Transfer-Encoding, alone and with Content-Length ----
const OBFUSCATED_TE: readonly { readonly line: string; readonly status?: number; readonly code?: ProtocolErrorCode }[] = [
  { line: "Transfer-Encoding: xchunked", status: 501, code: "CHUNKED_NOT_FINAL" },
  { line: "Transfer-Encoding: chunkedx", status: 501, code: "CHUNKED_NOT_FINAL" },
  { line: "Transfer-Encoding: chunk", status: 501, code: "CHUNKED_NOT_FINAL" },
  { line: "Transfer-Encoding:  chunked" },
  { line: "Transfer-Encoding: chunked " },
  { line: "Transfer-Encoding: chunked\t" },
  { line: "Transfer-Encoding: \tchunked\t " },
  { line: "Transfer-Encoding:\tchunked" },
  { line: "Transfer-Encoding:chunked" },
  { line: "Transfer-Encoding: CHUNKED" },
  { line: "transfer-encoding: ChUnKeD" },
  { line: "Transfer-Encoding: chunked, identity", status: 501, code: "CHUNKED_NOT_FINAL" },
  { line: "Transfer-Encoding: identity, chunked", status: 501, code: "UNSUPPORTED_TRANSFER_CODING" },
  { line: "Transfer-Encoding: gzip, chunked", status: 501, code: "UNSUPPORTED_TRANSFER_CODING" },
  { line: "Transfer-Encoding: chunked, chunked", status: 400, code: "CHUNKED_TWICE" },
  { line: "Transfer-Encoding: chunked\r\nTransfer-Encoding: identity", status: 501, code: "CHUNKED_NOT_FINAL" },
  { line: "Transfer-Encoding: identity\r\nTransfer-Encoding: chunked", status: 501, code: "UNSUPPORTED_TRANSFER_CODING" },
  { line: "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked", status: 400, code: "CHUNKED_TWICE" },
  { line: "Transfer-Encoding: chunked\r\nTransfer-Encoding: x", status: 501, code: "CHUNKED_NOT_FINAL" },
  { line: "Transfer-Encoding: \r\nTransfer-Encoding: chunked" },
  { line: "Transfer-Encoding: chunked;q=1", status: 400, code: "INVALID_TRANSFER_ENCODING" },
  { line: 'Transfer-Encoding: "chunked"', status: 400, code: "INVALID_TRANSFER_ENCODING" },
  { line: "Transfer-Encoding: ,", status: 400, code: "INVALID_TRANSFER_ENCODING" },
  { line: "Transfer-Encoding: chunked\x00", status: 400, code: "INVALID_FIELD_VALUE" },
  { line: "Transfer-Encoding: chu\x00nked", status: 400, code: "INVALID_FIELD_VALUE" },
  { line: "Transfer-Encoding: \x0bchunked", status: 400, code: "INVALID_FIELD_VALUE" },
  { line: "Transfer-Encoding: chunked\x0c", status: 400, code: "INVALID_FIELD_VALUE" },
  // NBSP is obs-text, legal in a value but not whitespace (RFC 9110 §5.6.3): llhttp refuses these, and so must we.
  { line: "Transfer-Encoding: chunked\xa0", status: 400, code: "INVALID_TRANSFER_ENCODING" },
  { line: "Transfer-Encoding: \xa0chunked", status: 400, code: "INVALID_TRANSFER_ENCODING" },
  { line: "Transfer-Encoding : chunked", status: 400, code: "WHITESPACE_BEFORE_COLON" },
  { line: "Transfer-Encoding\t: chunked", status: 400, code: "WHITESPACE_BEFORE_COLON" },
  { line: " Transfer-Encoding: chunked", status: 400, code: "OBS_FOLD" },
  { line: "Transfer-Encoding:\r\n chunked", status: 400, code: "OBS_FOLD" },
  { line: "X-Folded: y\r\n Transfer-Encoding: chunked", status: 400, code: "OBS_FOLD" },
  { line: "Transfer-Encoding: chunked\r\n\tidentity", status: 400, code: "OBS_FOLD" },
  { line: "Transfer-Encoding\x00: chunked", status: 400, code: "INVALID_FIELD_NAME" },
  { line: "Transfer\rEncoding: chunked", status: 400, code: "BARE_CR" },
  { line: "Transfer-Encoding: chunked\rX: y", status: 400, code: "BARE_CR" },
  { line: "Transfer-Encoding: chunked\nX: y", status: 400, code: "BARE_LF" },
  { line: "X: y\nTransfer-Encoding: chunked", status: 400, code: "BARE_LF" },
];
for (const te of OBFUSCATED_TE) {
  const shown = JSON.stringify(te.line);
  if (te.code === undefined) {
    // Valid per RFC 9110 §5.6.3 (OWS), §7.1 (case-insensitive codings), §5.6.1 (empty list elements): chunked.
    served(`TE.TE ${shown} is chunked: the inner request stays body`, post(te.line) + SMUG_IN_CHUNK, [first(SMUG), second]);
  } else {
    refused(`TE.TE ${shown} alone is refused`, post(te.line) + SMUG_AFTER_LAST_CHUNK, te.status!, te.code);
  }
  // With Content-Length too, it is refused whatever the coding says: a head error first, else the framing conflict.
  const headError = te.code !== undefined && !["CHUNKED_NOT_FINAL", "UNSUPPORTED_TRANSFER_CODING", "CHUNKED_TWICE", "INVALID_TRANSFER_ENCODING"].includes(te.code);
  refused(
    `TE.TE ${shown} with Content-Length is refused`,
    post(`Content-Length: ${SMUG_AFTER_LAST_CHUNK.length}`, te.line) + SMUG_AFTER_LAST_CHUNK,
    headError ? te.status! : 400,
    headError ? te.code! : "CONTENT_LENGTH_WITH_TRANSFER_ENCODING",
  );
}
// A field that is not Transfer-Encoding does not frame the body: no body, and the chunk lines are the next "request".
served('"Transfer_Encoding: chunked" is another field: no body, and "0" is no request', post("Transfer_Encoding: chunked") + SMUG_AFTER_LAST_CHUNK, [first()], {
  error: { status: 400, code: "INVALID_REQUEST_LINE" },
});
refused("Transfer-Encoding in HTTP/1.0", `POST /first HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n${SMUG_AFTER_LAST_CHUNK}`, 400, "TRANSFER_ENCODING_IN_HTTP10");

// ---- Content-Length ----
refused("two Content-Length lines with different values", post("Content-Length: 0", `Content-Length: ${SMUG.length}`) + SMUG, 400, "REPEATED_CONTENT_LENGTH");
refused("two Content-Length lines, the larger first", post(`Content-Length: ${SMUG.length}`, "Content-Length: 0") + SMUG, 400, "REPEATED_CONTENT_LENGTH");
refused("a Content-Length list with different values", post(`Content-Length: ${SMUG.length}, 0`) + SMUG, 400, "REPEATED_CONTENT_LENGTH");
// RFC 9110 §8.6 lets a recipient take equal repeats as one value or refuse them; refusing leaves a proxy nothing to read differently.
refused("two Content-Length lines with the same value", post(`Content-Length: ${SMUG.length}`, `Content-Length: ${SMUG.length}`) + SMUG, 400, "REPEATED_CONTENT_LENGTH");
refused("a Content-Length list of the same value", post(`Content-Length: ${SMUG.length}, ${SMUG.length}`) + SMUG, 400, "REPEATED_CONTENT_LENGTH");
served("Content-Length with leading zeros", post(`Content-Length: 000000000000000000000${SMUG.length}`) + SMUG, [first(SMUG), second]);
served("Content-Length with OWS around it", post(`Content-Length:\t ${SMUG.length} \t`) + SMUG, [first(SMUG), second]);
for (const value of [`+${SMUG.length}`, `0x${hex(SMUG.length)}`, `-${SMUG.length}`, `${SMUG.length}.0`, "3e1", `${SMUG.length} 0`, `"${SMUG.length}"`, "", `${SMUG.length};`, `0${SMUG.length}\x00`]) {
  const code: ProtocolErrorCode = value.includes("\x00") ? "INVALID_FIELD_VALUE" : "INVALID_CONTENT_LENGTH";
  refused(`Content-Length: ${JSON.stringify(value)}`, post(`Content-Length: ${value}`) + SMUG, 400, code);
}
refused("Content-Length of 2^64 + 35 (wraps to 35 in 64-bit arithmetic)", post("Content-Length: 18446744073709551651") + SMUG, 413, "CONTENT_TOO_LARGE");
refused("Content-Length of 2^32 + 35", post("Content-Length: 4294967331") + SMUG, 413, "CONTENT_TOO_LARGE");
refused("Content-Length with whitespace before the colon", post(`Content-Length : ${SMUG.length}`) + SMUG, 400, "WHITESPACE_BEFORE_COLON");
refused("Content-Length folded onto a second line (the empty value is refused first)", post("Content-Length:", ` ${SMUG.length}`) + SMUG, 400, "INVALID_CONTENT_LENGTH");
refused("a folded line after Content-Length", post("Content-Length: 0", ` ${SMUG.length}`) + SMUG, 400, "OBS_FOLD");

// ---- Bare CR and bare LF in the head ----
refused("bare LF ends a field line before Content-Length", `POST /first HTTP/1.1\r\nHost: x\nContent-Length: ${SMUG.length}\r\n\r\n${SMUG}`, 400, "BARE_LF");
refused("bare CR inside a field line hides Content-Length", `POST /first HTTP/1.1\r\nHost: x\r\nX: a\rContent-Length: ${SMUG.length}\r\n\r\n${SMUG}`, 400, "BARE_CR");
refused("bare LF ends the request line", `POST /first HTTP/1.1\nHost: x\r\nContent-Length: ${SMUG.length}\r\n\r\n${SMUG}`, 400, "BARE_LF");
refused("bare LF as the empty line", `POST /first HTTP/1.1\r\nHost: x\r\nContent-Length: ${SMUG.length}\r\n\n${SMUG}`, 400, "BARE_LF");
refused("bare CR as the empty line", `GET /first HTTP/1.1\r\nHost: x\r\n\r${SMUG}`, 400, "BARE_CR");
refused("bare CR in the request line", `GET /first\rHTTP/1.1\r\nHost: x\r\n\r\n${SMUG}`, 400, "BARE_CR");

// ---- Chunk lines ----
refused("bare LF ends a chunk-size line", post("Transfer-Encoding: chunked") + `${hex(SMUG.length)}\n${SMUG}\r\n0\r\n\r\n`, 400, "BARE_LF");
refused("bare CR ends a chunk-size line", post("Transfer-Encoding: chunked") + `${hex(SMUG.length)}\r${SMUG}\r\n0\r\n\r\n`, 400, "BARE_CR");
refused("bare LF after chunk data", post("Transfer-Encoding: chunked") + `${hex(SMUG.length)}\r\n${SMUG}\n0\r\n\r\n`, 400, "INVALID_CHUNK_END");
refused("bare CR after chunk data", post("Transfer-Encoding: chunked") + `${hex(SMUG.length)}\r\n${SMUG}\r0\r\n\r\n`, 400, "BARE_CR");
refused("chunk data longer than its size", post("Transfer-Encoding: chunked") + `5\r\nhello${SMUG}\r\n0\r\n\r\n`, 400, "INVALID_CHUNK_END");
refused("bare LF ends the last chunk", post("Transfer-Encoding: chunked") + `0\n\r\n${SMUG}`, 400, "BARE_LF");
refused("bare LF ends the trailer section", post("Transfer-Encoding: chunked") + `0\r\n\n${SMUG}`, 400, "BARE_LF");
refused("bare LF inside a chunk extension", post("Transfer-Encoding: chunked") + `${hex(SMUG.length)};a=b\n${SMUG}\r\n0\r\n\r\n`, 400, "BARE_LF");
refused("LF inside a quoted chunk extension", post("Transfer-Encoding: chunked") + `${hex(SMUG.length)};a="b\nc"\r\n${SMUG}\r\n0\r\n\r\n`, 400, "BARE_LF");
refused("chunk size ffffffffffffffffff (overflows 64 bits)", post("Transfer-Encoding: chunked") + `ffffffffffffffffff\r\n${SMUG}\r\n0\r\n\r\n`, 413, "CONTENT_TOO_LARGE");
refused("chunk size 2^64 + 0x23 (wraps to 0x23)", post("Transfer-Encoding: chunked") + `10000000000000023\r\n${SMUG}\r\n0\r\n\r\n`, 413, "CONTENT_TOO_LARGE");
refused("chunk size 2^32 + 0x23", post("Transfer-Encoding: chunked") + `100000023\r\n${SMUG}\r\n0\r\n\r\n`, 413, "CONTENT_TOO_LARGE");
refused("a negative chunk size", post("Transfer-Encoding: chunked") + `-${hex(SMUG.length)}\r\n${SMUG}\r\n0\r\n\r\n`, 400, "INVALID_CHUNK_SIZE");
refused("a chunk size with a sign", post("Transfer-Encoding: chunked") + `+${hex(SMUG.length)}\r\n${SMUG}\r\n0\r\n\r\n`, 400, "INVALID_CHUNK_SIZE");
refused("a chunk size with 0x", post("Transfer-Encoding: chunked") + `0x${hex(SMUG.length)}\r\n${SMUG}\r\n0\r\n\r\n`, 400, "INVALID_CHUNK_SIZE");
refused("whitespace before a chunk size", post("Transfer-Encoding: chunked") + ` ${hex(SMUG.length)}\r\n${SMUG}\r\n0\r\n\r\n`, 400, "INVALID_CHUNK_SIZE");
refused("whitespace after a chunk size", post("Transfer-Encoding: chunked") + `${hex(SMUG.length)} \r\n${SMUG}\r\n0\r\n\r\n`, 400, "INVALID_CHUNK_EXTENSION");
refused("an empty chunk-size line", post("Transfer-Encoding: chunked") + `\r\n${SMUG_AFTER_LAST_CHUNK}`, 400, "INVALID_CHUNK_SIZE");
served("a chunk size with many leading zeros", post("Transfer-Encoding: chunked") + `000000000000000000000000${hex(SMUG.length)}\r\n${SMUG}\r\n0\r\n\r\n`, [first(SMUG), second]);
served("chunk extensions, quoted and not", post("Transfer-Encoding: chunked") + `${hex(SMUG.length)} ; a=b ; c="d;e\\"f"\r\n${SMUG}\r\n0;last\r\n\r\n`, [first(SMUG), second]);

// ---- Trailers cannot reframe the message or the next one ----
served("a trailer that sets Content-Length is dropped", post("Transfer-Encoding: chunked") + `0\r\nContent-Length: ${SECOND.length}\r\n\r\n`, [first(), second], { absentFields: ["content-length"] });
served("a trailer that sets Transfer-Encoding is dropped", post("Transfer-Encoding: chunked") + "0\r\nTransfer-Encoding: chunked\r\n\r\n", [first(), second]);
served("trailers after data, one setting Host", post("Transfer-Encoding: chunked") + `${hex(SMUG.length)}\r\n${SMUG}\r\n0\r\nHost: evil\r\nContent-Length: 0\r\n\r\n`, [first(SMUG), second]);
refused("a folded trailer", post("Transfer-Encoding: chunked") + "0\r\nX: y\r\n Content-Length: 5\r\n\r\n", 400, "OBS_FOLD");
refused("a trailer with whitespace before its colon", post("Transfer-Encoding: chunked") + "0\r\nContent-Length : 5\r\n\r\n", 400, "WHITESPACE_BEFORE_COLON");

// ---- Bodies on methods that rarely carry one ----
served("GET with a body and Content-Length: the body is read, not parsed as a request", `GET /first HTTP/1.1\r\nHost: x\r\nContent-Length: ${SMUG.length}\r\n\r\n${SMUG}`, [
  { target: "/first", body: SMUG },
  second,
]);
served("GET with a chunked body", `GET /first HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${SMUG_IN_CHUNK}`, [{ target: "/first", body: SMUG }, second]);
served("OPTIONS with a body", `OPTIONS /first HTTP/1.1\r\nHost: x\r\nContent-Length: ${SMUG.length}\r\n\r\n${SMUG}`, [{ target: "/first", body: SMUG }, second]);

// ---- Nothing is read after a request that closes the connection (RFC 9112 §9.6) ----
served("a request after Connection: close is never handled", `GET /first HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n${SMUG}`, [first()]);
served("Connection: keep-alive, close is close", `GET /first HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, close\r\n\r\n${SMUG}`, [first()]);
served("Connection: close on a second Connection line", `GET /first HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\nConnection: CLOSE\r\n\r\n${SMUG}`, [first()]);
served("a body then Connection: close", post("Connection: close", `Content-Length: ${SMUG.length}`) + SMUG + SMUG, [first(SMUG)]);
served("HTTP/1.0 without keep-alive closes", `GET /first HTTP/1.0\r\n\r\n${SMUG}`, [first()]);
served("HTTP/1.0 with keep-alive stays open", `GET /first HTTP/1.0\r\nConnection: keep-alive\r\n\r\n`, [first(), second]);

// ---- Refused before the body: the body is never parsed as requests ----
refused("a Content-Length past the body limit", post("Content-Length: 2000000") + SMUG, 413, "CONTENT_TOO_LARGE");
refused("an unknown expectation", post("Expect: x-smuggle", `Content-Length: ${SMUG.length}`) + SMUG, 417, "EXPECTATION_FAILED");
refused("no Host with a body", `POST /first HTTP/1.1\r\nContent-Length: ${SMUG.length}\r\n\r\n${SMUG}`, 400, "MISSING_HOST");
refused("two Host fields with a body", post("Host: y", `Content-Length: ${SMUG.length}`) + SMUG, 400, "DUPLICATE_HOST");
served("Expect: 100-continue with the body sent at once", post("Expect: 100-continue", `Content-Length: ${SMUG.length}`) + SMUG, [first(SMUG), second], { interim: 1 });

// ---- After an accepted request, a refused one: the first is answered, nothing after the error ----
served("a valid request, then CL.TE", `GET /first HTTP/1.1\r\nHost: x\r\n\r\n` + post(`Content-Length: ${SMUG_AFTER_LAST_CHUNK.length}`, "Transfer-Encoding: chunked").replace("/first", "/third") + SMUG_AFTER_LAST_CHUNK, [first()], {
  error: { status: 400, code: "CONTENT_LENGTH_WITH_TRANSFER_ENCODING" },
});
served("a valid chunked request, then a bare LF", post("Transfer-Encoding: chunked") + SMUG_IN_CHUNK + `GET /third HTTP/1.1\r\nHost: x\n\r\n`, [first(SMUG)], {
  error: { status: 400, code: "BARE_LF" },
});
