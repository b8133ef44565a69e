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
// included. A turn that passes with no new connection serves the whole queue,
// and reads go straight through again: in the steady state this costs one
// flag test per read.
//
// The queue also carries the connections that yield after REQUESTS_PER_TURN
// requests of one read (connection.ts): they resume on the next turn, after
// the reads that were already waiting.

/** Requests a connection takes from one read (or one resumption) before it lets the others have a turn. */
export const REQUESTS_PER_TURN = 64;

/** Requests served per turn while connections are arriving: one 10-deep pipelined batch, well under a millisecond. */
export const ARRIVAL_TURN_REQUESTS = 10;

/** Resumes a connection that waited for its turn; returns how many requests it served. */
export type TakeTurn = () => number;

export class Turns {
  /** First come, first served: queue[head] is next; entries before it are spent. */
  private queue: (TakeTurn | undefined)[] = [];
  private head = 0;
  private arrived = false;
  private scheduled = false;
  /** True while connections are arriving: a read waits in the queue for its turn instead of being served at once. */
  queuing = false;

  /** A connection was accepted. */
  arrival(): void {
    this.arrived = true;
    this.queuing = true;
    this.schedule();
  }

  /** Serve `take` on a coming turn, after whatever already waits. */
  wait(take: TakeTurn): void {
    this.queue.push(take);
    this.schedule();
  }

  /** Connections waiting for their turn. */
  get waiting(): number {
    return this.queue.length - this.head;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.turn);
  }

  /** Once per turn of the event loop while anything waits, after the turn's reads (setImmediate). */
  private readonly turn = (): void => {
    this.scheduled = false;
    const arriving = this.arrived;
    this.arrived = false;
    let budget = arriving ? ARRIVAL_TURN_REQUESTS : Infinity;
    // Only what waited before this turn: a connection that waits again is behind them, for the next one.
    const end = this.queue.length;
    while (this.head < end && budget > 0) {
      const take = this.queue[this.head]!;
      this.queue[this.head++] = undefined;
      budget -= take();
    }
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    this.queuing = arriving;
    // Look again next turn: to serve the rest, or to see whether connections are still arriving.
    if (arriving || this.waiting > 0) this.schedule();
  };
}

/** Turns for a connection outside a server (inject(), tests): nobody arrives there, so only yields wait in them. */
export const LONE_TURNS = new Turns();
