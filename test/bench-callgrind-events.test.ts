// bench:instructions reads each window's counts from the dump's "summary:"
// line, named by its "events:" line: the instructions alone by default, the
// simulated cache misses and mispredicted branches as well under --cache.

import t from "tap";
import { eventsIn } from "../bench/instructions.js";

t.test("a plain count: the instructions", async (t) => {
  const events = eventsIn(["# callgrind format", "events: Ir", "fn=(1) main", "summary: 184044923", "totals: 184044923", ""].join("\n"));
  t.same([...events], [["Ir", 184044923]]);
});

t.test("with --cache-sim and --branch-sim: every event by its name, in the order the dump gives", async (t) => {
  const events = eventsIn(
    [
      "events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw Bc Bcm Bi Bim",
      "summary: 184044923 57690400 28410900 11918966 4827903 466247 1000 1440 550 30961390 1922603 1390000 257000",
      "",
    ].join("\n"),
  );
  t.equal(events.get("Ir"), 184044923);
  t.equal(events.get("I1mr"), 11918966, "first-level instruction misses");
  t.equal(events.get("D1mw"), 466247, "first-level data misses on writes");
  t.equal(events.get("Bim"), 257000, "the last event, mispredicted indirect branches");
  t.equal(events.size, 13);
});

t.test("a dump without the two lines is refused, not read as zero", async (t) => {
  t.throws(() => eventsIn("events: Ir\n"), /without its events: or summary: line/);
  t.throws(() => eventsIn("summary: 12\n"), /without its events: or summary: line/);
});
