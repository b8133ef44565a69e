// The turns connections wait in (src/http/connection/turns.ts): first come, first
// served; everything on the next turn while no connection arrives; at most
// ARRIVAL_TURN_REQUESTS requests a turn while connections do arrive.

import t from "tap";
import { ARRIVAL_TURN_REQUESTS, Turns, type TakeTurn } from "../../src/http/connection/turns.js";

/** Resolves after the turn's own setImmediate, which was scheduled first. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** A connection that records when its turn came and serves `requests` each time. */
function taker(name: string, served: string[], requests: number): TakeTurn {
  return () => {
    served.push(name);
    return requests;
  };
}

t.test("with nobody arriving, every waiting connection gets its turn on the next turn, in order", async (t) => {
  const turns = new Turns();
  const served: string[] = [];
  for (const name of ["a", "b", "c"]) turns.wait(taker(name, served, 1000));
  t.equal(turns.queuing, false, "reads are not queued");
  t.same(served, [], "nothing runs before the turn");
  await nextTurn();
  t.same(served, ["a", "b", "c"], "one turn serves them all, however many requests they take");
  t.equal(turns.waiting, 0);
});

t.test("a connection that waits again during its turn goes behind the others, to the next turn", async (t) => {
  const turns = new Turns();
  const served: string[] = [];
  let again = true;
  const a: TakeTurn = () => {
    served.push("a");
    if (again) {
      again = false;
      turns.wait(a);
    }
    return 64;
  };
  turns.wait(a);
  turns.wait(taker("b", served, 1));
  await nextTurn();
  t.same(served, ["a", "b"]);
  t.equal(turns.waiting, 1, "a waits for the next turn");
  await nextTurn();
  t.same(served, ["a", "b", "a"]);
});

t.test("while connections arrive, reads queue and a turn serves about ARRIVAL_TURN_REQUESTS requests", async (t) => {
  const turns = new Turns();
  const served: string[] = [];
  // Ten connections with a 10-deep batch each, and one more connection arriving.
  for (let i = 0; i < 10; i++) turns.wait(taker(`c${i}`, served, 10));
  turns.arrival();
  t.equal(turns.queuing, true, "reads wait their turn while connections arrive");
  await nextTurn();
  t.same(served, ["c0"], `one batch of 10 spends the turn's ${ARRIVAL_TURN_REQUESTS} requests`);
  t.equal(turns.queuing, true, "still queuing: this turn had an arrival");

  turns.arrival(); // another connection, accepted in the next turn
  const late = taker("new", served, 1);
  turns.wait(late);
  await nextTurn();
  t.same(served, ["c0", "c1"], "first come, first served: the new connection waits behind c1..c9");

  // A turn with no arrival serves all that waited, and reads go straight through again.
  await nextTurn();
  t.same(served, ["c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9", "new"]);
  t.equal(turns.queuing, false);
  t.equal(turns.waiting, 0);
});

t.test("a turn always serves at least one connection, however many requests it takes", async (t) => {
  const turns = new Turns();
  const served: string[] = [];
  turns.wait(taker("deep", served, 64));
  turns.wait(taker("next", served, 1));
  turns.arrival();
  await nextTurn();
  t.same(served, ["deep"], "the first waiting connection is served even beyond the turn's budget");
  turns.arrival();
  await nextTurn();
  t.same(served, ["deep", "next"], "and the queue moves on every turn, arrivals or not");
});

t.test("a long queue is served in order across many turns", async (t) => {
  const turns = new Turns();
  const served: number[] = [];
  const n = 3000;
  for (let i = 0; i < n; i++) {
    turns.wait(() => {
      served.push(i);
      return ARRIVAL_TURN_REQUESTS; // one per turn while arrivals go on
    });
  }
  for (let k = 0; k < n; k++) {
    turns.arrival();
    await nextTurn();
  }
  t.equal(served.length, n);
  t.ok(
    served.every((v, i) => v === i),
    "every connection once, in arrival order",
  );
});
