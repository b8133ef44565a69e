// The line reader: finds lines in a byte stream cut anywhere, and hands on
// what is not a line (body bytes) as it comes.
//
// The consumer first takes what it can in one go (whole, sound lines: see
// clean-line.ts); other lines are found with Buffer#indexOf (a native
// memchr) and handed on one by one. Only an unfinished line is ever copied,
// into `carry`, and its consumer judges it as it grows (so its limits hold
// before it ends). While paused, bytes not yet read wait as a slice of the
// caller's chunk: the connection pauses reading when responses back up, so
// one large read of pipelined requests cannot queue up work without bound.

import { LF } from "./byte-classes.js";

/** What the reader feeds: the protocol (the request parser) on top of it. */
export interface LineConsumer {
  /** True when the next bytes are lines; false when they are body bytes. */
  readonly wantsLine: boolean;
  /** True once nothing more is accepted (an error, or a request that closes the connection). */
  readonly done: boolean;
  /**
   * As many whole lines as the consumer can take in one go from buf[pos] (the
   * common case, read fast). Returns where it stopped: pos when it took
   * none (the next line is then handed to line() or partial()), a later
   * position to be asked again from there, or -1 to stop reading.
   */
  lines(buf: Buffer, pos: number): number;
  /** A whole line, buf[start, lf] with lf at its LF. Returns false to stop reading. */
  line(buf: Buffer, start: number, lf: number): boolean;
  /** The start of a line that has not ended yet: carry[0, length); `fresh` when the line began in this piece. */
  partial(carry: Buffer, length: number, fresh: boolean): void;
  /** Bytes that are not lines, from buf[pos]; returns how many were taken, or -1 to stop reading. */
  bytes(buf: Buffer, pos: number): number;
}

export class LineReader {
  private readonly consumer: LineConsumer;
  private carry: Buffer | null = null;
  private carryLen = 0;
  private paused = false;
  private running = false;
  private pending: Buffer | null = null;

  constructor(consumer: LineConsumer) {
    this.consumer = consumer;
  }

  /** No byte is waiting: neither an unfinished line nor bytes held while paused. */
  get idle(): boolean {
    return this.carryLen === 0 && this.pending === null;
  }

  /** Bytes of an unfinished line held (bounded by the consumer's limits). */
  get carried(): number {
    return this.carryLen;
  }

  /** Drop whatever is held; the consumer, being done, takes nothing more. */
  stop(): void {
    this.pending = null;
    this.carry = null;
    this.carryLen = 0;
  }

  /** The next bytes of the stream; the chunk must not be modified afterwards (body bytes may be slices of it). */
  feed(chunk: Buffer): void {
    const c = this.consumer;
    if (c.done || chunk.length === 0) return;
    if (this.paused) {
      this.pending = this.pending === null ? chunk : Buffer.concat([this.pending, chunk]);
      return;
    }
    let pos = 0;
    if (this.carryLen > 0) {
      const lf = chunk.indexOf(LF);
      if (lf === -1) {
        this.append(chunk, 0, chunk.length);
        c.partial(this.carry!, this.carryLen, false);
        return;
      }
      this.append(chunk, 0, lf + 1);
      const line = this.carry!;
      const length = this.carryLen;
      this.carry = null;
      this.carryLen = 0;
      if (!c.line(line, 0, length - 1)) return;
      pos = lf + 1;
    }
    this.running = true;
    try {
      this.read(chunk, pos);
    } finally {
      this.running = false;
    }
  }

  /** Stop after what is being read now; later bytes wait for resume(). */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    if (this.running || this.pending === null) return;
    const pending = this.pending;
    this.pending = null;
    this.feed(pending);
  }

  private read(buf: Buffer, pos: number): void {
    const c = this.consumer;
    const len = buf.length;
    while (pos < len) {
      if (c.done) return;
      if (this.paused) {
        this.pending = buf.subarray(pos);
        return;
      }
      if (c.wantsLine) {
        const next = c.lines(buf, pos);
        if (next !== pos) {
          if (next < 0) return;
          pos = next;
          continue;
        }
        const lf = buf.indexOf(LF, pos);
        if (lf === -1) {
          const fresh = this.carryLen === 0;
          this.append(buf, pos, len);
          c.partial(this.carry!, this.carryLen, fresh);
          return;
        }
        if (!c.line(buf, pos, lf)) return;
        pos = lf + 1;
      } else {
        const taken = c.bytes(buf, pos);
        if (taken < 0) return;
        pos += taken;
      }
    }
  }

  private append(src: Buffer, start: number, end: number): void {
    const need = this.carryLen + (end - start);
    if (this.carry === null || need > this.carry.length) {
      const grown = Buffer.allocUnsafe(Math.max(need, 2 * (this.carry?.length ?? 0), 256));
      if (this.carry !== null) this.carry.copy(grown, 0, 0, this.carryLen);
      this.carry = grown;
    }
    src.copy(this.carry, this.carryLen, start, end);
    this.carryLen = need;
  }
}
