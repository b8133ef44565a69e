// CPU time (user + system) of this process and of every process it has
// waited for, for test/run.mjs and test/batch.mjs: a test's servers, its
// workers, the commands it runs, and theirs, since Node waits for each child
// it started (and a child for its own). The machine the tests run on is
// shared, so wall times swing with whatever else runs; CPU time says what the
// tests themselves cost.
//
// The children's share comes from Linux's /proc/self/stat (cutime and cstime,
// in clock ticks of USER_HZ: 100 on the architectures Linux runs Node on;
// `getconf CLK_TCK` prints it). Elsewhere only this process's own time is
// known, and `children` is undefined.

import { readFileSync } from "node:fs";

const TICKS_PER_SECOND = 100;

/** Milliseconds of CPU: this process's own, and (on Linux) its waited-for children's. */
export function cpuMs() {
  const { user, system } = process.cpuUsage();
  const own = (user + system) / 1000;
  let children;
  try {
    // The fields after the command's closing parenthesis: state is the first, cutime the 14th, cstime the 15th.
    const stat = readFileSync("/proc/self/stat", "latin1");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    children = ((Number(fields[13]) + Number(fields[14])) * 1000) / TICKS_PER_SECOND;
  } catch {
    children = undefined;
  }
  return { own, children, total: own + (children ?? 0) };
}
