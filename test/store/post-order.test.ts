// The memory store's index of posts by position (src/store/post-order.ts),
// against a plain array of the live entries, and the bounds it promises:
// compaction often enough to hold at most twice the live entries (plus one),
// seldom enough to cost O(1) amortized per delete. Counted, never timed.

import t from "tap";
import { createPostOrder, type PostOrder } from "../../src/store/post-order.js";
import { prng } from "../helpers/prng.js";

/** Every live entry from the start, by firstAfter and next. */
function walk(order: PostOrder, after = 0): [number, string][] {
  const entries: [number, string][] = [];
  for (let i = order.firstAfter(after); i < order.end(); i = order.next(i)) entries.push([order.positionAt(i), order.idAt(i)]);
  return entries;
}

t.test("appends and removes anywhere: the walk is the live entries, from any cursor, across compactions", async (t) => {
  const random = prng(7);
  const order = createPostOrder();
  const model: [number, string][] = [];
  let next = 1;
  let checks = 0;
  const overheld: number[] = [];
  for (let step = 0; step < 3000; step++) {
    // Mostly removals once there is something to remove, so the store grows and shrinks in turn.
    if (model.length === 0 || random() < (step % 1000 < 500 ? 0.6 : 0.3)) {
      const position = next++;
      order.append(position, `p${position}`);
      model.push([position, `p${position}`]);
    } else {
      const [position] = model.splice(Math.floor(random() * model.length), 1)[0]!;
      order.remove(position);
    }
    if (order.held() > 2 * model.length + 1) overheld.push(step);
    if (step % 50 === 0) {
      checks++;
      t.strictSame(walk(order), model, `step ${step}: from the start`);
      // From any position, held, deleted or never given.
      const after = Math.floor(random() * (next + 2));
      t.strictSame(walk(order, after), model.filter(([position]) => position > after), `step ${step}: after ${after}`);
    }
  }
  t.strictSame(overheld, [], "never more than twice the live entries, plus one");
  t.ok(order.compactions() > 10, "compacted along the way");
  t.equal(checks, 60);
});

t.test("removing N of N entries compacts at most log2(N) + 1 times", async (t) => {
  const n = 100_000;
  for (const pick of ["first", "last", "alternate"] as const) {
    const order = createPostOrder();
    for (let p = 1; p <= n; p++) order.append(p, `p${p}`);
    const positions = Array.from({ length: n }, (_, i) => i + 1);
    if (pick === "last") positions.reverse();
    if (pick === "alternate") positions.sort((a, b) => (a % 2) - (b % 2) || a - b);
    for (const p of positions) order.remove(p);
    t.equal(order.held(), 0, `${pick}: nothing held`);
    t.ok(order.compactions() <= Math.log2(n) + 1, `${pick}: ${order.compactions()} compactions`);
    t.equal(order.firstAfter(0), order.end(), `${pick}: an empty walk`);
  }
});

t.test("a removal of a position not held, or held by a tombstone, throws and changes nothing", async (t) => {
  const order = createPostOrder();
  for (let p = 1; p <= 4; p++) order.append(p * 10, `p${p}`);
  order.remove(20);
  t.throws(() => order.remove(20));
  t.throws(() => order.remove(25));
  t.strictSame(walk(order), [[10, "p1"], [30, "p3"], [40, "p4"]]);
});
