// bench:instructions reads each window's counts from the dump's "summary:"
// line, named by its "events:" line: the instructions alone by default, the
// simulated cache misses and mispredicted branches as well under --cache;
// and, for --top, each function's own counts from callgrind_annotate's table.

import t from "tap";
import { eventsIn, missesIn, ownCounts } from "../bench/instructions.js";

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

t.test("--top reads each function's own counts, JIT code named through the perf map", async (t) => {
  const text = [
    "Events shown:     Ir I1mr D1mr D1mw Bcm Bim",
    "--------------------------------------------------------------------------------",
    "Ir                   I1mr                D1mr               D1mw             Bcm                Bim",
    "184,044,923 (100.0%) 11,918,966 (100.0%) 4,827,903 (100.0%) 466,247 (100.0%) 1,922,603 (100.0%) 257,000 (100.0%)  PROGRAM TOTALS",
    "177,562,896 (96.48%) 11,915,064 (99.97%) 4,783,279 (99.08%) 465,867 (99.92%) 1,920,331 (99.88%) 256,000 (99.61%)  ???:node::SpinEventLoopInternal(node::Environment*) [/usr/bin/node]",
    "  2,010,000 ( 1.09%)    210,000 ( 1.76%)   209,366 ( 4.34%)       0             57,786 ( 3.01%)       .             ???:0x000000000d132640 [???]",
    "  1,000,000 ( 0.54%)     10,000 ( 0.08%)     5,000 ( 0.10%)     100 ( 0.02%)     2,000 ( 0.10%)      10 ( 0.00%)  ???:0x000000000d132700 [???]",
    "  8,540,979 ( 4.64%)    174,493 ( 1.46%)   165,934 ( 3.44%)     167 ( 0.04%)    97,222 ( 5.06%)   1,000 ( 0.39%)  ???:Builtins_KeyedLoadIC_Megamorphic [/usr/bin/node]",
    "",
  ].join("\n");
  const find = (address: number) => (address >= 0xd132600 && address < 0xd132800 ? "JS:*read file:///x/dist/src/http/parse/parser.js:177:9" : undefined);
  const { totals, self } = ownCounts(text, 6, find);
  t.same(totals, [184044923, 11918966, 4827903, 466247, 1922603, 257000]);
  t.notOk(self.has("node::SpinEventLoopInternal"), "a frame that holds nearly the whole count is left out");
  t.same(self.get("JS:*read file:///x/dist/src/http/parse/parser.js:177:9"), [3010000, 220000, 214366, 100, 59786, 10], "two pieces of one function's code, summed; 0 and . read as none");
  t.same(self.get("Builtins_KeyedLoadIC_Megamorphic"), [8540979, 174493, 165934, 167, 97222, 1000], "native code by its symbol alone");
  t.equal(self.size, 2);
});

t.test("--top without --cache: one column", async (t) => {
  const { totals, self } = ownCounts(["18,404,000 (100.0%)  PROGRAM TOTALS", "   854,000 ( 4.64%)  ???:Builtins_LoadIC [/usr/bin/node]", ""].join("\n"), 1, () => undefined);
  t.same(totals, [18404000]);
  t.same([...self], [["Builtins_LoadIC", [854000]]]);
});

t.test("--cache's table: misses per request, reads and writes together, conditional and indirect branches together", async (t) => {
  const events = eventsIn(["events: Ir I1mr D1mr D1mw ILmr DLmr DLmw Bcm Bim", "summary: 1000000 20000 8000 2000 30 10 10 5000 1000", ""].join("\n"));
  t.same(missesIn(events, 1000), { i1: 20, d1: 10, ll: 0.05, branches: 6 });
  t.same(missesIn(eventsIn("events: Ir\nsummary: 1000\n"), 10), { i1: 0, d1: 0, ll: 0, branches: 0 }, "a dump without the simulation: no misses, not NaN");
});
