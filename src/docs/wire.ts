// The parser's account of a byte stream, part by part, for the wire view.
//
// The verdicts come from the real parser (the same RequestParser class and
// limits the server uses): which requests it accepted, how it framed each
// body, whether the connection stays open, and the first rule broken with its
// byte offset. The byte ranges of the parts are then read off the bytes
// themselves: once the parser has accepted a head, its lines are simply the
// stretches between LFs, so this walk needs no grammar of its own and the
// parser needs no observation hook (nothing is added to its hot path).

import { PROTOCOL_ERRORS, type ProtocolError, type ProtocolErrorCode } from "../http/errors.js";
import { RequestParser, type ParserLimits } from "../http/parser.js";
import { headerValue, type RequestHead } from "../http/request.js";

export type PartKind =
  | "empty-line"
  | "request-line"
  | "field"
  | "blank-line"
  | "body"
  | "chunk-size"
  | "chunk-data"
  | "chunk-end"
  | "last-chunk"
  | "trailer"
  | "status-line"
  | "incomplete"
  | "unread";

export interface WirePart {
  readonly kind: PartKind;
  /** For people: "Header field Content-Type", "Body (27 bytes)". */
  readonly label: string;
  /** Byte offsets in the stream: start inclusive, end exclusive. */
  readonly start: number;
  readonly end: number;
  /** The part's bytes with their line ending: head lines as Latin-1 (byte for character), bodies as UTF-8. */
  readonly text: string;
  /** What the parser made of it. */
  readonly note?: string;
  /** The protocol error was found in this part. */
  readonly error?: true;
}

export interface RequestAccount {
  readonly start: number;
  readonly end: number;
  /** complete: parsed and handed to the router; error: broke a rule; incomplete: the bytes ran out first. */
  readonly state: "complete" | "error" | "incomplete";
  readonly method?: string;
  readonly target?: string;
  readonly parts: WirePart[];
  /** How the body's end was decided (RFC 9112 §6.3); present once the head was accepted. */
  readonly framing?: { readonly kind: "content-length" | "chunked" | "none"; readonly length?: number; readonly reason: string };
  readonly keepAlive?: { readonly value: boolean; readonly reason: string };
}

export interface WireError {
  readonly code: ProtocolErrorCode;
  readonly status: number;
  readonly title: string;
  readonly rule: string;
  readonly detail: string;
  /** The byte where the rule was seen broken, counted from the start of the stream. */
  readonly offset: number;
  /** Which request (from 0) broke it, and the offset within that request, as the problem body reports it. */
  readonly request: number;
  readonly offsetInRequest: number;
}

export interface RequestStreamAccount {
  readonly bytes: number;
  readonly requests: RequestAccount[];
  readonly error: WireError | null;
  /** Bytes the server never read: after a protocol error, or after a request that closes the connection. */
  readonly unread: WirePart | null;
}

export interface ResponseAccount {
  readonly start: number;
  readonly end: number;
  readonly status: number;
  readonly statusLine: string;
  /** Which request it answers (from 0); null for an interim 1xx response. */
  readonly answers: number | null;
  readonly fields: readonly { readonly name: string; readonly value: string }[];
  readonly parts: WirePart[];
}

const CR = 0x0d;
const LF = 0x0a;
/** The parser ignores at most this many empty lines before a request line (RFC 9112 §2.2); the walk must skip as many. */
const MAX_LEADING_EMPTY_LINES = 8;

interface Line {
  readonly start: number;
  /** Where the content ends, before CR LF (or LF). */
  readonly contentEnd: number;
  /** After the LF. */
  readonly end: number;
}

/** The line starting at `pos`, or null when no LF follows. */
function lineAt(bytes: Buffer, pos: number): Line | null {
  const lf = bytes.indexOf(LF, pos);
  if (lf === -1) return null;
  return { start: pos, contentEnd: lf > pos && bytes[lf - 1] === CR ? lf - 1 : lf, end: lf + 1 };
}

const latin1 = (bytes: Buffer, start: number, end: number) => bytes.toString("latin1", start, end);
const utf8 = (bytes: Buffer, start: number, end: number) => bytes.toString("utf8", start, end);

function part(kind: PartKind, label: string, bytes: Buffer, start: number, end: number, note?: string, decode = latin1): WirePart {
  return { kind, label, start, end, text: decode(bytes, start, end), ...(note === undefined ? {} : { note }) };
}

function flagError(p: WirePart): WirePart {
  return { ...p, error: true };
}

/** Runs the parser over the whole stream, collecting what it reports. */
function parse(bytes: Buffer, limits: ParserLimits) {
  const heads: RequestHead[] = [];
  let completed = 0;
  let error: ProtocolError | null = null;
  let errorRequest = -1;
  const parser = new RequestParser(
    {
      onHead: (head) => void heads.push(head),
      onRequest: () => void completed++,
      onError: (e) => {
        error = e;
        // Found in the body of a request whose head was accepted, or in the head of the next one.
        errorRequest = completed < heads.length ? heads.length - 1 : heads.length;
      },
    },
    limits,
  );
  parser.feed(bytes);
  return { heads, completed, error: error as ProtocolError | null, errorRequest, closed: parser.closed };
}

function framingOf(head: RequestHead): NonNullable<RequestAccount["framing"]> {
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

function keepAliveOf(head: RequestHead): NonNullable<RequestAccount["keepAlive"]> {
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

/** Roles of the fields the parser itself reads; the rest are for the handler. */
const FIELD_ROLES: Readonly<Record<string, string>> = {
  host: "identifies the server; exactly one in HTTP/1.1",
  "content-length": "frames the body",
  "transfer-encoding": "frames the body",
  connection: "decides whether the connection stays open",
  expect: "100-continue asks for an interim answer before the body",
};

function fieldPart(bytes: Buffer, line: Line, kind: "field" | "trailer"): WirePart {
  const text = latin1(bytes, line.start, line.contentEnd);
  const colon = text.indexOf(":");
  const name = (colon === -1 ? text : text.slice(0, colon)).trimEnd();
  const value = colon === -1 ? "" : text.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, "");
  const role = FIELD_ROLES[name.toLowerCase()];
  const label = kind === "field" ? `Header field ${name}` : `Trailer field ${name}`;
  const note = kind === "trailer" ? "Parsed and dropped: a trailer never reaches the handler" : `Value "${value}"${role === undefined ? "" : `: ${role}`}`;
  return part(kind, label, bytes, line.start, line.end, note);
}

/** The parser's account of a request stream, as the server would read it from one connection. */
export function accountOfRequests(bytes: Buffer, limits: ParserLimits): RequestStreamAccount {
  const { heads, completed, error, errorRequest, closed } = parse(bytes, limits);
  const requests: RequestAccount[] = [];
  let wireError: WireError | null = null;
  let pos = 0;
  const len = bytes.length;

  for (let k = 0; pos < len && (k < heads.length || k === errorRequest); k++) {
    const start = pos;
    const parts: WirePart[] = [];
    const head = heads[k];
    // Leading empty lines: skipped by the parser, which counts error offsets from the line after them.
    for (let n = 0; n < MAX_LEADING_EMPTY_LINES; n++) {
      const line = lineAt(bytes, pos);
      if (line === null || line.contentEnd !== line.start) break;
      if (line.end - line.start === 1 && !limits.allowBareLf) break; // a bare LF is an error, not an empty line
      parts.push(part("empty-line", "Empty line before the request line: ignored (RFC 9112 §2.2)", bytes, line.start, line.end));
      pos = line.end;
    }
    const requestStart = pos;
    let errorAt = Infinity;
    if (error !== null && k === errorRequest) {
      const kind = PROTOCOL_ERRORS[error.code];
      errorAt = requestStart + error.offset;
      wireError = { code: error.code, status: error.status, title: kind.title, rule: kind.rule, detail: error.detail, offset: errorAt, request: k, offsetInRequest: error.offset };
    }
    const finish = (state: RequestAccount["state"], extra: Partial<RequestAccount> = {}) => {
      requests.push({
        start,
        end: pos,
        state,
        ...(head === undefined ? {} : { method: head.method, target: head.target, framing: framingOf(head), keepAlive: keepAliveOf(head) }),
        ...extra,
        parts,
      });
    };
    /** Adds a part, flagged when the error lies in it; true when the walk must stop there. */
    const add = (p: WirePart): boolean => {
      const hit = errorAt >= p.start && errorAt < Math.max(p.end, p.start + 1);
      parts.push(hit ? flagError(p) : p);
      pos = p.end;
      return hit;
    };
    /** The rest of the bytes, when they run out before the part ends. */
    const rest = (label: string): void => {
      add(part("incomplete", label, bytes, pos, len, "The input ends here; on a socket the server would wait for the rest (and time out)"));
    };

    // ---- Head: request line, field lines, blank line ----
    let stopped = false;
    let first = true;
    for (;;) {
      const line = lineAt(bytes, pos);
      if (line === null) {
        rest(first ? "Request line (unfinished)" : "Header field (unfinished)");
        stopped = true;
        break;
      }
      if (first) {
        first = false;
        const text = latin1(bytes, line.start, line.contentEnd);
        const [method, target, version] = text.split(" ");
        const note = head === undefined ? undefined : `Method ${head.method}, target ${head.target}, version ${version}${head.minor === 1 && version !== "HTTP/1.1" ? " (answered as HTTP/1.1)" : ""}`;
        if (add(part("request-line", "Request line", bytes, line.start, line.end, note ?? (target === undefined ? undefined : `Method ${method}, target ${target}`)))) {
          stopped = true;
          break;
        }
      } else if (line.contentEnd === line.start) {
        if (add(part("blank-line", "Blank line: the header section ends", bytes, line.start, line.end))) stopped = true;
        break;
      } else if (add(fieldPart(bytes, line, "field"))) {
        stopped = true;
        break;
      }
    }
    if (stopped || head === undefined) {
      finish(wireError?.request === k ? "error" : "incomplete", head === undefined ? extraFromLine(parts) : {});
      if (wireError?.request === k || pos >= len) break;
      continue;
    }

    // ---- Body, as the head framed it ----
    const framing = head.framing;
    if (framing.kind === "length") {
      const end = Math.min(pos + framing.length, len);
      const label = end - pos === framing.length ? `Body (${framing.length} bytes, by Content-Length)` : `Body: ${end - pos} of the ${framing.length} bytes Content-Length announced`;
      add(part("body", label, bytes, pos, end, undefined, utf8));
    } else if (framing.kind === "chunked") {
      walkChunks(bytes, limits, add, rest, () => pos);
    }
    const state = k < completed ? "complete" : wireError?.request === k ? "error" : "incomplete";
    finish(state);
    if (state !== "complete") break;
  }

  let unread: WirePart | null = null;
  if (pos < len) {
    const why =
      wireError !== null
        ? "Never read: after a protocol error the server answers and closes the connection"
        : closed
          ? "Never read: the request before it closes the connection (RFC 9112 §9.6)"
          : "Never read";
    const onlyEmptyLines = /^(?:\r?\n)+$/.test(latin1(bytes, pos, len));
    if (wireError !== null || closed) unread = part("unread", why, bytes, pos, len, undefined, utf8);
    else if (onlyEmptyLines) unread = part("unread", "Empty lines after the last request: ignored (RFC 9112 §2.2)", bytes, pos, len);
    else {
      // Bytes of a next request that never completed its head.
      const parts: WirePart[] = [];
      let p = pos;
      for (let line = lineAt(bytes, p); line !== null; line = lineAt(bytes, p)) {
        parts.push(part(parts.length === 0 ? "request-line" : "field", parts.length === 0 ? "Request line" : "Header field", bytes, line.start, line.end));
        p = line.end;
      }
      if (p < len) parts.push(part("incomplete", "Unfinished line", bytes, p, len, "The input ends here; on a socket the server would wait for the rest (and time out)"));
      requests.push({ start: pos, end: len, state: "incomplete", parts, ...extraFromLine(parts) });
    }
  }
  return { bytes: len, requests, error: wireError, unread };
}

/** Method and target as written, for a request whose head was never accepted. */
function extraFromLine(parts: readonly WirePart[]): Partial<RequestAccount> {
  const line = parts.find((p) => p.kind === "request-line" || p.kind === "incomplete");
  if (line === undefined) return {};
  const [method, target] = line.text.replace(/\r?\n$/, "").split(" ");
  return { ...(method ? { method } : {}), ...(target ? { target } : {}) };
}

/** chunk-size lines, chunk data and their CR LF, the last chunk, trailers. Returns true when the walk stopped early. */
function walkChunks(bytes: Buffer, limits: ParserLimits, add: (p: WirePart) => boolean, rest: (label: string) => void, at: () => number): boolean {
  const len = bytes.length;
  for (;;) {
    const line = lineAt(bytes, at());
    if (line === null) {
      rest("Chunk size (unfinished)");
      return true;
    }
    const text = latin1(bytes, line.start, line.contentEnd);
    const hex = /^[0-9A-Fa-f]*/.exec(text)![0];
    const size = hex === "" ? NaN : parseInt(hex, 16);
    const ext = text.slice(hex.length);
    if (size === 0) {
      if (add(part("last-chunk", "Last chunk (size 0): the body is complete", bytes, line.start, line.end, ext ? `Extension ${ext} (ignored)` : undefined))) return true;
      for (;;) {
        const t = lineAt(bytes, at());
        if (t === null) {
          rest("Trailer section (unfinished)");
          return true;
        }
        if (t.contentEnd === t.start) return add(part("blank-line", "Blank line: the chunked body ends", bytes, t.start, t.end));
        if (add(fieldPart(bytes, t, "trailer"))) return true;
      }
    }
    const label = Number.isNaN(size) ? "Chunk size" : `Chunk size: 0x${hex} = ${size} bytes`;
    if (add(part("chunk-size", label, bytes, line.start, line.end, ext ? `Extension ${ext} (ignored)` : undefined))) return true;
    if (Number.isNaN(size)) return true;
    const dataStart = at();
    const dataEnd = Math.min(dataStart + size, len);
    if (add(part("chunk-data", `Chunk data (${size} bytes)`, bytes, dataStart, dataEnd, undefined, utf8))) return true;
    if (dataEnd < dataStart + size) return true;
    // The CR LF after the data: two bytes, or one LF where bare LF is allowed; an error otherwise.
    const crlf = bytes[dataEnd] === CR && bytes[dataEnd + 1] === LF ? 2 : bytes[dataEnd] === LF && limits.allowBareLf ? 1 : Math.min(2, len - dataEnd);
    if (crlf === 0) {
      rest("CR LF after the chunk data (missing)");
      return true;
    }
    if (add(part("chunk-end", "CR LF after the chunk data", bytes, dataEnd, dataEnd + crlf))) return true;
  }
}

/**
 * The responses in the server's output. Framing as this server writes it:
 * Content-Length on every response whose status allows content; no content on
 * 1xx, 204, 304, or in answer to HEAD.
 */
export function accountOfResponses(bytes: Buffer, requests: readonly RequestAccount[]): ResponseAccount[] {
  const out: ResponseAccount[] = [];
  let pos = 0;
  let answered = 0;
  const len = bytes.length;
  while (pos < len) {
    const start = pos;
    const parts: WirePart[] = [];
    const fields: { name: string; value: string }[] = [];
    const first = lineAt(bytes, pos);
    if (first === null) {
      parts.push(part("incomplete", "Unfinished output", bytes, pos, len, undefined, utf8));
      out.push({ start, end: len, status: 0, statusLine: "", answers: null, fields, parts });
      break;
    }
    const statusLine = latin1(bytes, first.start, first.contentEnd);
    const status = Number(statusLine.split(" ")[1]);
    const interim = status >= 100 && status < 200;
    parts.push(part("status-line", "Status line", bytes, first.start, first.end, `Version ${statusLine.split(" ")[0]}, status ${status}, reason "${statusLine.split(" ").slice(2).join(" ")}"`));
    pos = first.end;
    let contentLength: number | undefined;
    for (let line = lineAt(bytes, pos); line !== null; line = lineAt(bytes, pos)) {
      pos = line.end;
      if (line.contentEnd === line.start) {
        parts.push(part("blank-line", "Blank line: the header section ends", bytes, line.start, line.end));
        break;
      }
      const text = latin1(bytes, line.start, line.contentEnd);
      const colon = text.indexOf(":");
      const name = text.slice(0, colon);
      const value = text.slice(colon + 1).trim();
      fields.push({ name, value });
      if (name.toLowerCase() === "content-length") contentLength = Number(value);
      parts.push(part("field", `Header field ${name}`, bytes, line.start, line.end));
    }
    const request = interim ? undefined : requests[answered];
    const noContent = interim || status === 204 || status === 304 || request?.method === "HEAD";
    if (!noContent) {
      const end = contentLength === undefined ? len : Math.min(pos + contentLength, len);
      if (end > pos || contentLength !== undefined) {
        const why = contentLength === undefined ? "until the connection closes" : "by Content-Length";
        parts.push(part("body", `Body (${end - pos} bytes, ${why})`, bytes, pos, end, undefined, utf8));
      }
      pos = end;
    } else if (request?.method === "HEAD" && !interim) {
      parts.push({ kind: "body", label: "No body: this answers HEAD (Content-Length is what GET would send)", start: pos, end: pos, text: "" });
    }
    out.push({ start, end: pos, status, statusLine, answers: interim ? null : answered, fields, parts });
    if (!interim) answered++;
  }
  return out;
}
