// Turns of the event loop, shared by the connections of one server, so that
// a burst of new connections is let in while the others keep it busy.
//
// Why: libuv accepts one connection per poll of the event loop (since 1.45,
// libuv pull request #3696), and a turn of the loop serves every connection
// whose bytes are waiting. With 100 clients pipelining 10 requests each, a
// saturated server's turn lasts milliseconds, so a burst of new connections
// got in one per turn: the 60th waited 60 turns, about 250 ms on the
// benchmark machine, before its first byte was read, while the established
// connections were served every few milliseconds.
//
// So while connections are arriving, reads wait in a queue instead of being
// served at once, and each turn serves at most ARRIVAL_TURN_REQUESTS requests of
// it: turns stay short, and the next connection is accepted a fraction of a
// millisecond later. The queue is first come, first served, new connections
// included, within each weight (below). A turn that passes with no new
// connection serves what waits, within its bytes and time, and reads go
// straight through again: in the steady state this costs one flag test per
// read.
//
// The queue also carries the connections that yield after REQUESTS_PER_TURN
// requests of one read (steps.ts): they resume on a coming turn, behind
// the reads of their weight that were already waiting.
//
// Bodies sent in pieces (send-body.ts) share a budget too: all of a server's
// connections together hand their sockets at most PIECES_PER_TURN pieces of
// body (of at most 64 KiB each) per turn, and a writer that finds the turn's
// pieces taken waits for a coming turn, first come, first served. Why: a client that does not read
// still absorbs megabytes (the kernel's buffers on both ends), and forty
// such clients asking for a 6 MB echo had the server render and write for
// them for seconds; each writer giving the loop back on its own still let
// all forty write in every turn, so a status request waited 60 to 100 ms a
// turn for three turns, and over half a second at their start. With one
// budget, a turn costs at most about a millisecond or two of body
// rendering, whatever the number of writers.
//
// Bytes read share a budget as well: once READ_BYTES_PER_TURN have come
// in since the last turn, from all connections together, a connection that
// reads more holds that read and waits for a coming turn, and its socket
// stops reading at once (steps.ts); a turn resumes waiting connections only
// while the bytes they held fit in its budget (ARRIVAL_READ_BYTES while
// connections arrive). Why: libuv reads a readable socket up to 32 times
// over in one poll, and accepts one connection per poll, so forty clients
// sending 1 MiB bodies at once made polls of 10 to 30 ms, one after
// another, and a status request behind them in the accept queue waited 200
// to 500 ms for its accept, though no single step held the loop long. The
// budget is a quarter of a MiB: a body's bytes are copied into memory the
// process has not touched before (body-buffer.ts), and on the benchmark
// machine, a virtual one, each MiB of that costs 3 to 10 ms of page faults.
//
// Within a turn, light readers go first: a waiting connection that holds at
// most LIGHT_BYTES unparsed (a head, a few pipelined ones) is served before
// the ones holding a body's reads, first come, first served in each class.
// Why: first come, first served by connection is not fair by the bytes.
// Forty clients uploading 1 MiB bodies each hold a 64 KiB read in the
// queue; a status request that arrived behind them waited for all forty,
// several turns, 60 to 100 ms. Served first, it costs its turn next to
// nothing. And a turn resumes connections for TURN_MS at most, since what a
// connection does on its turn is not in proportion to its bytes: the last
// read of a body runs its handler and starts its answer (a millisecond or
// more for a 1 MiB echo), and eleven of them in one turn held it 55 ms. The
// heavy still move: the oldest of them is served on every turn, whatever
// the light took. With all three, the status request beside the forty
// waits about 20 to 30 ms at most (docs/benchmarks.md).

import { DEFAULT_LIMITS } from "../parse/limits.js";

/** Requests a connection takes from one read (or one resumption) before it lets the others have a turn. */
export const REQUESTS_PER_TURN = 64;

/** Requests served per turn while connections are arriving: one 10-deep pipelined batch, well under a millisecond. */
export const ARRIVAL_TURN_REQUESTS = 10;

/** Pieces of body (send-body.ts, at most PIECE_BYTES each) that all connections together write in one turn. */
export const PIECES_PER_TURN = 4;

/** Bytes that all connections together read between two turns before a reader waits for the next one: a millisecond or so of parsing and copying (above). */
export const READ_BYTES_PER_TURN = 256 * 1024;

/** The same while connections arrive: each turn is one accept, so turns are kept shorter still. */
export const ARRIVAL_READ_BYTES = 128 * 1024;

/**
 * Time a turn spends resuming waiting connections: once it has passed, the
 * rest wait for the next turn (the oldest heavy one is served all the same).
 * What a connection does on its turn is not in proportion to its bytes: a
 * body's last read runs its handler and starts its answer.
 */
export const TURN_MS = 2;

/**
 * A waiting connection holding at most this many bytes unparsed is light, and
 * served first (above): the largest head the parser takes by default, its
 * request line and its field section (docs/protocol.md). It is weighed once,
 * when a turn first sees it; while connections arrive its socket may read
 * once more before its turn comes, and those bytes count toward the turn's
 * budget, not its weight.
 */
export const LIGHT_BYTES = DEFAULT_LIMITS.maxRequestLineBytes + DEFAULT_LIMITS.maxHeaderBytes;

/**
 * Reads below this many bytes since the last turn bring no turn of their
 * own: the small reads of most requests cost no setImmediate, and the
 * budget is counted from the turn after the first large read.
 */
const READ_BYTES_UNCOUNTED = 64 * 1024;

/** A first-come-first-served queue whose taking is O(1): items[head] is next; entries before it are spent. */
class Fifo<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** The next item; the caller checked that length > 0. */
  take(): T {
    const item = this.items[this.head]!;
    this.items[this.head++] = undefined;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}

/** A connection waiting for its turn. */
export interface Waiter {
  /** The bytes it holds, read but not parsed: it is light at most LIGHT_BYTES. Asked when its turn may come. */
  held(): number;
  /** Resumes it; returns how many requests that served. */
  take(): number;
}

export class Turns {
  /** `now`: the clock a turn's time is read on (milliseconds); tests give one of their own. */
  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Reads that began to wait since the last turn, first come, first served; a turn sorts them into the two below. */
  private readonly queue = new Fifo<Waiter>();
  /** Waiting readers that held at most LIGHT_BYTES when weighed, first come, first served. */
  private readonly light = new Fifo<Waiter>();
  /** The others, first come, first served, after the light. */
  private readonly heavy = new Fifo<Waiter>();
  private arrived = false;
  private scheduled = false;
  /** True while connections are arriving: a read waits in the queue for its turn instead of being served at once. */
  queuing = false;
  /** Pieces of body granted in this turn, to every connection. */
  private pieces = 0;
  /** Writers waiting for a turn with pieces left, first come, first served. */
  private readonly writers = new Fifo<() => void>();
  /** Bytes read by every connection since the last turn. */
  private readBytes = 0;

  /**
   * A connection read `bytes`, or (taking its turn) goes on with `bytes` it
   * held: true when the turn's budget of bytes read (READ_BYTES_PER_TURN) is
   * spent, and a reader is to wait for a coming turn before it parses them.
   */
  read(bytes: number): boolean {
    const before = this.readBytes;
    this.readBytes = before + bytes;
    // The count starts over at the next turn.
    if (before < READ_BYTES_UNCOUNTED && this.readBytes >= READ_BYTES_UNCOUNTED) this.schedule();
    return this.readBytes > (this.queuing ? ARRIVAL_READ_BYTES : READ_BYTES_PER_TURN);
  }

  /**
   * Before a body's writer produces and hands its socket another piece:
   * null when this turn has a piece left for it (it is then taken), else a
   * promise that resolves on a coming turn, after the writers that waited
   * before it, with a piece taken for it.
   */
  beforePiece(): Promise<void> | null {
    // The budget is renewed at the next turn.
    this.schedule();
    if (this.pieces < PIECES_PER_TURN) {
      this.pieces++;
      return null;
    }
    return new Promise((resume) => this.writers.push(resume));
  }

  /** A connection was accepted. */
  arrival(): void {
    this.arrived = true;
    this.queuing = true;
    this.schedule();
  }

  /** Serve `waiter` on a coming turn, after whatever already waits (of its weight: above). */
  wait(waiter: Waiter): void {
    this.queue.push(waiter);
    this.schedule();
  }

  /** Connections waiting for their turn. */
  get waiting(): number {
    return this.queue.length + this.light.length + this.heavy.length;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.turn);
  }

  /** Once per turn of the event loop while anything waits, after the turn's reads (setImmediate). */
  private readonly turn = (): void => {
    this.scheduled = false;
    this.readBytes = 0;
    const arriving = this.arrived;
    this.arrived = false;
    let budget = arriving ? ARRIVAL_TURN_REQUESTS : Infinity;
    const bytes = arriving ? ARRIVAL_READ_BYTES : READ_BYTES_PER_TURN;
    // Only what waited before this turn: a connection that waits again is behind them, for the next one. Each is
    // weighed once, as its turn may first come, and waits on among the light or the heavy, in its place.
    const light = this.light;
    const heavy = this.heavy;
    for (let n = this.queue.length; n > 0; n--) {
      const waiter = this.queue.take();
      (waiter.held() > LIGHT_BYTES ? heavy : light).push(waiter);
    }
    // The bytes they held count toward the turn's (read()), so a turn resumes only so many of them; the rest keep
    // their places. The light first; then the heavy, the oldest of them whatever the light took (so that bodies
    // move however many light readers wait), more while the turn's requests, bytes and time last.
    const until = this.now() + TURN_MS;
    const more = () => budget > 0 && this.readBytes <= bytes && this.now() < until;
    for (let n = light.length; n > 0 && more(); n--) budget -= light.take().take();
    for (let n = heavy.length, first = true; n > 0 && (first || more()); n--, first = false) budget -= heavy.take().take();
    this.queuing = arriving;
    // A new budget for bodies: the writers that waited longest take it (they write in this turn's microtasks).
    this.pieces = 0;
    while (this.pieces < PIECES_PER_TURN && this.writers.length > 0) {
      this.pieces++;
      this.writers.take()();
    }
    // Look again next turn: to serve the rest, or to see whether connections are still arriving.
    if (arriving || this.waiting > 0 || this.writers.length > 0) this.schedule();
  };
}

/** Turns for a connection outside a server (inject(), tests): nobody arrives there, so only yields wait in them. */
export const LONE_TURNS = new Turns();
