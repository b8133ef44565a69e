// The verdict on a line, or on the start of one, from the bytes alone: its
// syntax so far (line-scan.ts), a CR followed by anything but LF (a bare CR,
// RFC 9112 §2.2), and its limit. Each rule is decided by the earliest byte
// that shows it (the offending byte; the byte after the CR; the first byte
// past the limit, unless that byte is a CR that may yet end the line), and
// the earliest one wins. Unfinished and whole lines are judged by this same
// function, so a verdict never depends on where the stream was cut. (A whole
// line that breaks no rule may be read by clean-line.ts instead, which takes
// only lines this judge takes: a line it leaves comes here.)

import { CR } from "./byte-classes.js";
import type { ParserLimits } from "./limits.js";
import { endFieldLine, fieldBounds, scanFieldLine, scanRequestLine, startScan, type FieldBounds, type FieldContext, type LineScan, type ScanError } from "./line-scan.js";
import { requestLineTooLong } from "./request-line.js";

export type LineKind = "request-line" | "header-line" | "trailer-line" | "chunk-size-line";

/** What a line's verdict depends on besides its bytes; the parser keeps one and refills it per line. */
export interface LineContext {
  kind: LineKind;
  /** How many bytes the line may hold before it breaks a limit. */
  room: number;
  readonly limits: ParserLimits;
  /** For field lines. */
  readonly field: FieldContext;
}

const NOT_SEARCHED = -2;

/** The first CR in buf[s, n), or -1. */
function firstCr(buf: Buffer, s: number, n: number): number {
  // With the line's own CR at n - 1 the search stops there; otherwise search only the line.
  if (buf[n - 1] === CR) return buf.indexOf(CR, s);
  const i = buf.subarray(s, n).indexOf(CR);
  return i === -1 ? -1 : s + i;
}

/**
 * Judges buf[s, n), a line or the start of one (no LF in it); `scan` carries
 * how far an unfinished line was already judged (null for chunk-size lines,
 * whose grammar is read when they end). Returns the first rule broken, or null.
 */
export function judgeLineSoFar(buf: Buffer, s: number, n: number, scan: LineScan | null, ctx: LineContext): ScanError | null {
  if (n <= s) return null;
  const over = s + ctx.room;
  const overShownBy = over < n && buf[over] !== CR ? over : Infinity;
  // The syntax of the line so far. The scan stops at a CR, and never moves past one, so
  // buf[s, scan.at) holds no CR (earlier pieces of the line included).
  let crAt = NOT_SEARCHED;
  if (scan !== null) {
    const end = Math.min(n, over);
    const scanned = ctx.kind === "request-line" ? scanRequestLine(buf, end, scan) : scanFieldLine(buf, end, scan, ctx.field);
    if (scanned !== null) {
      if (scanned.at < overShownBy) return scanned;
    } else if (scan.at < end) {
      crAt = scan.at; // where it stopped: the line's first CR
    } else if (end === n) {
      crAt = -1; // it read the whole line and found none
    }
  }
  if (crAt === NOT_SEARCHED) crAt = firstCr(buf, s, n);
  const crShownBy = crAt !== -1 && crAt + 1 < n ? crAt + 1 : Infinity;
  if (crShownBy === Infinity && overShownBy === Infinity) return null;
  if (crShownBy <= overShownBy) return { code: "BARE_CR", what: "A CR is not followed by LF", at: crAt };
  const limits = ctx.limits;
  switch (ctx.kind) {
    case "request-line":
      return requestLineTooLong(buf, s, over + 1, limits.maxRequestLineBytes);
    case "header-line":
      return { code: "HEADERS_TOO_LARGE", what: `The header section is larger than ${limits.maxHeaderBytes} bytes`, at: s };
    case "trailer-line":
      return { code: "HEADERS_TOO_LARGE", what: `The trailer section is larger than ${limits.maxHeaderBytes} bytes`, at: s };
    case "chunk-size-line":
      return { code: "CHUNK_EXTENSIONS_TOO_LARGE", what: `A chunk-size line is longer than the ${limits.maxChunkExtensionBytes}-byte extension limit allows`, at: s };
  }
}

/** Which piece of a line is judged: all of it, or the start of an unfinished one (its first piece, or a later one). */
export type LinePiece = "whole" | "first" | "more";

/**
 * One parser's judge of its lines. It keeps how far an unfinished line was
 * judged, so that each byte is looked at once, however many pieces the line
 * comes in; nothing is allocated per line.
 */
export class LineJudge {
  /** The unfinished line's scan, carried from piece to piece. */
  private readonly partialScan: LineScan = { phase: 0, at: 0, count: 0, mark: 0, split: -1 };
  /** The scan of a line that arrived whole; the parser reads its marks (the method's end, the colon) after. */
  readonly whole: LineScan = { phase: 0, at: 0, count: 0, mark: 0, split: -1 };
  private readonly ctx: LineContext;

  constructor(limits: ParserLimits) {
    const field: FieldContext = { fields: 0, maxFields: limits.maxHeaderCount, contentLengthSeen: false, trailer: false };
    this.ctx = { kind: "request-line", room: 0, limits, field };
  }

  /**
   * Judges buf[s, n), a whole line without its LF or the start of one
   * (`piece`). `room` is what the line may hold; `fields` and
   * `contentLengthSeen` say what its section held before it.
   */
  judge(buf: Buffer, s: number, n: number, piece: LinePiece, kind: LineKind, room: number, fields: number, contentLengthSeen: boolean): ScanError | null {
    let scan: LineScan | null = null;
    if (kind !== "chunk-size-line") {
      scan = piece === "whole" ? this.whole : this.partialScan;
      if (piece !== "more") startScan(scan, kind === "request-line" ? "request-line" : "field-line", s);
    }
    const ctx = this.ctx;
    ctx.kind = kind;
    ctx.room = room;
    ctx.field.fields = fields;
    ctx.field.contentLengthSeen = contentLengthSeen;
    ctx.field.trailer = kind === "trailer-line";
    return judgeLineSoFar(buf, s, n, scan, ctx);
  }

  /**
   * After judge() took a whole field line buf[s, e): what its end says (a
   * colon missing, say), or where its name ends and its value lies without
   * the OWS around it, in `into`.
   */
  fieldParts(buf: Buffer, e: number, into: FieldBounds): ScanError | null {
    const ended = endFieldLine(buf, e, this.whole);
    if (ended === null) fieldBounds(buf, this.whole.split, e, into);
    return ended;
  }
}
