// The primary's queue of connections no worker is ready for (src/waiting-room.ts),
// on its own: bounded in number (past it, turned away at once) and in time
// (turned away at the deadline), and nothing released in time is turned away.
// test/cluster.test.ts checks the same bounds on a real primary, over sockets.

import t from "tap";
import { happens } from "../helpers/hang.js";
import { waitingRoom, type TurnedAway } from "../../src/waiting-room.js";

/** A waiting room of names that records what it turns away, in order; `turned(n)` resolves once n have been. */
function recorded(max: number, maxWaitMs: number) {
  const away: [string, TurnedAway][] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const room = waitingRoom<string>({ max, maxWaitMs }, (item, why) => {
    away.push([item, why]);
    for (const w of waiters.filter((w) => away.length >= w.n)) w.resolve();
  });
  const turned = (n: number) => new Promise<void>((resolve) => (away.length >= n ? resolve() : waiters.push({ n, resolve })));
  return { room, away, turned };
}

t.test("past `max` waiting, a new one is turned away at once; released, the room takes more", async (t) => {
  const { room, away } = recorded(2, 60_000);
  room.admit("a");
  room.admit("b");
  t.same(away, [], "two wait");
  room.admit("c");
  t.same(away, [["c", "full"]], "the third is turned away, at once, as the room is full");
  t.equal(room.size, 2);
  t.same(room.release(), ["a", "b"], "released oldest first");
  t.equal(room.size, 0);
  room.admit("d");
  t.equal(room.size, 1, "room again");
  t.same(room.release(), ["d"]);
  t.same(away, [["c", "full"]], "nothing released is turned away");
});

t.test("one that waits past `maxWaitMs` is turned away then, oldest first", async (t) => {
  const { room, away, turned } = recorded(10, 20);
  room.admit("a");
  room.admit("b");
  await happens(t, turned(2), "both are turned away at their deadline");
  t.same(away, [["a", "late"], ["b", "late"]]);
  t.equal(room.size, 0);
  // The timer starts again for the next one to wait, after the room was empty.
  room.admit("c");
  await happens(t, turned(3), "one admitted after the room emptied is timed too");
  t.same(away[2], ["c", "late"]);
});

t.test("one released before its deadline is never turned away; the one admitted after it still is", async (t) => {
  const { room, away, turned } = recorded(10, 30);
  room.admit("a");
  t.same(room.release(), ["a"]);
  room.admit("b");
  // b's deadline is after a's would have been: once b is turned away, a's time has passed too.
  await happens(t, turned(1), "the one still waiting is turned away at its deadline");
  t.same(away, [["b", "late"]], "only b: a was released in time");
});

t.test("turned away while the room turns away others: admitting from the callback is safe", async (t) => {
  const away: string[] = [];
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const room = waitingRoom<string>({ max: 1, maxWaitMs: 10 }, (item, why) => {
    away.push(`${item}:${why}`);
    // A retry from the callback finds the room empty again (the late one is out of it first).
    if (item === "a") room.admit("retry");
    if (item === "retry") done();
  });
  room.admit("a");
  room.admit("b");
  await happens(t, finished, "the retry admitted from the callback waits, and is timed");
  t.same(away, ["b:full", "a:late", "retry:late"]);
});
