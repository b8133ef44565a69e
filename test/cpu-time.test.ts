// test/cpu-time.mjs, which gives test/run.mjs the CPU time of a run and
// test/batch.mjs that of each file: what a child process spent is counted
// once the child has been waited for, and only then. Compared with what the
// child itself says it spent, never with a clock.

import t from "tap";
import { execFile } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { ROOT } from "./helpers/root.js";

const run = promisify(execFile);
const { cpuMs } = (await import(pathToFileURL(path.join(ROOT, "test", "cpu-time.mjs")).href)) as {
  cpuMs: () => { own: number; children: number | undefined; total: number };
};

t.test("a waited-for child's CPU time is in the children's count, and the total", async (t) => {
  const before = cpuMs();
  if (before.children === undefined) {
    t.equal(process.platform === "linux", false, "only where /proc is missing is the children's time unknown");
    return;
  }
  // The child spins until it has used 100 ms of CPU by its own count, then prints that count.
  const { stdout } = await run(process.execPath, [
    "-e",
    "const u = () => { const c = process.cpuUsage(); return (c.user + c.system) / 1000; }; while (u() < 100); process.stdout.write(String(u()));",
  ]);
  const spent = Number(stdout);
  const after = cpuMs();
  // Clock ticks are 10 ms: the kernel's count may round each of user and system time down by one.
  t.ok(after.children! - before.children >= spent - 20, `the children's count grew by ${after.children! - before.children} ms; the child says it spent ${spent} ms`);
  t.ok(after.total - before.total >= spent - 20, "and so did the total");
  t.ok(after.own >= before.own, "this process's own time is counted apart");
});
