// Head semantics: from the field lines of a request to what they decide,
// the body's framing (RFC 9112 §6.3) and whether the connection persists
// (RFC 9112 §9.3). The bytes of each line were checked by the line scan;
// here each field that frames or routes the message is read, and the head
// is judged whole at its empty line.

import { isToken } from "./byte-classes.js";
import { latin1 } from "./latin1.js";
import type { ProtocolErrorCode } from "./errors.js";
import { describe, type LineError } from "./line-scan.js";
import { fieldListElements } from "../message/field-lists.js";
import { hostError } from "./host.js";
import type { Framing, Request } from "../message/request.js";
import type { RequestLine } from "./request-line.js";

/** What the head's fields have said so far; reset for each message. */
export interface HeadFields {
  /**
   * Flattened lower-cased name, value, name, value... in arrival order: the
   * first `count` entries of an array kept from head to head, so that a head
   * costs one array of its exact size (headOf), not one grown field by field.
   */
  readonly fields: string[];
  count: number;
  host: string;
  /** -1 until a Content-Length arrives. */
  contentLength: number;
  /** Every Transfer-Encoding line, joined into one list (RFC 9110 §5.3). */
  transferEncoding: string | null;
  connectionClose: boolean;
  connectionKeepAlive: boolean;
  expect: string | null;
}

export function newHeadFields(): HeadFields {
  return {
    fields: [],
    count: 0,
    host: "",
    contentLength: -1,
    transferEncoding: null,
    connectionClose: false,
    connectionKeepAlive: false,
    expect: null,
  };
}

export function resetHeadFields(h: HeadFields): void {
  // The strings are the handed-on head's now; the scratch array lets go of them.
  for (let i = 0; i < h.count; i++) h.fields[i] = "";
  h.count = 0;
  h.host = "";
  h.contentLength = -1;
  h.transferEncoding = null;
  h.connectionClose = false;
  h.connectionKeepAlive = false;
  h.expect = null;
}

const NO_BODY: Framing = { kind: "none" };
const CHUNKED: Framing = { kind: "chunked" };

/**
 * Takes one header field, name already lower-cased (interned when common), value
 * buf[vs, ve) without the OWS around it. Returns an error, or null.
 */
export function readField(h: HeadFields, name: string, buf: Buffer, vs: number, ve: number): LineError | null {
  const value = vs === ve ? "" : latin1(buf, vs, ve);
  if (name === "host") {
    // RFC 9112 §3.2: a Host field with an invalid value MUST be answered with 400.
    const bad = hostError(buf, vs, ve);
    if (bad !== -1) return { code: "INVALID_HOST", what: `Unexpected ${bad < ve ? describe(buf[bad]) : "end of the value"} in the Host header`, at: bad };
  } else if (name === "connection") {
    // RFC 9110 §7.6.1: Connection = #connection-option, each a token. Anything
    // else (say "close\xA0") is refused, not guessed at: a proxy would not read it as close.
    for (const option of fieldListElements(value)) {
      if (!isToken(option)) return { code: "INVALID_CONNECTION", what: `Connection holds "${option.slice(0, 40)}", which is not a token`, at: vs };
    }
  }
  noteField(h, name, value);
  return null;
}

/** Takes one header field whose value readField found sound. */
function noteField(h: HeadFields, name: string, value: string): void {
  const fields = h.fields;
  const n = h.count;
  if (n < fields.length) {
    fields[n] = name;
    fields[n + 1] = value;
  } else fields.push(name, value);
  h.count = n + 2;
  switch (name) {
    case "host":
      h.host = value;
      return;
    case "content-length":
      // RFC 9110 §8.6: the scan let through only 1*DIGIT, at most 15 of them significant (LENGTH_* phases, line-scan.ts).
      h.contentLength = Number(value);
      return;
    case "transfer-encoding":
      h.transferEncoding = h.transferEncoding === null ? value : `${h.transferEncoding},${value}`;
      return;
    case "connection":
      for (const option of fieldListElements(value)) {
        const o = option.toLowerCase();
        if (o === "close") h.connectionClose = true;
        else if (o === "keep-alive") h.connectionKeepAlive = true;
      }
      return;
    case "expect":
      h.expect = h.expect === null ? value : `${h.expect}, ${value}`;
      return;
  }
}

export interface HeadVerdict {
  readonly framing: Framing;
  readonly keepAlive: boolean;
  readonly expectContinue: boolean;
}

/**
 * The empty line: judge the whole head's framing and persistence (its Host
 * fields were judged by the section's rules). An error's offset is the empty line's.
 */
export function judgeHead(h: HeadFields, minor: 0 | 1): HeadVerdict | { readonly code: ProtocolErrorCode; readonly what: string } {
  let framing: Framing = NO_BODY;
  if (h.transferEncoding !== null) {
    if (minor === 0) return { code: "TRANSFER_ENCODING_IN_HTTP10", what: `An HTTP/1.0 request carries Transfer-Encoding: ${h.transferEncoding.slice(0, 80)}` };
    if (h.contentLength !== -1) return { code: "CONTENT_LENGTH_WITH_TRANSFER_ENCODING", what: "The request carries both Transfer-Encoding and Content-Length" };
    const problem = judgeTransferEncoding(h.transferEncoding);
    if (problem !== null) return { code: problem.code, what: `${problem.what}Transfer-Encoding: ${h.transferEncoding.slice(0, 80)}` };
    framing = CHUNKED;
  } else if (h.contentLength > 0) {
    // Whether the body fits is asked once the connection has had its say on the limit (parser.ts frame).
    framing = { kind: "length", length: h.contentLength };
  }

  let expectContinue = false;
  if (h.expect !== null) {
    // RFC 9110 §10.1.1: Expect = #expectation, and 100-continue the one defined. A list: its empty
    // elements count for nothing (RFC 9110 §5.6.1.2), so "Expect:" expects nothing, and two lines of
    // 100-continue (combined, RFC 9110 §5.3) expect one thing. OWS around an element is SP and HTAB only.
    const expectations = fieldListElements(h.expect);
    for (const expectation of expectations) {
      if (expectation.toLowerCase() !== "100-continue") return { code: "EXPECTATION_FAILED", what: `The request expects "${expectation.slice(0, 60)}"` };
    }
    // An HTTP/1.0 request's 100-continue expectation is ignored.
    expectContinue = minor === 1 && expectations.length > 0;
  }
  // RFC 9112 §9.3: 1.1 persists unless "close"; 1.0 only when it asks for keep-alive.
  const keepAlive = !h.connectionClose && (minor === 1 || h.connectionKeepAlive);
  return { framing, keepAlive, expectContinue };
}

const EMPTY = Buffer.alloc(0);

/**
 * The head handed on, built as a whole Request with an empty body, so that a
 * request without a body (most of them) is handed on as this very object.
 */
export function headOf(line: RequestLine, h: HeadFields, verdict: HeadVerdict, peer: string): Request {
  return {
    method: line.method,
    target: line.target,
    path: line.path,
    query: line.query,
    minor: line.minor,
    fields: copyFields(h),
    // RFC 9112 §3.2.2: an absolute-form target's authority stands in for Host.
    host: line.absoluteHost ?? h.host,
    framing: verdict.framing,
    keepAlive: verdict.keepAlive,
    expectContinue: verdict.expectContinue,
    peer,
    body: EMPTY,
  };
}

/**
 * A request of the same meaning as `kept`, for a head that repeats it
 * byte for byte (head-memory.ts): an object of its own, so that nothing a
 * handler attaches to one request, or keys by it, is found on another. The
 * fields array is shared; the memory froze it when it kept the head. Written
 * out field by field: `{ ...kept }` costs about 100 instructions more per
 * request (callgrind, the parser alone, node 20).
 */
export function headAgain(kept: Request): Request {
  return {
    method: kept.method,
    target: kept.target,
    path: kept.path,
    query: kept.query,
    minor: kept.minor,
    fields: kept.fields,
    host: kept.host,
    framing: kept.framing,
    keepAlive: kept.keepAlive,
    expectContinue: kept.expectContinue,
    // The memory is the parser's own, so the peer is the one this request came from too.
    peer: kept.peer,
    body: EMPTY,
  };
}

/**
 * The head's own array of its fields, of their exact number. Copied by a loop
 * rather than `slice`: for the few fields of most heads the builtin's call
 * costs more than the loop (callgrind, node 20, three fields: about 350
 * instructions against 290, the new array included).
 */
function copyFields(h: HeadFields): string[] {
  const n = h.count;
  const from = h.fields;
  const fields = new Array<string>(n);
  for (let i = 0; i < n; i++) fields[i] = from[i]!;
  return fields;
}

/**
 * RFC 9112 §6.1 and §7: the only coding this server decodes is chunked, and on
 * a request it must be the final one, applied once. Returns what is wrong (its
 * code, and words to put before the value when the code alone does not say
 * it), or null.
 */
function judgeTransferEncoding(value: string): { readonly code: ProtocolErrorCode; readonly what: string } | null {
  const codings: string[] = [];
  // RFC 9110 §5.6.1: empty list elements do not count; OWS is SP and HTAB only,
  // so "chunked\xA0" is no token and is refused rather than read as chunked.
  for (const coding of fieldListElements(value)) {
    // A token (by the parser's byte classes), then parameters the coding would carry.
    const m = /^([^ \t;]+)(?:[ \t]*;.*)?$/.exec(coding);
    if (m === null || !isToken(m[1]!)) return { code: "INVALID_TRANSFER_ENCODING", what: "" };
    // RFC 9112 §7.1: chunked defines no parameters, and their presence SHOULD be treated as an error.
    if (m[1]!.toLowerCase() === "chunked" && m[1]!.length !== coding.length) return { code: "INVALID_TRANSFER_ENCODING", what: "The chunked coding takes no parameters: " };
    codings.push(coding.toLowerCase());
  }
  if (codings.length === 0) return { code: "INVALID_TRANSFER_ENCODING", what: "" };
  // RFC 9112 §6.1: chunked at most once. "chunked, identity" applies it once, but not last: that is CHUNKED_NOT_FINAL.
  if (codings.indexOf("chunked") !== codings.lastIndexOf("chunked")) return { code: "CHUNKED_TWICE", what: "" };
  if (codings[codings.length - 1] !== "chunked") return { code: "CHUNKED_NOT_FINAL", what: "" };
  if (codings.length > 1) return { code: "UNSUPPORTED_TRANSFER_CODING", what: "" };
  return null;
}
