// The order of the servers' slices: in paired cycles, every ratio to the
// reference (the ceiling) must come from neighbouring slices, with the order
// of the two alternating, so that a machine drifting within a cycle weighs on
// both sides alike; fresh-start rounds rotate.

import t from "tap";
import { pairedOrder, rotated } from "../bench/slice-order.js";

const ENGINE: readonly string[] = ["startline", "node-http", "ceiling"];

t.test("paired cycles: the reference is next to every other server, and who goes first alternates", async (t) => {
  const firstOfPair: string[] = [];
  for (let cycle = 0; cycle < 6; cycle++) {
    const order = pairedOrder(ENGINE, cycle);
    t.same([...order].sort(), [...ENGINE].sort(), `cycle ${cycle}: each server once`);
    const ref = order.indexOf("ceiling");
    for (const other of ["startline", "node-http"]) t.equal(Math.abs(order.indexOf(other) - ref), 1, `cycle ${cycle}: ${other} next to the ceiling`);
    firstOfPair.push(order.indexOf("startline") < ref ? "startline" : "ceiling");
  }
  t.same(firstOfPair, ["startline", "ceiling", "startline", "ceiling", "startline", "ceiling"]);
  t.same(pairedOrder(ENGINE, 0), ["startline", "ceiling", "node-http"]);
  t.same(pairedOrder(ENGINE, 1), ["node-http", "ceiling", "startline"]);
  t.same(pairedOrder(["startline", "ceiling"], 0), ["startline", "ceiling"]);
  t.same(pairedOrder(["startline", "ceiling"], 1), ["ceiling", "startline"]);
  t.same(pairedOrder(["startline"], 3), ["startline"]);
});

t.test("fresh-start rounds: the order rotates, each server first in turn", async (t) => {
  t.same(rotated(ENGINE, 0), ["startline", "node-http", "ceiling"]);
  t.same(rotated(ENGINE, 1), ["node-http", "ceiling", "startline"]);
  t.same(rotated(ENGINE, 2), ["ceiling", "startline", "node-http"]);
  t.same(rotated(ENGINE, 3), rotated(ENGINE, 0));
});
