// A cache in front of the scanner (line-scan.ts): the head a connection sent
// last time. An HTTP/1.1 client repeats itself: a polling client, a load
// generator, a health check or a script in a loop sends the same request line
// and the same fields, byte for byte, on each request of a keep-alive
// connection. HTTP/2 turned that redundancy into compression (HPACK, RFC 7541
// §2.3); here it saves work, not bytes: a head equal to the last one is taken
// with what it meant then, without its lines being scanned, its fields made
// into strings or the head judged again; only the request object handed on
// is new (head-framing.ts, headAgain).
//
// It judges nothing: it holds copies of what the parser concluded about a
// whole head (the request line read, the request handed on, where each part
// lay), keyed by the head's exact bytes, from its request line to its empty
// line. Sound because a head's verdict and meaning depend on those bytes
// alone, within limits that are the parser's for its whole life: the header
// section starts afresh at each request line, so the same bytes, found sound
// once, are sound again. What depends on more than the head (a route's lower
// body limit, a body too large for it, the 100 Continue) is asked after it,
// for a recalled head as for a read one (parser.ts, frame).
//
// Cheap when heads do not repeat: a head of another length is told apart by
// one byte (no LF where the kept head's last LF was), one of the same length
// by a compare that stops at the first difference, and keeping one is a copy
// of it. A connection whose heads differed MISSES times running is left alone
// for the next QUIET heads, so that a client whose heads never repeat (a
// browser: new targets, new cookies) pays for a comparison and a keep in
// about 1 head of 20.
//
// Copied, never referred to: a kept head that pointed into the read it came
// in would hold that read (and the bodies in it) for as long as the
// connection lives, and would compare equal to anything a transport later
// wrote into the same buffer, taking unchecked bytes with an old meaning.
//
// Bounded: at most MAX_HEAD_BYTES, made at a connection's second head, so one
// that sends a single request and stays open holds nothing.

import type { Request } from "../message/request.js";
import type { RequestLine } from "./request-line.js";
import { fieldSpans, requestLineSpans, type SpanListener } from "./spans.js";

/** The longest head remembered, from its request line to its empty line, both included. */
export const MAX_HEAD_BYTES = 1024;
/** Heads running that differed from the one kept, before the memory is left alone... */
export const MISSES = 3;
/** ...for this many heads. */
export const QUIET = 64;

const EMPTY = new Uint8Array(0);
const EMPTY_WORDS = new Int32Array(0);
// The imported binding is checked (initialized yet?) at every use; a literal is not.
const LINE_FEED = 0x0a;

/**
 * Where a read is copied to be compared four bytes at a time. Reading a
 * Buffer byte by byte costs node 20's optimized code about 18 instructions a
 * byte (bounds and overflow checks on every access): some 1,000 for a 54-byte
 * head, as much as the rest of a recalled head's parsing. Native compares
 * (Buffer.equals, Buffer.compare) and a typed-array view over the read cost as
 * much again in their calls and allocations. Copying the read into memory made
 * once (TypedArray.set: a memcpy) and comparing words costs about half
 * (callgrind). Longer reads (many pipelined heads, or large ones) are compared
 * byte by byte where they lie.
 *
 * A read is copied once, however many heads it holds: copying it again for
 * each of them cost a pipelined read of n heads n copies of itself. Shared by
 * every parser, so it says whose read it holds (see recall).
 */
export const SCRATCH_BYTES = 4096;
const SCRATCH_WORDS = new Int32Array(SCRATCH_BYTES / 4);
const SCRATCH = new Uint8Array(SCRATCH_WORDS.buffer);
/** Whose read SCRATCH holds: that memory's id and its read number (0, -1: nobody's). */
let scratchOwner = 0;
let scratchRead = -1;
/** The ids of memories: one each, so that a copy is never taken for another memory's. */
let memories = 0;
/** Words are put together from two across a head's misalignment below; the shifts assume the low byte first. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * Whether SCRATCH[pos, pos + n - 1) equals the kept head's first n - 1 bytes
 * (its last, the LF, is the caller's), compared a word at a time from the
 * end, where values and targets vary. A head that does not start on a word
 * is read as the bytes of two words, shifted together.
 */
function sameWords(pos: number, keptWords: Int32Array, keptBytes: Uint8Array, n: number): boolean {
  // Module constants are checked for initialization at each use: read once, into locals.
  const words = SCRATCH_WORDS;
  const bytes = SCRATCH;
  const first = pos >> 2;
  const misaligned = pos & 3;
  // The words wholly before the LF, then the bytes between them and the LF.
  const whole = (n - 1) >> 2;
  if (misaligned === 0) {
    for (let w = whole - 1; w >= 0; w--) if (words[first + w] !== keptWords[w]) return false;
  } else {
    const low = misaligned * 8;
    const high = 32 - low;
    // The last word read, first + whole, starts at most at byte pos + n - 2 (pos is not on a word): within the read.
    for (let w = whole - 1; w >= 0; w--) if (((words[first + w]! >>> low) | (words[first + w + 1]! << high)) !== keptWords[w]) return false;
  }
  for (let j = whole * 4, at = pos + j; j < n - 1; j++, at++) if (bytes[at] !== keptBytes[j]) return false;
  return true;
}

/** The same, byte by byte where buf lies: four bytes a step, their differences or-ed (one branch per four). */
function sameBytes(buf: Uint8Array, pos: number, kept: Uint8Array, n: number): boolean {
  let j = n - 2;
  for (; j >= 3; j -= 4) {
    if (((buf[pos + j]! ^ kept[j]!) | (buf[pos + j - 1]! ^ kept[j - 1]!) | (buf[pos + j - 2]! ^ kept[j - 2]!) | (buf[pos + j - 3]! ^ kept[j - 3]!)) !== 0) return false;
  }
  for (; j >= 0; j--) if (buf[pos + j] !== kept[j]) return false;
  return true;
}

export class HeadMemory {
  private readonly id = ++memories;
  /** The kept head: bytes[0, length), and the same memory as 32-bit words for the compare. 0 when none is kept. */
  private bytes: Uint8Array = EMPTY;
  private words: Int32Array = EMPTY_WORDS;
  private length = 0;
  /** Where its empty line starts. */
  private blankAt = 0;
  private requestLine: RequestLine | null = null;
  private request: Request | null = null;
  /**
   * Where the parts of the kept head lie, for a span listener (none without
   * one): the request line's methodEnd, versionStart, end and length, then
   * each field line's start, colon, value start, value end and length.
   */
  private marks: number[] = [];
  /** The marks of the head being read, kept with it when it is. */
  private reading: number[] = [];
  /** Heads taken so far. */
  private heads = 0;
  /** Heads running that differed from the kept one. */
  private misses = 0;
  /** The head from which the memory is asked again. */
  private wake = 0;

  /**
   * Whether buf[pos...] begins with the kept head, whole: its length, or 0.
   * Call before a head's first byte is read; once per head. `read` numbers
   * the caller's reads: a new number for each, the same for every head of
   * one, whose bytes must not change in between (the parser's own rule). A
   * copy of the read is compared only while it is this memory's and of this
   * read; anything else is copied again.
   */
  recall(buf: Buffer, pos: number, read: number): number {
    const n = this.length;
    if (n === 0) return 0;
    const end = pos + n;
    // Cut by the end of the read: no verdict on whether heads repeat.
    if (end > buf.length) return 0;
    if (buf[end - 1] !== LINE_FEED) return this.missed();
    let same: boolean;
    if (buf.length > SCRATCH_BYTES || (!LITTLE_ENDIAN && (pos & 3) !== 0)) same = sameBytes(buf, pos, this.bytes, n);
    else {
      if (scratchRead !== read || scratchOwner !== this.id) {
        SCRATCH.set(buf);
        scratchOwner = this.id;
        scratchRead = read;
      }
      same = sameWords(pos, this.words, this.bytes, n);
    }
    if (!same) return this.missed();
    this.misses = 0;
    return n;
  }

  /** What the recalled head's request line meant. Only after recall found it. */
  get line(): RequestLine {
    return this.requestLine!;
  }

  /** What the recalled head was handed on as, the last time it was read. Only after recall found it. */
  get head(): Request {
    return this.request!;
  }

  /** Where the recalled head's empty line starts, from its first byte. Only after recall found it. */
  get blank(): number {
    return this.blankAt;
  }

  /** A head was taken (read or recalled): the count that wakes the memory moves on. */
  headTaken(): void {
    this.heads++;
  }

  // The parts of the head being read, for a span listener: called only when there is one.

  /** The request line buf[0, e) of the head (methodEnd, versionStart: the scanner's marks), lineBytes long. */
  markRequestLine(methodEnd: number, versionStart: number, e: number, lineBytes: number): void {
    const m = this.reading;
    m.length = 0;
    m.push(methodEnd, versionStart, e, lineBytes);
  }

  /** A field line at `s` of the head, its name ending at `colon`, its value [vs, ve), lineBytes long. */
  markField(s: number, colon: number, vs: number, ve: number, lineBytes: number): void {
    this.reading.push(s, colon, vs, ve, lineBytes);
  }

  /** The spans of the recalled head's request line and field lines, as the parser reports them for a head it reads; abs is where the head starts in the stream. */
  replay(to: SpanListener, abs: number): void {
    const m = this.marks;
    requestLineSpans(to, 0, m[0]!, m[1]!, m[2]!, abs, m[3]!);
    for (let i = 4; i < m.length; i += 5) fieldSpans(to, false, m[i]!, m[i + 1]!, m[i + 2]!, m[i + 3]!, abs + m[i]!, m[i + 4]!);
  }

  /**
   * The head buf[pos, pos + n), read in one piece, meant `line` and was
   * handed on as `request`; its empty line starts at pos + blankAt. Kept
   * from the connection's second head on, unless the memory is asleep.
   */
  keep(buf: Buffer, pos: number, n: number, blankAt: number, line: RequestLine, request: Request): void {
    // Asleep (left alone): nothing is kept, so nothing is recalled either.
    if (this.heads < 2 || this.heads < this.wake) return;
    if (n > MAX_HEAD_BYTES) {
      this.forget();
      return;
    }
    if (this.bytes.length < n) {
      // Whole words, so that the compare can read them four bytes at a time.
      this.words = new Int32Array(Math.ceil(Math.min(MAX_HEAD_BYTES, Math.max(n, 2 * this.bytes.length)) / 4));
      this.bytes = new Uint8Array(this.words.buffer);
    }
    buf.copy(this.bytes, 0, pos, pos + n);
    this.length = n;
    this.blankAt = blankAt;
    this.requestLine = line;
    // Handed on again with each recall (headAgain): frozen, so that no request can change another's fields.
    Object.freeze(request.fields);
    this.request = request;
    const marks = this.marks;
    this.marks = this.reading;
    this.reading = marks;
  }

  private missed(): 0 {
    if (++this.misses >= MISSES) {
      this.misses = 0;
      // Left alone for the next QUIET heads: this head is number heads + 1, the first kept again heads + QUIET + 2.
      this.wake = this.heads + QUIET + 2;
      this.forget();
    }
    return 0;
  }

  private forget(): void {
    this.length = 0;
    this.requestLine = null;
    this.request = null;
  }
}
