// The lines a connection sent last time. An HTTP/1.1 client repeats itself:
// on a keep-alive connection most of each head (Host, User-Agent, Accept...)
// is the previous head's byte for byte, and a polling client repeats its
// request line too. HTTP/2 turned that redundancy into compression (HPACK,
// RFC 7541 §2.3); here it saves work, not bytes: a line equal to the one at
// the same place in the last head is taken with what it meant then, without
// being scanned or made into strings again.
//
// Sound because a line's verdict and meaning depend on its bytes alone: the
// same bytes, judged sound once, are sound again. What depends on more than
// the line (the room left in the header section, a second Content-Length, a
// second Host, the number of fields) the parser still judges for every head.
//
// Bounded: one buffer of SLOTS * SLOT_BYTES per connection, made when the
// first line is kept; a longer line is not remembered. A line that does not
// repeat costs a comparison that stops at its first differing byte, and a
// copy of at most SLOT_BYTES when it is kept in its place.

import type { RequestLine } from "./request-line.js";

/** Places: the request line, then the first SLOTS - 1 field lines of a head. */
export const SLOTS = 8;
/** The longest line remembered, CR LF included. */
export const SLOT_BYTES = 128;

export class LineMemory {
  private bytes: Uint8Array | null = null;
  /** Bytes of the line in each place, CR LF included; 0 when the place is empty. */
  private readonly lengths: number[] = new Array<number>(SLOTS).fill(0);
  private requestLine: RequestLine | null = null;
  private readonly names: string[] = new Array<string>(SLOTS).fill("");
  private readonly values: string[] = new Array<string>(SLOTS).fill("");

  /**
   * Whether buf[pos...] begins with the line kept in place `slot`, whole and
   * at most `room` bytes long: the index of its LF, or -1.
   */
  recall(buf: Buffer, pos: number, slot: number, room: number): number {
    if (slot >= SLOTS) return -1;
    const n = this.lengths[slot]!;
    if (n === 0 || n > room || pos + n > buf.length) return -1;
    const mem = this.bytes!;
    const at = slot * SLOT_BYTES;
    for (let j = 0; j < n; j++) if (buf[pos + j] !== mem[at + j]) return -1;
    return pos + n - 1;
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

  /** The request line buf[pos, lf] was read and meant `line`. */
  keepRequestLine(buf: Buffer, pos: number, lf: number, line: RequestLine): void {
    this.requestLine = this.keep(buf, pos, lf, 0) ? line : null;
  }

  /** The field line buf[pos, lf], at place `slot` of its head, was read as name: value. */
  keepField(buf: Buffer, pos: number, lf: number, slot: number, name: string, value: string): void {
    if (slot >= SLOTS) return;
    const kept = this.keep(buf, pos, lf, slot);
    this.names[slot] = kept ? name : "";
    this.values[slot] = kept ? value : "";
  }

  private keep(buf: Buffer, pos: number, lf: number, slot: number): boolean {
    const n = lf + 1 - pos;
    if (n > SLOT_BYTES) {
      this.lengths[slot] = 0;
      return false;
    }
    const mem = (this.bytes ??= new Uint8Array(SLOTS * SLOT_BYTES));
    const at = slot * SLOT_BYTES;
    // A plain loop: for lines this short it costs less than a call into Buffer.copy.
    for (let j = 0; j < n; j++) mem[at + j] = buf[pos + j]!;
    this.lengths[slot] = n;
    return true;
  }
}
