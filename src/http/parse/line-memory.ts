// A cache in front of the scanner (line-scan.ts): the lines a connection sent last time. An HTTP/1.1 client repeats itself:
// on a keep-alive connection most of each head (Host, User-Agent, Accept...)
// is the previous head's byte for byte, and a polling client repeats its
// request line too. HTTP/2 turned that redundancy into compression (HPACK,
// RFC 7541 §2.3); here it saves work, not bytes: a line equal to the one at
// the same place in the last head is taken with what it meant then, without
// being scanned or made into strings again.
//
// It judges nothing: it holds copies of what the scanner concluded about a
// line (where its parts lie) and what the parser made of it (the request
// line, a field's name and value), keyed by the line's exact bytes. Sound
// because a line's verdict and meaning depend on its bytes alone, within
// limits that are the parser's for its whole life: the same bytes, found
// sound once, are sound again. What depends on more than the line (the room
// left in the header section, a second Content-Length, Host, the number of
// fields) is asked of the section's rules (section-rules.ts) for every
// recalled line, as for a scanned one.
//
// Cheap when lines do not repeat: a line of another length is told apart by
// one byte (no LF where the kept line's LF was), a line of the same length is
// compared from its end (where values and targets vary), and keeping one is a
// copy of at most SLOT_BYTES. A place whose line differed MISSES heads running
// (a browser's request line, a varying value) is left alone for the next
// QUIET heads, so that a client whose lines never repeat pays for a
// comparison and a keep in about 1 head of 20.
//
// Copied, never referred to: a kept line that pointed into the read it came
// in would hold that read (and the bodies in it) for as long as the
// connection lives, and would compare equal to anything a transport later
// wrote into the same buffer, taking unchecked bytes with an old meaning.
//
// Bounded: SLOTS places of SLOT_BYTES (1 KiB in all), made at a connection's second
// head, so one that sends a single request and stays open holds nothing; a
// longer line is not remembered.

import type { RequestLine } from "./request-line.js";

/** Places: the request line, then the first SLOTS - 1 field lines of a head. */
export const SLOTS = 8;
/** The longest line remembered, CR LF included. */
export const SLOT_BYTES = 128;

/** Heads running whose line in a place differed from the one kept there, before the place is left alone... */
export const MISSES = 3;
/** ...for this many heads. */
export const QUIET = 64;

const EMPTY = Buffer.alloc(0);
// The imported binding is checked (initialized yet?) at every use; a literal is not.
const LINE_FEED = 0x0a;

export class LineMemory {
  /** 0 until the places are made (at the second head whose request line is read in one pass), SLOTS after. */
  private places = 0;
  /** Heads whose request line was read in one pass, until the places are made. */
  private heads = 0;
  /** The kept lines, CR LF included: place k's is bytes[k * SLOT_BYTES, + lengths[k]). */
  private bytes: Buffer = EMPTY;
  /** 0 when the place is empty. */
  private lengths: number[] = [];
  private requestLine: RequestLine | null = null;
  /** What the scanner found in each kept line, as offsets from its first byte: split, mark, valueEnd (line-scan.ts, Scan). */
  private marks: number[] = [];
  private names: string[] = [];
  private values: string[] = [];
  /** Heads running whose line differed from the kept one, by place. */
  private misses: number[] = [];
  /** Heads taken so far (counted from the second), and, by place, the head from which it is asked again. */
  private head = 0;
  private wake: number[] = [];

  /**
   * Whether buf[pos...] begins with the line kept in place `slot`, whole and
   * at most `room` bytes long: the index of its LF, or -1.
   */
  recall(buf: Buffer, pos: number, slot: number, room: number): number {
    if (this.asleep(slot)) return -1;
    const n = this.lengths[slot]!;
    const lf = pos + n - 1;
    // Nothing kept, no room, or cut by the end of the read: no verdict on whether lines repeat here.
    if (n === 0 || n > room || lf >= buf.length) return -1;
    if (buf[lf] !== LINE_FEED) return this.missed(slot);
    const kept = this.bytes;
    const at = slot * SLOT_BYTES;
    // From the end, four bytes a step, their differences or-ed (one branch per four; callgrind: ~20% fewer instructions than a byte a step).
    let j = n - 2;
    for (; j >= 3; j -= 4) {
      if (((buf[pos + j]! ^ kept[at + j]!) | (buf[pos + j - 1]! ^ kept[at + j - 1]!) | (buf[pos + j - 2]! ^ kept[at + j - 2]!) | (buf[pos + j - 3]! ^ kept[at + j - 3]!)) !== 0) return this.missed(slot);
    }
    for (; j >= 0; j--) if (buf[pos + j] !== kept[at + j]) return this.missed(slot);
    this.misses[slot] = 0;
    return lf;
  }

  /**
   * Whether place `slot` is left alone in this head (not made, or its lines
   * differed MISSES heads running): then the parser neither recalls nor keeps
   * its line, and pays this one check for it.
   */
  asleep(slot: number): boolean {
    return slot >= this.places || this.head < this.wake[slot]!;
  }

  /** Whether keepRequestLine has work: the places are not made yet (it counts heads), or place 0 is awake. */
  keepsRequestLine(): boolean {
    return this.places === 0 || this.head >= this.wake[0]!;
  }

  /** A head's request line was taken (read or recalled): the count that wakes places moves on. */
  headTaken(): void {
    this.head++;
  }

  /** What the request line in place 0 meant. Only after recall(..., 0, ...) found it. */
  get line(): RequestLine {
    return this.requestLine!;
  }

  /** The lower-cased name of the field line in `slot`. Only after recall found it. */
  name(slot: number): string {
    return this.names[slot]!;
  }

  /** The value, without OWS, of the field line in `slot`. Only after recall found it. */
  value(slot: number): string {
    return this.values[slot]!;
  }

  /** The scanner's marks in the line kept in `slot` (0: split, 1: mark, 2: valueEnd). Only after recall found it. */
  mark(slot: number, which: 0 | 1 | 2): number {
    return this.marks[slot * 3 + which]!;
  }

  /** The request line buf[pos, lf] was read and meant `line`; the scanner found its parts at `split` and `mark`. */
  keepRequestLine(buf: Buffer, pos: number, lf: number, line: RequestLine, split = 0, mark = 0): void {
    if (this.places === 0) {
      if (++this.heads < 2) return;
      this.makePlaces();
    }
    if (this.asleep(0)) return;
    const kept = this.keep(buf, pos, lf, 0);
    this.requestLine = kept ? line : null;
    if (kept) this.keepMarks(0, split, mark, 0);
  }

  /** The field line buf[pos, lf], at place `slot` of its head, was read as name: value, its parts at split, mark, valueEnd. */
  keepField(buf: Buffer, pos: number, lf: number, slot: number, name: string, value: string, split = 0, mark = 0, valueEnd = 0): void {
    if (this.asleep(slot)) return;
    const kept = this.keep(buf, pos, lf, slot);
    this.names[slot] = kept ? name : "";
    this.values[slot] = kept ? value : "";
    if (kept) this.keepMarks(slot, split, mark, valueEnd);
  }

  private keepMarks(slot: number, split: number, mark: number, valueEnd: number): void {
    const marks = this.marks;
    marks[slot * 3] = split;
    marks[slot * 3 + 1] = mark;
    marks[slot * 3 + 2] = valueEnd;
  }

  private makePlaces(): void {
    this.places = SLOTS;
    this.bytes = Buffer.allocUnsafeSlow(SLOTS * SLOT_BYTES);
    this.lengths = new Array<number>(SLOTS).fill(0);
    this.names = new Array<string>(SLOTS).fill("");
    this.values = new Array<string>(SLOTS).fill("");
    this.misses = new Array<number>(SLOTS).fill(0);
    this.wake = new Array<number>(SLOTS).fill(0);
    this.marks = new Array<number>(SLOTS * 3).fill(0);
  }

  private missed(slot: number): -1 {
    if (++this.misses[slot]! >= MISSES) {
      this.misses[slot] = 0;
      // Left alone for the next QUIET heads: asleep while head <= (this head) + QUIET.
      this.wake[slot] = this.head + QUIET + 1;
      this.lengths[slot] = 0;
    }
    return -1;
  }

  private keep(buf: Buffer, pos: number, lf: number, slot: number): boolean {
    const n = lf + 1 - pos;
    if (n > SLOT_BYTES) {
      this.lengths[slot] = 0;
      return false;
    }
    buf.copy(this.bytes, slot * SLOT_BYTES, pos, lf + 1);
    this.lengths[slot] = n;
    return true;
  }
}
