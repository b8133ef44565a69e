// How a test sees that a server has stopped: a count it keeps (requests
// handled, pieces made) has moved, and then stays put. "Stopped" is the
// absence of an event, so it can only be seen as a count that does not move
// for a while; what "a while" is decides whether the test proves anything.
//
// Wall time alone does not do: a process that the machine does not schedule
// for longer than the wait finds its timer due before its poll phase has
// read what arrived, and the count looks still because nothing ran. Turns of
// the event loop alone do not do either: loopback delivery may run later in
// the kernel than the write that made it, and twenty turns can pass in
// microseconds. So the count must stay put over both: `turns` turns of the
// event loop, each with a poll phase that takes whatever the kernel has
// ready, and `ms` of wall time. Nothing is asserted about either figure; a
// loaded machine only makes this wait longer.

import { setTimeout as sleep } from "node:timers/promises";

/**
 * Resolves with `count()` once it is past `from` (the count before the
 * stimulus) and has then not moved over `turns` event-loop turns and `ms`
 * milliseconds. Waits without end for the first move: the caller bounds the
 * wait (happens()).
 */
export async function stopsMoving(count: () => number, { from = 0, turns = 20, ms = 300 } = {}): Promise<number> {
  // A timer per step, not setImmediate: the loop blocks in its poll phase
  // rather than spinning, and between two timer callbacks there is always a
  // poll phase, so each step reads whatever the kernel has delivered.
  while (count() === from) await sleep(5);
  let seen = count();
  let still = 0;
  let since = performance.now();
  for (;;) {
    await sleep(5);
    const now = count();
    if (now !== seen) {
      [seen, still, since] = [now, 0, performance.now()];
    } else if (++still >= turns && performance.now() - since >= ms) {
      return now;
    }
  }
}
