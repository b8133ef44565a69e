// What makes a run trustworthy, checked after it: only 2xx answers, the same
// response as startline's, a clean exit, the processes on the cores they were
// pinned to; and the rest of the machine quiet enough (other processes or the
// hypervisor taking more than a tenth of a core makes a run suspect).

import type { Context } from "./context.js";
import { log } from "./context.js";
import { serverCores } from "./launch.js";
import { clockTicksPerSecond, cpuTicks, reapedChildrenTicks, systemTicks } from "./proc.js";
import { SERVER_LABEL, type IdleRecord, type RunRecord } from "./report.js";
import type { Scenario } from "./scenarios.js";


/** "0-1,3" -> "0,1,3". */
function expandCpuList(list: string): string {
  return list
    .split(",")
    .flatMap((part) => {
      const [from, to] = part.split("-").map(Number);
      if (to === undefined) return [from!];
      return Array.from({ length: to - from! + 1 }, (_, i) => from! + i);
    })
    .join(",");
}

function checkCores(ctx: Context, where: string, scenario: Scenario, processes: ReadonlyArray<{ pid: number; cpusAllowed: string }>): void {
  if (!ctx.pinning.enabled) return;
  const expected = expandCpuList(serverCores(ctx.pinning, scenario));
  for (const p of processes) {
    if (expandCpuList(p.cpusAllowed) !== expected) ctx.problems.push(`${where}: pid ${p.pid} allowed on cores ${p.cpusAllowed}, expected ${serverCores(ctx.pinning, scenario)}`);
  }
}

/** `discarded`: a run measured again; what went wrong still counts, but for having no response at all. */
export function checkRun(ctx: Context, scenario: Scenario, run: RunRecord, discarded = false): void {
  const where = `${run.scenario} / ${SERVER_LABEL[run.server]} / round ${run.round}`;
  const m = run.measured;
  // wrk counts the answers of status 400 and above; the one request checked by hand before the run saw the status itself.
  if (m.non2xx > 0 || m.errors > 0) ctx.problems.push(`${where}: ${m.non2xx} answers of status 400 or above, ${m.errors} errors (${m.timeouts} timeouts)`);
  if (run.warmup !== null && (run.warmup.non2xx > 0 || run.warmup.errors > 0)) {
    ctx.problems.push(`${where}: warm-up had ${run.warmup.non2xx} answers of status 400 or above and ${run.warmup.errors} errors`);
  }
  if (m.requests === 0 && !discarded) ctx.problems.push(`${where}: no response at all`);
  for (const diff of run.responseDiffs) ctx.problems.push(`${where}: response differs from startline's: ${diff}`);
  if (run.exit.code !== 0) ctx.problems.push(`${where}: server exit code ${run.exit.code} (signal ${run.exit.signal}) on SIGTERM`);
  const workers = scenario.workers ?? 1;
  const expectedProcesses = workers > 1 ? workers + 1 : 1;
  if (run.processes.length !== expectedProcesses) {
    ctx.problems.push(`${where}: ${run.processes.length} process(es) measured (${run.processes.map((p) => p.pid).join(", ")}), expected ${expectedProcesses}`);
  }
  checkCores(ctx, where, scenario, run.processes);
}

export function checkIdle(ctx: Context, scenario: Scenario, run: IdleRecord): void {
  const where = `${run.scenario} / ${SERVER_LABEL[run.server]} / round ${run.round}`;
  const { opened, closed } = run;
  if (opened.failed > 0 || opened.non2xx > 0) {
    ctx.problems.push(`${where}: ${opened.failed} of ${run.connections} connections failed, ${opened.non2xx} answers not 2xx (${opened.errors.join("; ")})`);
  }
  if (closed.closedEarly > 0) ctx.problems.push(`${where}: the server closed ${closed.closedEarly} idle connections during the measurement`);
  if (closed.closed - closed.closedEarly < run.connections) ctx.problems.push(`${where}: held ${closed.closed - closed.closedEarly} connections, not ${run.connections}`);
  for (const diff of run.responseDiffs) ctx.problems.push(`${where}: response differs from startline's: ${diff}`);
  if (run.exit.code !== 0) ctx.problems.push(`${where}: server exit code ${run.exit.code} (signal ${run.exit.signal}) on SIGTERM`);
  checkCores(ctx, where, scenario, [{ pid: run.pid, cpusAllowed: run.cpusAllowed }]);
}

/** Other processes busy above this share of a core during a run: its figures are suspect. */
export const BUSY_MACHINE = 0.1;

interface Machine {
  readonly machine: { readonly otherCpu: number; readonly stealCpu: number };
}

function busy(part: Machine): boolean {
  return part.machine.otherCpu > BUSY_MACHINE || part.machine.stealCpu > BUSY_MACHINE;
}

/** Other processes, or the hypervisor, took more than BUSY_MACHINE of a core during the run. */
export function disturbed(run: Machine): boolean {
  return busy(run);
}

export function checkMachine(ctx: Context, run: RunRecord): void {
  if (!busy(run)) return;
  const { otherCpu, stealCpu } = run.machine;
  ctx.warnings.push(
    `${run.scenario} / ${SERVER_LABEL[run.server]} / round ${run.round}: the machine was busy with other work ` +
      `(other processes ${(otherCpu * 100).toFixed(0)}% of a core, hypervisor steal ${(stealCpu * 100).toFixed(0)}%)`,
  );
}

/** Waits until the rest of the machine (all but this process and its reaped children) is quiet, at most `seconds`. */
export async function waitQuiet(ctx: Context, seconds: number): Promise<void> {
  if (seconds <= 0) return;
  const deadline = Date.now() + seconds * 1000;
  const ours = () => cpuTicks(process.pid) + reapedChildrenTicks();
  for (;;) {
    const system0 = systemTicks();
    const ours0 = ours();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const other = (systemTicks().busy - system0.busy - (ours() - ours0)) / clockTicksPerSecond();
    if (other <= BUSY_MACHINE) return;
    if (Date.now() >= deadline) {
      log(`  (still ${(other * 100).toFixed(0)}% of a core busy with other work after waiting ${seconds} s; going on)`);
      return;
    }
  }
}
