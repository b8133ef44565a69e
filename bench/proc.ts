// Looking at processes from outside, through /proc (Linux), pinning them to
// cores with taskset, and the few statistics the report takes.

import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { availableParallelism } from "node:os";

/** Clock ticks per second, the unit of /proc's CPU times (`getconf CLK_TCK`). */
export const HZ = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** Fields of /proc/<pid>/stat from the third on (the name in parentheses may hold spaces): field n is at n - 3. */
function statFields(pid: number | "self"): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** utime + stime of a process, all its threads, in clock ticks. */
export function cpuTicks(pid: number): number {
  const f = statFields(pid);
  return Number(f[14 - 3]) + Number(f[15 - 3]);
}

/** cutime + cstime of this process: its children that have exited (wrk, whose /proc entry is gone once its figures exist). */
export function reapedChildrenTicks(): number {
  const f = statFields("self");
  return Number(f[16 - 3]) + Number(f[17 - 3]);
}

/** VmRSS and VmHWM (peak RSS) in KiB. */
export function procStatus(pid: number): { rssKiB: number; hwmKiB: number } {
  const text = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s*(\\d+)`, "m").exec(text)?.[1] ?? NaN);
  return { rssKiB: kib("VmRSS"), hwmKiB: kib("VmHWM") };
}

/** A process and all its descendants (a cluster primary's workers). */
export function processTree(pid: number): number[] {
  const found = [pid];
  for (let i = 0; i < found.length; i++) {
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${found[i]}/task`);
    } catch {
      continue; // gone
    }
    for (const tid of tasks) {
      let children = "";
      try {
        children = readFileSync(`/proc/${found[i]}/task/${tid}/children`, "utf8");
      } catch {
        continue;
      }
      for (const child of children.split(" ").filter((c) => c.trim() !== "").map(Number)) if (!found.includes(child)) found.push(child);
    }
  }
  return found;
}

/** Busy ticks of the whole machine (user + nice + system, all cores: the aggregate line of /proc/stat). */
export function machineBusyTicks(): number {
  const [, user, nice, system] = (readFileSync("/proc/stat", "utf8").split("\n", 1)[0] ?? "").trim().split(/\s+/).map(Number);
  return (user ?? 0) + (nice ?? 0) + (system ?? 0);
}

export interface Pinning {
  readonly enabled: boolean;
  /** Why not, when not. */
  readonly reason: string;
  readonly serverCore: number;
  readonly clientCore: number;
}

/** Servers on core 0, the load generator and the runner on core 1, when taskset exists and both cores may be used. */
export function detectPinning(): Pinning {
  const base = { serverCore: 0, clientCore: 1 };
  if (availableParallelism() < 2) return { ...base, enabled: false, reason: `only ${availableParallelism()} core available` };
  for (const core of [0, 1]) {
    const r = spawnSync("taskset", ["-c", String(core), "true"], { stdio: "ignore" });
    if (r.error !== undefined || r.status !== 0) return { ...base, enabled: false, reason: `taskset -c ${core} failed` };
  }
  return { ...base, enabled: true, reason: "taskset" };
}

/** Pins an existing process, all its threads, to a core. */
export function pinPid(pid: number, core: number): void {
  execFileSync("taskset", ["-a", "-pc", String(core), String(pid)], { stdio: "ignore" });
}

/** `command args...` run pinned to `cores` ("0", "0-1"); taskset execs the command, so the pid is the command's. */
export function pinned(pinning: Pinning, cores: string, command: string, args: readonly string[]): [string, string[]] {
  return pinning.enabled ? ["taskset", ["-c", cores, command, ...args]] : [command, [...args]];
}

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const at = (p / 100) * (sorted.length - 1);
  const low = Math.floor(at);
  return sorted[low]! + (sorted[Math.min(low + 1, sorted.length - 1)]! - sorted[low]!) * (at - low);
}

export const median = (values: readonly number[]) => percentile(values, 50);
