// The request side of the wire view: the connection's own account of the
// bytes, as it read them.
//
// The account is a ConnectionTrace (src/http/connection/trace-hook.ts) of
// the one run that reads the bytes (run.ts): every part shown is made from
// what the connection's parser reported to it (src/http/parse/spans.ts):
// each line with its offsets and the parts inside it, the pieces of each
// body, the byte where a rule broke; framing, keep-alive and the error are
// the verdicts the parser handed on, a refusal from the head and the close
// after a response are the connection's decisions. Nothing here reads HTTP's
// grammar again, so the view cannot disagree with the server. The one thing
// looked up in the bytes is where a refused line ends (its LF), so that the
// line is shown whole around the offending byte.
//
// Parts are made within the answer's budget (parts.ts): past it, the
// spans still arrive, and only stretch one omitted part per request.

import { PROTOCOL_ERRORS, type ProtocolError, type ProtocolErrorCode } from "../http/parse/errors.js";
import type { RequestHead } from "../http/message/request.js";
import type { ConnectionTrace } from "../http/connection/trace-hook.js";
import type { SpanKind } from "../http/parse/spans.js";
import { SpanParts } from "../http/parse/span-parts.js";
import { closesAfter, EMPTY_LINE_LABEL, fieldRole, framingOf, keepAliveOf, TRAILER_NOTE, versionNote, type FramingAccount, type KeepAliveAccount } from "./explain.js";
import { charge, jsonBytes, sizeText, type Budget } from "./budget.js";
import { latin1, partMaker, utf8, type Decode, type PartKind, type PartMaker, type WirePart } from "./parts.js";

export type { PartKind, WirePart } from "./parts.js";

export interface RequestAccount {
  readonly start: number;
  readonly end: number;
  /**
   * complete: parsed and handed to the router; error: broke a rule; incomplete: the bytes ran out first;
   * refused: answered from its head alone (its route does not take that body), which is never read.
   */
  readonly state: "complete" | "error" | "incomplete" | "refused";
  readonly method?: string;
  readonly target?: string;
  readonly parts: WirePart[];
  /** How the body's end was decided (RFC 9112 §6.3); present once the head was accepted. */
  readonly framing?: FramingAccount;
  readonly keepAlive?: KeepAliveAccount;
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
  /**
   * Bytes the server never read: after a protocol error, a request that closes the connection, or one refused from its
   * head; or, from its first byte on, a request past the limit of one body (the run stops at its head, and runs none of them).
   */
  readonly unread: WirePart | null;
}

/** What the parser was reading: it names the part that bytes without a span of their own make. */
const enum Section {
  RequestLine,
  Head,
  Body,
  ChunkSize,
  ChunkData,
  Trailer,
}

/** The part made of a line the parser refused (the error is in it), or of the unfinished bytes at the end. */
const REFUSED: Readonly<Record<Section, readonly [PartKind, string]>> = {
  [Section.RequestLine]: ["request-line", "Request line"],
  [Section.Head]: ["field", "Line of the header section"],
  [Section.Body]: ["body", "Body"],
  [Section.ChunkSize]: ["chunk-size", "Chunk size line"],
  [Section.ChunkData]: ["chunk-end", "CR LF after the chunk data"],
  [Section.Trailer]: ["trailer", "Line of the trailer section"],
};
const UNFINISHED: Readonly<Record<Section, string>> = {
  [Section.RequestLine]: "Request line (unfinished)",
  [Section.Head]: "Line of the header section (unfinished)",
  [Section.Body]: "Body (unfinished)",
  [Section.ChunkSize]: "Chunk size line (unfinished)",
  [Section.ChunkData]: "CR LF after the chunk data (unfinished)",
  [Section.Trailer]: "Line of the trailer section (unfinished)",
};
const INCOMPLETE_NOTE = "The input ends here; on a socket the server would wait for the rest (and time out)";
/**
 * Bytes of text shown from the head past the limit on (the unread part):
 * the start of what was not run, and however much follows, no more work or
 * answer than that.
 */
export const PAST_LIMIT_SHOWN = 16 * 1024;

/** A request whose parts are being made. */
interface Open {
  readonly start: number;
  readonly parts: WirePart[];
  /** Empty lines read before its request line: shown once a request line (or anything else) follows them. */
  readonly empties: number[];
  head: RequestHead | null;
  method?: string;
  target?: string;
  section: Section;
  /** Body or chunk-data bytes read and not yet made into a part: [pieceStart, pieceEnd), -1 when none. */
  pieceStart: number;
  pieceEnd: number;
  /** The chunk being read, its size as its chunk-size span gives it. */
  chunkSize: number;
}

const LF = 0x0a;

/** A connection's trace whose account grows as the connection reads `bytes` (fed to it from their first byte). */
export class RequestReader implements ConnectionTrace {
  private readonly bytes: Buffer;
  private readonly budget: Budget | null;
  /** Heads the account may hold; the next one stops it (see over). */
  private readonly maxHeads: number;
  private readonly onOver: () => void;
  private heads = 0;
  /** Where the request past maxHeads begins; -1 while there is none. Past it, nothing more is told or made. */
  over = -1;
  /** Bytes past the limit that the unread part leaves out for PAST_LIMIT_SHOWN (not for the budget); set by account(). */
  pastLimitNotShown = 0;
  /** The budget as it stood when the open request began: a request past maxHeads gives back what its head cost. */
  private readonly before = { spent: 0, parts: 0, notShown: 0 };
  /** Bytes the connection was given to read. */
  private received_ = 0;
  /** The connection wrote a response after which it closes (Connection: close): it reads nothing more. */
  private closing = false;
  private refused = false;
  private readonly m: PartMaker;
  private readonly requests: RequestAccount[] = [];
  private broken: WireError | null = null;
  private cur: Open | null = null;
  /** Where the last span ended: the parts made so far tile the bytes up to here. */
  private pos = 0;
  /** The parts inside the line being read, and where the parser found an error. */
  private readonly inLine = new SpanParts();
  /** Past the budget: the bytes [omitFrom, pos) of the open request are one omitted stretch; -1 while parts are made. */
  private omitFrom = -1;
  private omitError = false;

  /**
   * `maxHeads`: the heads the account may hold; at the head of one more,
   * `onOver` is called (once), and the account stops growing.
   */
  constructor(bytes: Buffer, budget: Budget | null, maxHeads = Infinity, onOver: () => void = () => {}) {
    this.bytes = bytes;
    this.budget = budget;
    this.maxHeads = maxHeads;
    this.onOver = onOver;
    this.m = partMaker(bytes, budget, "request");
  }

  // ---- What the connection read ----

  received(chunk: Buffer): void {
    this.received_ += chunk.length;
  }

  span(kind: SpanKind, start: number, end: number): void {
    if (this.over >= 0 || this.inLine.note(kind, start, end)) return;
    switch (kind) {
      case "body":
      case "chunk-data": {
        const r = this.open();
        if (r.pieceStart < 0) r.pieceStart = start;
        r.pieceEnd = end;
        this.pos = end;
        return;
      }
      default:
        this.line(kind, start, end);
    }
  }

  private line(kind: SpanKind, start: number, end: number): void {
    const r = this.open();
    if (kind === "empty-line") {
      r.empties.push(start, end);
      this.pos = end;
      return;
    }
    this.flushEmpties(r);
    const text = (s: number, e: number) => latin1(this.bytes, s, e);
    switch (kind) {
      case "request-line": {
        r.method = text(this.inLine.s1, this.inLine.e1);
        r.target = text(this.inLine.s2, this.inLine.e2);
        r.section = Section.Head;
        if (!this.skip(start, end)) {
          this.add(r, "request-line", "Request line", start, end, `Method ${r.method}, target ${r.target}, version ${versionNote(text(this.inLine.s3, this.inLine.e3))}`);
        }
        return;
      }
      case "field-line":
      case "trailer-line": {
        if (this.skip(start, end)) return;
        const name = text(this.inLine.s1, this.inLine.e1);
        if (kind === "trailer-line") return this.add(r, "trailer", `Trailer field ${name}`, start, end, TRAILER_NOTE);
        const role = fieldRole(name);
        return this.add(r, "field", `Header field ${name}`, start, end, `Value "${text(this.inLine.s2, this.inLine.e2)}"${role === undefined ? "" : `: ${role}`}`);
      }
      case "blank-line":
        if (!this.skip(start, end)) this.add(r, "blank-line", "Blank line: the header section ends", start, end);
        return;
      case "chunk-size-line":
      case "last-chunk": {
        const hex = text(this.inLine.s1, this.inLine.e1);
        const size = parseInt(hex, 16);
        r.chunkSize = size;
        r.section = size === 0 ? Section.Trailer : Section.ChunkData;
        if (this.skip(start, end)) return;
        const note = this.inLine.s2 < 0 ? undefined : `Extension ${text(this.inLine.s2, this.inLine.e2)} (ignored)`;
        if (size === 0) return this.add(r, "last-chunk", "Last chunk (size 0): the body is complete", start, end, note);
        return this.add(r, "chunk-size", `Chunk size: 0x${hex} = ${size} bytes`, start, end, note);
      }
      case "chunk-end":
        this.flushPiece(r);
        r.section = Section.ChunkSize;
        if (!this.skip(start, end)) this.add(r, "chunk-end", "CR LF after the chunk data", start, end);
        return;
      case "trailer-end":
        if (!this.skip(start, end)) this.add(r, "blank-line", "Blank line: the chunked body ends", start, end);
        return;
      default:
        return;
    }
  }

  // ---- The parser's verdicts, the connection's decisions ----

  head(head: RequestHead): void {
    if (this.over >= 0) return;
    const r = this.open();
    if (++this.heads > this.maxHeads) {
      // Not a request of the account: the bytes from its start (its head, the empty lines before it) are the
      // unread part (account()), so the parts made of its head are dropped, their cost given back, and the
      // reader left as it was at that first byte.
      this.over = r.start;
      this.cur = null;
      this.pos = r.start;
      this.omitFrom = -1;
      this.omitError = false;
      if (this.budget !== null) {
        this.budget.spent = this.before.spent;
        this.budget.parts = this.before.parts;
        this.budget.requestBytesNotShown = this.before.notShown;
      }
      this.onOver();
      return;
    }
    r.head = head;
    r.section = head.framing.kind === "chunked" ? Section.ChunkSize : Section.Body;
  }

  refusedFromHead(): void {
    if (this.over >= 0) return;
    this.refused = true;
    this.finish(this.open(), "refused");
  }

  request(): void {
    if (this.over >= 0) return;
    const r = this.cur!;
    this.flushPiece(r);
    this.finish(r, "complete");
  }

  error(e: ProtocolError): void {
    if (this.over >= 0) return;
    const r = this.open();
    this.flushEmpties(r);
    this.flushPiece(r);
    const at = this.inLine.errorAt;
    if (at < this.pos) {
      // The head refused as a whole, at its blank line: a part already made holds the byte.
      if (this.omitFrom >= 0 && at >= this.omitFrom) this.omitError = true;
      else {
        const i = r.parts.findLastIndex((p) => p.start <= at && at < p.end);
        if (i >= 0) r.parts[i] = { ...r.parts[i]!, error: true };
      }
    } else {
      // The line the parser refused, whole; after chunk data, only up to the byte that is not its CR LF.
      const [kind, label] = REFUSED[r.section];
      const lf = this.bytes.indexOf(LF, at);
      const end = r.section === Section.ChunkData ? at + 1 : lf === -1 ? this.bytes.length : lf + 1;
      if (this.skip(this.pos, end)) this.omitError = true;
      else this.add(r, kind, label, this.pos, end, undefined, latin1, true);
    }
    const kind = PROTOCOL_ERRORS[e.code];
    const error: WireError = { code: e.code, status: e.status, title: kind.title, rule: kind.rule, detail: e.detail, offset: at, request: this.requests.length, offsetInRequest: e.offset };
    if (this.budget !== null) charge(this.budget, error);
    this.broken = error;
    this.finish(r, "error");
  }

  response(head: string): void {
    if (closesAfter(head)) this.closing = true;
  }

  closed(): void {}

  // ---- Parts ----

  /** The request being read, opened where the last one ended. */
  private open(): Open {
    if (this.cur !== null) return this.cur;
    if (this.budget !== null) {
      this.before.spent = this.budget.spent;
      this.before.parts = this.budget.parts;
      this.before.notShown = this.budget.requestBytesNotShown;
    }
    this.cur = { start: this.pos, parts: [], empties: [], head: null, section: Section.RequestLine, pieceStart: -1, pieceEnd: -1, chunkSize: 0 };
    return this.cur;
  }

  /** True when the bytes [start, end) join the omitted stretch: the budget is spent. */
  private skip(start: number, end: number): boolean {
    if (this.omitFrom < 0) {
      if (!this.m.exhausted()) return false;
      this.omitFrom = start;
    }
    this.pos = end;
    return true;
  }

  private add(r: Open, kind: PartKind, label: string, start: number, end: number, note?: string, decode: Decode = latin1, error = false): void {
    const p = this.m.part(kind, label, start, end, note, decode);
    this.m.push(r.parts, error ? { ...p, error: true } : p);
    this.pos = end;
  }

  private flushEmpties(r: Open): void {
    const e = r.empties;
    for (let i = 0; i < e.length; i += 2) if (!this.skip(e[i]!, e[i + 1]!)) this.add(r, "empty-line", EMPTY_LINE_LABEL, e[i]!, e[i + 1]!);
    e.length = 0;
  }

  /** The body or chunk data read since the last piece was shown, as one part. */
  private flushPiece(r: Open): void {
    const start = r.pieceStart;
    if (start < 0) return;
    const end = r.pieceEnd;
    r.pieceStart = -1;
    if (this.skip(start, end)) return;
    const n = end - start;
    let label: string;
    if (r.section === Section.Body) {
      const length = r.head!.framing.kind === "length" ? r.head!.framing.length : n;
      label = n === length ? `Body (${length} bytes, by Content-Length)` : `Body: ${n} of the ${length} bytes Content-Length announced`;
    } else {
      label = n === r.chunkSize ? `Chunk data (${n} bytes)` : `Chunk data: ${n} of the ${r.chunkSize} bytes its size announced`;
    }
    this.add(r, r.section === Section.Body ? "body" : "chunk-data", label, start, end, undefined, utf8);
  }

  private finish(r: Open, state: RequestAccount["state"]): void {
    if (this.omitFrom >= 0) {
      const p = this.m.part("omitted", "", this.omitFrom, this.pos);
      this.m.push(r.parts, this.omitError ? { ...p, error: true } : p);
      this.omitFrom = -1;
      this.omitError = false;
    }
    const head = r.head;
    const described = {
      start: r.start,
      end: this.pos,
      state,
      ...(r.method === undefined ? {} : { method: r.method }),
      ...(r.target === undefined ? {} : { target: r.target }),
      ...(head === null ? {} : { framing: framingOf(head), keepAlive: keepAliveOf(head) }),
    };
    if (this.budget !== null) charge(this.budget, described);
    this.requests.push({ ...described, parts: r.parts });
    this.cur = null;
  }

  /**
   * The bytes from the head past the limit to the end, as one unread part
   * whose text is at most their first PAST_LIMIT_SHOWN bytes; the rest is
   * counted in `omitted` and in pastLimitNotShown, never decoded.
   */
  private pastLimit(len: number): WirePart {
    const n = this.maxHeads;
    const label = `Not run: the wire view runs at most ${n} requests of one body, and stopped at the head of request ${n + 1}, which begins here; send it and what follows in another body`;
    let end = Math.min(len, this.over + PAST_LIMIT_SHOWN);
    // Never inside a UTF-8 sequence: its first bytes would show as U+FFFD, a character the input does not hold.
    while (end > this.over && end < len && (this.bytes[end]! & 0xc0) === 0x80) end--;
    const p = this.m.part("unread", label, this.over, end, undefined, utf8);
    const rest = len - end;
    if (rest === 0) return p;
    this.pastLimitNotShown = rest;
    // What the budget left out of the first bytes (all of them, for an omitted part), and the rest.
    const cut = p.omitted ?? 0;
    const part: WirePart = {
      ...p,
      end: len,
      omitted: cut + rest,
      note:
        `The first ${end - this.over - cut} of these ${len - this.over} bytes are shown: the wire view shows at most ${sizeText(PAST_LIMIT_SHOWN)} of the bytes it did not run` +
        (cut === 0 ? "" : ", and its output budget was spent before those"),
    };
    // An omitted part is charged whole once made (account()); another was charged as made, and now grows.
    if (this.budget !== null && p.kind !== "omitted") this.budget.spent += jsonBytes(part) - jsonBytes(p);
    return part;
  }

  /** The account, once the connection has read all it will (the run is over). */
  account(): RequestStreamAccount {
    const len = this.bytes.length;
    let unread: WirePart | null = null;
    const r = this.cur;
    if (this.over >= 0) {
      // The run stopped at the head of a request past the limit: neither it nor anything after it was run, or read on.
      unread = this.pastLimit(len);
    } else if (r !== null && r.parts.length === 0 && r.method === undefined && r.pieceStart < 0 && this.omitFrom < 0 && this.pos === len) {
      // Only empty lines since the last request: ignored, and no request began.
      unread = this.m.part("unread", "Empty lines after the last request: ignored (RFC 9112 §2.2)", r.start, len);
      this.cur = null;
    } else if (r !== null) {
      this.flushEmpties(r);
      this.flushPiece(r);
      if (this.pos < len && !this.skip(this.pos, len)) this.add(r, "incomplete", UNFINISHED[r.section], this.pos, len, INCOMPLETE_NOTE);
      this.finish(r, "incomplete");
    } else if (this.pos < len) {
      // The connection stopped reading, or was never given these bytes; else they begin a request it was still reading.
      if (this.broken !== null || this.refused || this.closing || this.received_ < len) {
        const why =
          this.broken !== null
            ? "Never read: after a protocol error the server answers and closes the connection"
            : this.refused
              ? "Never read: the request before it was answered from its head, and its body could not be told from a next request, so the connection closes (RFC 9112 §9.6)"
              : this.closing
                ? "Never read: the request before it closes the connection (RFC 9112 §9.6)"
                : "Never read: the connection was closed before it read them";
        unread = this.m.part("unread", why, this.pos, len, undefined, utf8);
      } else {
        // The first line of a next request, unfinished: the parser has reported nothing of it yet.
        const next = this.open();
        if (!this.skip(this.pos, len)) this.add(next, "incomplete", UNFINISHED[Section.RequestLine], this.pos, len, INCOMPLETE_NOTE);
        this.finish(next, "incomplete");
      }
    }
    if (unread?.kind === "omitted" && this.budget !== null) charge(this.budget, unread);
    return { bytes: len, requests: this.requests, error: this.broken, unread };
  }
}
