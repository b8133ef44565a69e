// Errors as node:http throws them: the same class and `code`, so that code
// which tells them apart by code (frameworks do) reads them alike, and a
// message that says what to do here.

import type { ProtocolError } from "../http/parse/errors.js";

export type NodeError = Error & { code: string };

export function nodeError(kind: ErrorConstructor | TypeErrorConstructor | RangeErrorConstructor, code: string, message: string): NodeError {
  const error = new kind(message) as NodeError;
  error.code = code;
  return error;
}

/** A node:http feature this interface does not offer: said as it is used, never left to misbehave. */
export function notOffered(what: string, instead: string): NodeError {
  return nodeError(Error, "ERR_STARTLINE_NOT_OFFERED", `${what} is not offered by startline/node: ${instead}`);
}

export function headersSent(what: string): NodeError {
  return nodeError(Error, "ERR_HTTP_HEADERS_SENT", `Cannot ${what} after they are sent to the client`);
}

/** What node's parser calls a head too large: it counts the request line and the fields against one limit. */
const HEAD_OVERFLOW: ReadonlySet<string> = new Set(["HEADERS_TOO_LARGE", "TOO_MANY_HEADERS", "URI_TOO_LONG", "REQUEST_LINE_TOO_LONG"]);

/**
 * The engine's protocol error as node's 'clientError' listeners receive it: the
 * codes they test for where node has one (a head too large, a timeout), else
 * "HPE_" and the engine's own code; `detail` is the engine's account of what
 * was wrong and what to change, and `status` the answer it would have sent.
 */
export function clientError(error: ProtocolError): NodeError & { status: number; detail: string; bytesParsed: number } {
  const code =
    error.code === "REQUEST_TIMEOUT"
      ? "ERR_HTTP_REQUEST_TIMEOUT"
      : HEAD_OVERFLOW.has(error.code)
        ? "HPE_HEADER_OVERFLOW"
        : `HPE_${error.code}`;
  const e = nodeError(Error, code, `Parse Error: ${error.detail}`) as NodeError & { status: number; detail: string; bytesParsed: number };
  e.status = error.status;
  e.detail = error.detail;
  e.bytesParsed = error.offset;
  return e;
}
