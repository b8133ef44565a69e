// Every way a request can break the protocol, as one table.
//
// Each code names one rule. The status says what the client did wrong in HTTP's
// own vocabulary; the `rule` cites where the rule is written; the `fix` tells
// the person at the other end what to change. Parser, connection and problem
// bodies all read this one table, so a code means the same thing everywhere.

export interface ErrorKind {
  readonly status: number;
  readonly title: string;
  readonly rule: string;
  readonly fix: string;
}

export const PROTOCOL_ERRORS = {
  BARE_LF: {
    status: 400,
    title: "Line ended with a bare LF",
    rule: "RFC 9112 §2.2",
    fix: "End every line with CR LF (\\r\\n), not LF alone: the request line, each header and trailer field, each chunk-size line and the end of each chunk's data.",
  },
  BARE_CR: {
    status: 400,
    title: "Bare CR in a line",
    rule: "RFC 9112 §2.2",
    fix: "A CR may only appear as the first half of a CR LF line ending.",
  },
  INVALID_REQUEST_LINE: {
    status: 400,
    title: "Malformed request line",
    rule: "RFC 9112 §3",
    fix: "Send METHOD SP request-target SP HTTP-version, separated by single spaces, e.g. `GET /api/v2/status HTTP/1.1`.",
  },
  INVALID_METHOD: {
    status: 400,
    title: "Invalid method",
    rule: "RFC 9110 §9.1, §5.6.2",
    fix: "A method is a token: letters, digits and !#$%&'*+-.^_`|~ only.",
  },
  INVALID_TARGET: {
    status: 400,
    title: "Invalid request target",
    rule: "RFC 9112 §3.2, RFC 3986 §2",
    fix: "Start the target with `/` (or send `*` with OPTIONS) and percent-encode spaces, quotes, controls and non-ASCII bytes.",
  },
  URI_TOO_LONG: {
    status: 414,
    title: "Request target too long",
    rule: "RFC 9112 §3, RFC 9110 §15.5.15",
    fix: "Shorten the request target; move large data into the request body.",
  },
  REQUEST_LINE_TOO_LONG: {
    status: 400,
    title: "Request line too long",
    rule: "RFC 9112 §3",
    fix: "Shorten the method or the request line.",
  },
  INVALID_VERSION: {
    status: 400,
    title: "Malformed HTTP version",
    rule: "RFC 9112 §2.3",
    fix: "Write the version exactly as `HTTP/1.1` (case-sensitive, one digit on each side of the dot).",
  },
  VERSION_NOT_SUPPORTED: {
    status: 505,
    title: "HTTP version not supported",
    rule: "RFC 9110 §15.6.6",
    fix: "Send the request as HTTP/1.1 (or HTTP/1.0); this server speaks HTTP/1.x only.",
  },
  INVALID_FIELD_NAME: {
    status: 400,
    title: "Invalid header field name",
    rule: "RFC 9112 §5, RFC 9110 §5.1",
    fix: "A field name is a token (letters, digits, !#$%&'*+-.^_`|~) followed directly by a colon.",
  },
  WHITESPACE_BEFORE_COLON: {
    status: 400,
    // Refused at the space or tab, before the parser can know whether a colon
    // follows (`Host : x`) or not (`Broken header`): the words are true of both.
    title: "Whitespace in a field name, or before its colon",
    rule: "RFC 9112 §5.1",
    fix: "A field name is a token, so it holds no space or tab, and its colon follows it directly. If you meant `Name: value`, write it so: not `Name : value`, and not `My Header: value` (a name of several words takes hyphens: `My-Header`).",
  },
  MISSING_COLON: {
    status: 400,
    title: "Header line without a colon",
    rule: "RFC 9112 §5",
    fix: "Write each header field as `Name: value`.",
  },
  OBS_FOLD: {
    status: 400,
    title: "Obsolete line folding",
    rule: "RFC 9112 §5.2",
    fix: "Do not continue a field value on the next line (a line starting with space or tab); put the whole value on one line.",
  },
  INVALID_FIELD_VALUE: {
    status: 400,
    title: "Invalid character in a header field value",
    rule: "RFC 9110 §5.5",
    fix: "Field values may hold visible characters, spaces and tabs; remove NUL and other control characters.",
  },
  HEADERS_TOO_LARGE: {
    status: 431,
    title: "Request header section too large",
    rule: "RFC 6585 §5",
    fix: "Send fewer or smaller header fields.",
  },
  TOO_MANY_HEADERS: {
    status: 431,
    title: "Too many header fields",
    rule: "RFC 6585 §5",
    fix: "Send fewer header fields.",
  },
  MISSING_HOST: {
    status: 400,
    title: "Missing Host header",
    rule: "RFC 9112 §3.2",
    fix: "Every HTTP/1.1 request must carry exactly one Host header field, e.g. `Host: 127.0.0.1:8080`.",
  },
  DUPLICATE_HOST: {
    status: 400,
    title: "More than one Host header",
    rule: "RFC 9112 §3.2",
    fix: "Send exactly one Host header field.",
  },
  INVALID_HOST: {
    status: 400,
    title: "Invalid Host header",
    rule: "RFC 9112 §3.2, RFC 3986 §3.2.2",
    fix: "Send the host name or address, optionally followed by `:port`.",
  },
  INVALID_CONTENT_LENGTH: {
    status: 400,
    title: "Invalid Content-Length",
    rule: "RFC 9110 §8.6, RFC 9112 §6.3",
    fix: "Content-Length is the body's size in bytes as decimal digits only, e.g. `Content-Length: 42`.",
  },
  INVALID_CONNECTION: {
    status: 400,
    title: "Malformed Connection field",
    rule: "RFC 9110 §7.6.1",
    fix: "Connection is a comma-separated list of tokens, e.g. `Connection: close` or `Connection: keep-alive`; only spaces and tabs may surround them.",
  },
  REPEATED_CONTENT_LENGTH: {
    status: 400,
    title: "Content-Length sent more than once",
    rule: "RFC 9110 §8.6, RFC 9112 §6.3",
    fix: "Send one Content-Length field with one value; this server refuses repeats even when they are equal, so that no proxy can read them another way.",
  },
  CONTENT_LENGTH_WITH_TRANSFER_ENCODING: {
    status: 400,
    title: "Both Transfer-Encoding and Content-Length",
    rule: "RFC 9112 §6.1, §6.3",
    fix: "Frame the body one way only: either Content-Length or Transfer-Encoding: chunked.",
  },
  TRANSFER_ENCODING_IN_HTTP10: {
    status: 400,
    title: "Transfer-Encoding in an HTTP/1.0 request",
    rule: "RFC 9112 §6.1",
    fix: "HTTP/1.0 has no transfer codings; use Content-Length, or send the request as HTTP/1.1.",
  },
  UNSUPPORTED_TRANSFER_CODING: {
    status: 501,
    title: "Unsupported transfer coding",
    rule: "RFC 9112 §6.1, §7",
    fix: "This server understands `Transfer-Encoding: chunked` alone; send the body chunked, or with Content-Length.",
  },
  CHUNKED_NOT_FINAL: {
    status: 501,
    title: "Transfer coding does not end with chunked",
    rule: "RFC 9112 §6.1",
    fix: "When Transfer-Encoding is used on a request, `chunked` must be the final coding.",
  },
  CHUNKED_TWICE: {
    status: 400,
    title: "chunked applied more than once",
    rule: "RFC 9112 §6.1",
    fix: "Apply the chunked coding once: `Transfer-Encoding: chunked`.",
  },
  INVALID_TRANSFER_ENCODING: {
    status: 400,
    title: "Malformed Transfer-Encoding",
    rule: "RFC 9112 §6.1, §7.1",
    fix: "Transfer-Encoding is a comma-separated list of coding names, e.g. `Transfer-Encoding: chunked`; `chunked` takes no parameters.",
  },
  INVALID_CHUNK_SIZE: {
    status: 400,
    title: "Malformed chunk size",
    rule: "RFC 9112 §7.1",
    fix: "Start every chunk with its size in hexadecimal digits, then CR LF, e.g. `1a\\r\\n`.",
  },
  INVALID_CHUNK_EXTENSION: {
    status: 400,
    title: "Malformed chunk extension",
    rule: "RFC 9112 §7.1.1",
    fix: "A chunk extension is `;name` or `;name=value` with a token or quoted-string value.",
  },
  CHUNK_EXTENSIONS_TOO_LARGE: {
    status: 400,
    title: "Chunk extensions too large",
    rule: "RFC 9112 §7.1.1",
    fix: "Send fewer or shorter chunk extensions; this server ignores them.",
  },
  INVALID_CHUNK_END: {
    status: 400,
    title: "Chunk data not followed by CR LF",
    rule: "RFC 9112 §7.1",
    fix: "After exactly chunk-size bytes of data, send CR LF; check that the size matches the data.",
  },
  CONTENT_TOO_LARGE: {
    status: 413,
    title: "Request body too large",
    rule: "RFC 9110 §15.5.14",
    fix: "Send a smaller body.",
  },
  EXPECTATION_FAILED: {
    status: 417,
    title: "Expectation not supported",
    rule: "RFC 9110 §10.1.1",
    fix: "The only expectation this server meets is `Expect: 100-continue`.",
  },
  CONNECT_NOT_SUPPORTED: {
    status: 501,
    title: "CONNECT is not supported",
    rule: "RFC 9110 §9.3.6",
    fix: "This server is an origin server, not a proxy; it opens no tunnels.",
  },
  REQUEST_TIMEOUT: {
    status: 408,
    title: "Request not received in time",
    rule: "RFC 9110 §15.5.9",
    fix: "Send the whole request head (and body) without pausing; the connection was closed.",
  },
} as const satisfies Record<string, ErrorKind>;

export type ProtocolErrorCode = keyof typeof PROTOCOL_ERRORS;

/** One violation found in the bytes: which rule, a detail naming what was seen, and where. */
export interface ProtocolError {
  readonly code: ProtocolErrorCode;
  readonly status: number;
  /** What was wrong with this request in particular, followed by how to fix it. */
  readonly detail: string;
  /** Byte offset from the start of the offending request, where known. */
  readonly offset: number;
}

export function protocolError(code: ProtocolErrorCode, what: string, offset: number): ProtocolError {
  const kind: ErrorKind = PROTOCOL_ERRORS[code];
  return { code, status: kind.status, detail: `${what} (${kind.rule}). ${kind.fix}`, offset };
}

/** "whitespace-before-colon": the code as it appears in a problem type URI. */
export function problemSlug(code: ProtocolErrorCode): string {
  return code.toLowerCase().replaceAll("_", "-");
}
