// The parser's decisions in words, for people: shared by the wire view
// (POST /api/wire) and the terminal trace (TRACE=1), so both say the same
// thing about the same bytes. Only the wording lives here; every decision is
// the parser's own (a RequestHead it handed on), or the connection's (the
// response head it wrote).

import { headerValue, type RequestHead } from "../http/message/request.js";

export interface FramingAccount {
  readonly kind: "content-length" | "chunked" | "none";
  readonly length?: number;
  readonly reason: string;
}

export interface KeepAliveAccount {
  readonly value: boolean;
  readonly reason: string;
}

/** How the head says the body ends (RFC 9112 §6.3). */
export function framingOf(head: RequestHead): FramingAccount {
  switch (head.framing.kind) {
    case "none":
      return { kind: "none", reason: "Neither Content-Length nor Transfer-Encoding: the request has no body (RFC 9112 §6.3)" };
    case "length":
      return {
        kind: "content-length",
        length: head.framing.length,
        reason: `Content-Length: the ${head.framing.length} bytes after the blank line are the body (RFC 9112 §6.3)`,
      };
    case "chunked":
      return { kind: "chunked", reason: "Transfer-Encoding: chunked: the body comes in chunks, each after its size in hex, until a chunk of size 0 (RFC 9112 §7.1)" };
  }
}

/** Whether the connection stays open after the answer (RFC 9112 §9.3, §9.6). */
export function keepAliveOf(head: RequestHead): KeepAliveAccount {
  const connection = headerValue(head, "connection");
  if (head.minor === 1) {
    return head.keepAlive
      ? { value: true, reason: "HTTP/1.1 without Connection: close: the connection stays open for the next request (RFC 9112 §9.3)" }
      : { value: false, reason: `Connection: ${connection}: the server closes the connection after its answer (RFC 9112 §9.6)` };
  }
  return head.keepAlive
    ? { value: true, reason: "HTTP/1.0 with Connection: keep-alive: the connection stays open (RFC 9112 §9.3)" }
    : { value: false, reason: "HTTP/1.0 without Connection: keep-alive: the server closes the connection after its answer (RFC 9112 §9.3)" };
}

/**
 * Whether the connection closes after the response whose head this is: it
 * says so whenever it does (RFC 9112 §9.6), and only then: a handler cannot
 * write the Connection field itself (response.ts).
 */
export function closesAfter(responseHead: string): boolean {
  return /\r\nconnection: close\r\n/i.test(responseHead);
}

/** Roles of the fields the parser itself reads; the rest are for the handler. */
const FIELD_ROLES: Readonly<Record<string, string>> = {
  host: "identifies the server; exactly one in HTTP/1.1",
  "content-length": "frames the body",
  "transfer-encoding": "frames the body",
  connection: "decides whether the connection stays open",
  expect: "100-continue asks for an interim answer before the body",
};

/** What a header field is for, when the parser reads it itself; undefined for the handler's fields. */
export function fieldRole(name: string): string | undefined {
  return FIELD_ROLES[name.toLowerCase()];
}

/** The version as written, and how it is answered (RFC 9112 §2.3: a higher 1.x minor is handled as 1.1). */
export function versionNote(version: string): string {
  return version === "HTTP/1.1" || version === "HTTP/1.0" ? version : `${version} (answered as HTTP/1.1)`;
}

export const TRAILER_NOTE = "Parsed and dropped: a trailer never reaches the handler";
export const EMPTY_LINE_LABEL = "Empty line before the request line: ignored (RFC 9112 §2.2)";
