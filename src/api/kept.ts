// Bytes kept in memory between requests, within a byte budget: what a read
// made once (a post's representation, a whole list's body) is served again
// as it is, for as long as it stays current and the budget holds it. The
// least recently used goes first when a new entry needs the room (nearly: a
// use of an entry that is among the newer half of them leaves it in place,
// see get). What "current" means is the caller's: a response is keyed by the
// request it answers and labelled with the store's revision, which the
// caller compares with the revision read for each request (kept-reads.ts).

/** The most one entry may take of the budget: one large list cannot push out everything else. */
const ENTRY_SHARE = 4;

export class Kept<V> {
  /**
   * Map order is use order, as far as eviction needs it: the first entry is
   * the least recently used. `tick` is when an entry last moved to the back
   * (the clock counts moves and insertions, so ticks follow Map order).
   */
  private readonly entries = new Map<string, { readonly value: V; readonly bytes: number; tick: number }>();
  private used = 0;
  private clock = 0;

  /** `budget` bytes at most (0 keeps nothing). */
  constructor(readonly budget: number) {}

  /** The largest entry `set` keeps. */
  get entryLimit(): number {
    return Math.floor(this.budget / ENTRY_SHARE);
  }

  /** The bytes held now. */
  get bytes(): number {
    return this.used;
  }

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    // An entry among the newer half is not moved: half the entries go before it anyway (a Map delete and set
    // for every use was a fifth of a request's cost when each post's YAML was kept here, 50 uses a page).
    if (this.clock - entry.tick > this.entries.size >> 1) {
      this.entries.delete(key);
      this.entries.set(key, entry);
      entry.tick = ++this.clock;
    }
    return entry.value;
  }

  /** Keeps `value` under `key` (replacing what was there), counted as `bytes`; one larger than entryLimit is not kept. */
  set(key: string, value: V, bytes: number): void {
    this.delete(key);
    if (bytes > this.entryLimit) return;
    this.entries.set(key, { value, bytes, tick: ++this.clock });
    this.used += bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.used <= this.budget) break;
      this.entries.delete(oldest);
      this.used -= entry.bytes;
    }
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.used -= entry.bytes;
  }
}

/** Not Latin-1: V8 holds the string at two bytes a character. */
const WIDE = /[^\u0000-\u00ff]/;

/** About the memory a string takes in V8: one byte a character when all are Latin-1, two otherwise, and a header. */
export function stringBytes(text: string): number {
  return 32 + (WIDE.test(text) ? 2 : 1) * text.length;
}
