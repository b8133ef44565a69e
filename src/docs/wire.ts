// The parser's account of a byte stream, part by part, for the wire view.
//
// The verdicts come from the real parser (the same RequestParser class and
// limits the server uses): which requests it accepted, how it framed each
// body, whether the connection stays open, and the first rule broken with its
// byte offset. The byte ranges of the parts are then read off the bytes
// themselves: once the parser has accepted a head, its lines are simply the
// stretches between LFs, so this walk needs no grammar of its own and the
// parser needs no observation hook (nothing is added to its hot path).
// Parts are made within the answer's budget (wire-parts.ts): past it, the
// walk skips ahead to where each message ends and shows one omitted stretch.

import { setImmediate as nextTurn } from "node:timers/promises";
import { PROTOCOL_ERRORS, type ProtocolError, type ProtocolErrorCode } from "../http/errors.js";
import { RequestParser, type ParserLimits } from "../http/parser.js";
import { headerValue, type RequestHead } from "../http/request.js";
import { charge, type Budget } from "./wire-budget.js";
import { latin1, lineAt, partMaker, utf8, type Line, type PartMaker, type WirePart } from "./wire-parts.js";

export type { PartKind, WirePart } from "./wire-parts.js";

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
  /** Why a request the parser accepted got no turn (the answer's budget was spent before it). */
  readonly notRun?: string;
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

const CR = 0x0d;
const LF = 0x0a;
/** The parser ignores at most this many empty lines before a request line (RFC 9112 §2.2); the walk must skip as many. */
const MAX_LEADING_EMPTY_LINES = 8;

function flagError(p: WirePart): WirePart {
  return { ...p, error: true };
}

/** What the parser reported about a stream: the heads it accepted, how many requests it completed, its error. */
export interface Verdicts {
  readonly heads: readonly RequestHead[];
  readonly completed: number;
  readonly error: ProtocolError | null;
  readonly errorRequest: number;
  readonly closed: boolean;
}

/** A parser that records its verdicts, fed by the caller. */
function recorder(limits: ParserLimits) {
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
  return {
    parser,
    verdicts: (): Verdicts => ({ heads, completed, error, errorRequest, closed: parser.closed }),
  };
}

/** The parser's verdicts on a whole stream at once. */
export function parse(bytes: Buffer, limits: ParserLimits): Verdicts {
  const r = recorder(limits);
  r.parser.feed(bytes);
  return r.verdicts();
}

/**
 * The same verdicts, reached `slice` bytes per turn of the event loop (as a
 * socket delivers them): a megabyte of tiny chunks costs the parser a while,
 * and other connections are served in between.
 */
export async function parseStepwise(bytes: Buffer, limits: ParserLimits, slice: number): Promise<Verdicts> {
  const r = recorder(limits);
  for (let at = 0; at < bytes.length && !r.parser.closed; at += slice) {
    if (at > 0) await nextTurn();
    r.parser.feed(bytes.subarray(at, at + slice));
  }
  return r.verdicts();
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

function fieldPart(m: PartMaker, bytes: Buffer, line: Line, kind: "field" | "trailer"): WirePart {
  const text = latin1(bytes, line.start, line.contentEnd);
  const colon = text.indexOf(":");
  const name = (colon === -1 ? text : text.slice(0, colon)).trimEnd();
  const value = colon === -1 ? "" : text.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, "");
  const role = FIELD_ROLES[name.toLowerCase()];
  const label = kind === "field" ? `Header field ${name}` : `Trailer field ${name}`;
  const note = kind === "trailer" ? "Parsed and dropped: a trailer never reaches the handler" : `Value "${value}"${role === undefined ? "" : `: ${role}`}`;
  return m.part(kind, label, line.start, line.end, note);
}

/**
 * The parser's account of a request stream, as the server would read it from
 * one connection; its parts are charged to `budget` (null: no limit).
 */
export function accountOfRequests(bytes: Buffer, limits: ParserLimits, budget: Budget | null = null, verdicts: Verdicts = parse(bytes, limits)): RequestStreamAccount {
  const { heads, completed, error, errorRequest, closed } = verdicts;
  const m = partMaker(bytes, budget, "request");
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
      m.push(parts, m.part("empty-line", "Empty line before the request line: ignored (RFC 9112 §2.2)", line.start, line.end));
      pos = line.end;
    }
    const requestStart = pos;
    let errorAt = Infinity;
    if (error !== null && k === errorRequest) {
      const kind = PROTOCOL_ERRORS[error.code];
      errorAt = requestStart + error.offset;
      wireError = { code: error.code, status: error.status, title: kind.title, rule: kind.rule, detail: error.detail, offset: errorAt, request: k, offsetInRequest: error.offset };
      if (budget !== null) charge(budget, wireError);
    }
    const finish = (state: RequestAccount["state"], extra: Partial<RequestAccount> = {}) => {
      const described = {
        start,
        end: pos,
        state,
        ...(head === undefined ? {} : { method: head.method, target: head.target, framing: framingOf(head), keepAlive: keepAliveOf(head) }),
        ...extra,
      };
      if (budget !== null) charge(budget, described);
      requests.push({ ...described, parts });
    };
    /** Adds a part, flagged when the error lies in it; true when the walk must stop there. */
    const add = (p: WirePart): boolean => {
      const hit = errorAt >= p.start && errorAt < Math.max(p.end, p.start + 1);
      m.push(parts, hit ? flagError(p) : p);
      pos = p.end;
      return hit;
    };
    /** The rest of the bytes, when they run out before the part ends. */
    const rest = (label: string): void => {
      add(m.part("incomplete", label, pos, len, "The input ends here; on a socket the server would wait for the rest (and time out)"));
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
        if (add(m.part("request-line", "Request line", line.start, line.end, note ?? (target === undefined ? undefined : `Method ${method}, target ${target}`)))) {
          stopped = true;
          break;
        }
      } else if (line.contentEnd === line.start) {
        if (add(m.part("blank-line", "Blank line: the header section ends", line.start, line.end))) stopped = true;
        break;
      } else if (add(fieldPart(m, bytes, line, "field"))) {
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
      add(m.part("body", label, pos, end, undefined, utf8));
    } else if (framing.kind === "chunked") {
      walkChunks(m, bytes, limits, add, rest, () => pos, errorAt);
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
    if (wireError !== null || closed) unread = m.part("unread", why, pos, len, undefined, utf8);
    else if (onlyEmptyLines) unread = m.part("unread", "Empty lines after the last request: ignored (RFC 9112 §2.2)", pos, len);
    else {
      // Bytes of a next request that never completed its head.
      const parts: WirePart[] = [];
      let p = pos;
      for (let line = lineAt(bytes, p); line !== null; line = lineAt(bytes, p)) {
        m.push(parts, m.part(parts.length === 0 ? "request-line" : "field", parts.length === 0 ? "Request line" : "Header field", line.start, line.end));
        p = line.end;
      }
      if (p < len) m.push(parts, m.part("incomplete", "Unfinished line", p, len, "The input ends here; on a socket the server would wait for the rest (and time out)"));
      const described = { start: pos, end: len, state: "incomplete" as const, ...extraFromLine(parts) };
      if (budget !== null) charge(budget, described);
      requests.push({ ...described, parts });
    }
  }
  if (unread?.kind === "omitted" && budget !== null) charge(budget, unread);
  return { bytes: len, requests, error: wireError, unread };
}

/** Method and target as written, for a request whose head was never accepted. */
function extraFromLine(parts: readonly WirePart[]): Partial<RequestAccount> {
  const line = parts.find((p) => p.kind === "request-line" || p.kind === "incomplete");
  if (line === undefined) return {};
  const [method, target] = line.text.replace(/\r?\n$/, "").split(" ");
  return { ...(method ? { method } : {}), ...(target ? { target } : {}) };
}

/**
 * chunk-size lines, chunk data and their CR LF, the last chunk, trailers.
 * Returns true when the walk stopped early. `errorAt`: where the parser found
 * this request's error (Infinity: none).
 */
function walkChunks(m: PartMaker, bytes: Buffer, limits: ParserLimits, add: (p: WirePart) => boolean, rest: (label: string) => void, at: () => number, errorAt: number): boolean {
  const len = bytes.length;
  for (;;) {
    if (m.exhausted()) {
      // Nothing more is shown: one omitted stretch to the end of the body (or the error, or the input), found without making a part per chunk.
      const from = at();
      if (errorAt !== Infinity) return add(m.part("omitted", "", from, Math.min(len, Math.max(errorAt + 1, from + 1))));
      const end = endOfChunks(bytes, from, limits.allowBareLf);
      add(m.part("omitted", "", from, end === -1 ? len : end));
      return end === -1;
    }
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
      if (add(m.part("last-chunk", "Last chunk (size 0): the body is complete", line.start, line.end, ext ? `Extension ${ext} (ignored)` : undefined))) return true;
      for (;;) {
        const t = lineAt(bytes, at());
        if (t === null) {
          rest("Trailer section (unfinished)");
          return true;
        }
        if (t.contentEnd === t.start) return add(m.part("blank-line", "Blank line: the chunked body ends", t.start, t.end));
        if (add(fieldPart(m, bytes, t, "trailer"))) return true;
      }
    }
    const label = Number.isNaN(size) ? "Chunk size" : `Chunk size: 0x${hex} = ${size} bytes`;
    if (add(m.part("chunk-size", label, line.start, line.end, ext ? `Extension ${ext} (ignored)` : undefined))) return true;
    if (Number.isNaN(size)) return true;
    const dataStart = at();
    const dataEnd = Math.min(dataStart + size, len);
    if (add(m.part("chunk-data", `Chunk data (${size} bytes)`, dataStart, dataEnd, undefined, utf8))) return true;
    if (dataEnd < dataStart + size) return true;
    // The CR LF after the data: two bytes, or one LF where bare LF is allowed; an error otherwise.
    const crlf = bytes[dataEnd] === CR && bytes[dataEnd + 1] === LF ? 2 : bytes[dataEnd] === LF && limits.allowBareLf ? 1 : Math.min(2, len - dataEnd);
    if (crlf === 0) {
      rest("CR LF after the chunk data (missing)");
      return true;
    }
    if (add(m.part("chunk-end", "CR LF after the chunk data", dataEnd, dataEnd + crlf))) return true;
  }
}

function hexValue(b: number): number {
  if (b >= 0x30 && b <= 0x39) return b - 0x30;
  const lower = b | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

/**
 * Where a chunked body that the parser accepted ends (after its trailer
 * section), reading only sizes and line ends; -1 if the input ends first.
 * Tolerant where the parser is strict: it only ever sees bodies the parser
 * has already checked (RFC 9112 §7.1).
 */
function endOfChunks(bytes: Buffer, pos: number, allowBareLf: boolean): number {
  const len = bytes.length;
  for (;;) {
    const lf = bytes.indexOf(LF, pos);
    if (lf === -1) return -1;
    let size = 0;
    let digits = 0;
    for (let i = pos; i < lf; i++, digits++) {
      const h = hexValue(bytes[i]!);
      if (h < 0) break;
      size = size * 16 + h;
    }
    if (digits === 0) return -1;
    pos = lf + 1;
    if (size === 0) {
      for (;;) {
        const end = bytes.indexOf(LF, pos);
        if (end === -1) return -1;
        const empty = end === pos || (end === pos + 1 && bytes[pos] === CR);
        pos = end + 1;
        if (empty) return pos;
      }
    }
    pos += size;
    if (bytes[pos] === CR && bytes[pos + 1] === LF) pos += 2;
    else if (bytes[pos] === LF && allowBareLf) pos += 1;
    else return -1;
    if (pos > len) return -1;
  }
}
