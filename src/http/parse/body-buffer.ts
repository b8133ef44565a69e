// Where the bytes of one request body collect while they arrive.
//
// Memory must follow the body's bytes, not the number of pieces it came in:
// a chunked body of a million one-byte chunks, kept as a million slices of
// the socket's reads, costs a Buffer object (~100 bytes of heap) per byte
// sent. So only the first piece is kept as a slice (the common case, a body
// that arrives in one read, is never copied); from the second piece on, the
// bytes are copied into one buffer, up to `limit`.
//
// That buffer grows eightfold, not twofold. Why: what a body costs is the
// pages its bytes are written to for the first time (each one a page fault,
// and on a virtual machine a fault of the host's as well), not the room
// reserved past them, which stays address space until written. Twofold
// growth writes every byte about twice (each growth copies what came
// before into fresh pages); on the benchmark machine forty 1 MiB bodies cost
// some 250 ms of page faults that way, in the turns that read them, and a
// status request waited behind them (docs/benchmarks.md). Eightfold growth
// writes each byte about 1.14 times. What is resident stays the bytes
// received (and one copy of them while growing); what is reserved is at most
// eight times the bytes received, or MIN_CAPACITY for a small body, and never
// past `limit`: a client gets room only for bytes it sent. (V8 counts the
// room as external memory and collects sooner for it: for up to eight times
// the bytes received, still in proportion to them.)

const EMPTY = Buffer.alloc(0);
/** The smallest buffer worth allocating once copying starts. */
const MIN_CAPACITY = 4096;
/** A buffer that must grow is replaced by one this many times the bytes it must hold (see above). */
const GROWTH = 8;

export class BodyBuffer {
  /** The first piece, as a slice of the caller's chunk, until a second piece arrives. */
  private first: Buffer = EMPTY;
  /** After the second piece: the bytes so far, in a buffer with room to spare. */
  private store: Buffer | null = null;
  private used = 0;
  /** Never allocate past this (the declared length, or the body limit). */
  private limit = Infinity;

  /** Bytes received so far. */
  get length(): number {
    return this.store === null ? this.first.length : this.used;
  }

  /** Start a new body of at most `limit` bytes. */
  reset(limit: number): void {
    this.first = EMPTY;
    this.store = null;
    this.used = 0;
    this.limit = limit;
  }

  /** Adds src[start, end): kept as a slice (first piece) or copied; `src` is never modified. */
  append(src: Buffer, start: number, end: number): void {
    const n = end - start;
    if (n === 0) return;
    if (this.store === null) {
      if (this.first.length === 0) {
        this.first = src.subarray(start, end);
        return;
      }
      const have = this.first.length;
      this.store = Buffer.allocUnsafe(Math.min(this.limit, Math.max((have + n) * GROWTH, MIN_CAPACITY)));
      this.first.copy(this.store, 0);
      this.used = have;
      this.first = EMPTY;
    }
    const need = this.used + n;
    if (need > this.store.length) {
      const grown = Buffer.allocUnsafe(Math.min(Math.max(this.limit, need), need * GROWTH));
      this.store.copy(grown, 0, 0, this.used);
      this.store = grown;
    }
    src.copy(this.store, this.used, start, end);
    this.used = need;
  }

  /** The whole body (a view, not a copy), and a fresh start for the next one. */
  take(): Buffer {
    const body = this.store === null ? this.first : this.store.subarray(0, this.used);
    this.reset(Infinity);
    return body;
  }

  /** Bytes allocated for the body so far, beyond the caller's own chunks (for tests). */
  get capacity(): number {
    return this.store === null ? 0 : this.store.length;
  }
}
