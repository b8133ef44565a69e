// Measuring a process from outside, through /proc (Linux), and pinning
// processes to cores with taskset.

import { execFileSync, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync, readdirSync, readlinkSync, realpathSync } from "node:fs";
import { availableParallelism } from "node:os";

let ticks: number | undefined;

/** Clock ticks per second, the unit of utime/stime in /proc/<pid>/stat (`getconf CLK_TCK`). */
export function clockTicksPerSecond(): number {
  if (ticks === undefined) {
    try {
      const n = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());
      ticks = Number.isInteger(n) && n > 0 ? n : 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
}

/** utime + stime of a process, all its threads, in clock ticks (/proc/<pid>/stat fields 14 and 15). */
export function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Field 2 (comm) is in parentheses and may contain spaces or ")"; count from the last ")".
  const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // rest[0] is field 3 (state), so field n is rest[n - 3].
  const utime = Number(rest[14 - 3]);
  const stime = Number(rest[15 - 3]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error(`cannot read utime/stime from /proc/${pid}/stat`);
  return utime + stime;
}

/**
 * CPU time of this process's children that have ended and been waited for
 * (cutime + cstime, /proc/self/stat fields 16 and 17), in clock ticks: how
 * the runner measures a load generator that runs as a short-lived child
 * (wrk), whose own /proc entry is gone by the time its figures are known.
 */
export function reapedChildrenTicks(): number {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const cutime = Number(rest[16 - 3]);
  const cstime = Number(rest[17 - 3]);
  if (!Number.isFinite(cutime) || !Number.isFinite(cstime)) throw new Error("cannot read cutime/cstime from /proc/self/stat");
  return cutime + cstime;
}

export interface ProcStatus {
  /** VmRSS in KiB. */
  readonly rssKiB: number;
  /** VmHWM (peak RSS) in KiB. */
  readonly hwmKiB: number;
  /** Cpus_allowed_list, e.g. "0" or "0-1". */
  readonly cpusAllowed: string;
}

export function procStatus(pid: number): ProcStatus {
  const text = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name: string): string => {
    const m = new RegExp(`^${name}:\\s*(.*)$`, "m").exec(text);
    if (m === null || m[1] === undefined) throw new Error(`no ${name} in /proc/${pid}/status`);
    return m[1].trim();
  };
  const kib = (name: string) => Number.parseInt(field(name), 10);
  return { rssKiB: kib("VmRSS"), hwmKiB: kib("VmHWM"), cpusAllowed: field("Cpus_allowed_list") };
}

/** The executable a pid runs, e.g. to check that it is node itself and not a wrapper such as taskset. */
export function exePath(pid: number): string {
  return realpathSync(readlinkSync(`/proc/${pid}/exe`));
}

export const NODE_EXE = realpathSync(process.execPath);

export interface Pinning {
  /** taskset works and there are at least two cores we may use. */
  readonly enabled: boolean;
  /** Why not, when not. */
  readonly reason: string;
  readonly serverCore: number;
  readonly clientCore: number;
}

/** Pins servers to core 0 and the load generator to core 1, when taskset exists and both cores are usable. */
export function detectPinning(): Pinning {
  const base = { serverCore: 0, clientCore: 1 };
  if (availableParallelism() < 2) return { ...base, enabled: false, reason: `only ${availableParallelism()} core available` };
  for (const core of [0, 1]) {
    const r = spawnSync("taskset", ["-c", String(core), "true"], { stdio: "ignore" });
    if (r.error !== undefined) return { ...base, enabled: false, reason: `taskset not usable (${(r.error as NodeJS.ErrnoException).code ?? r.error.message})` };
    if (r.status !== 0) return { ...base, enabled: false, reason: `taskset -c ${core} failed (core ${core} not allowed?)` };
  }
  return { ...base, enabled: true, reason: "taskset" };
}

/**
 * The command line that runs `node args...` pinned to a core or a list of
 * cores ("0", "0-1"; taskset execs node: same pid).
 *
 * With `openFiles`, it goes through bash first, which raises the hard limit
 * on open files to that when it is lower (this needs privilege,
 * CAP_SYS_RESOURCE; without it the limit stays as it is), then execs the
 * rest: the pid is still node's in the end. Node raises its own soft limit to
 * the hard limit as it starts, so the hard limit is what counts; the caller
 * checks the result in /proc/<pid>/limits.
 */
export function pinnedNode(pinning: Pinning, cores: number | string, args: readonly string[], openFiles?: number): [string, string[]] {
  const command: [string, string[]] = pinning.enabled ? ["taskset", ["-c", String(cores), process.execPath, ...args]] : [process.execPath, [...args]];
  if (openFiles === undefined) return command;
  const script = 'hard=$(ulimit -Hn); if [ "$hard" != unlimited ] && [ "$hard" -lt "$1" ]; then ulimit -n "$1" 2>/dev/null; fi; shift; exec "$@"';
  return ["bash", ["-c", script, "bash", String(openFiles), command[0], ...command[1]]];
}

/** The soft limit on open files of a process ("Max open files" in /proc/<pid>/limits); Infinity when unlimited. */
export function openFilesLimit(pid: number): number {
  const line = readFileSync(`/proc/${pid}/limits`, "utf8").split("\n").find((l) => l.startsWith("Max open files"));
  const soft = line?.slice("Max open files".length).trim().split(/\s+/)[0];
  if (soft === undefined) throw new Error(`no "Max open files" in /proc/${pid}/limits`);
  return soft === "unlimited" ? Infinity : Number(soft);
}

/** The pids of a process's children, grandchildren, ... (e.g. a cluster primary's workers), from /proc/<pid>/task/<tid>/children. */
export function descendants(pid: number): number[] {
  const found: number[] = [];
  const visit = (parent: number) => {
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${parent}/task`);
    } catch {
      return; // gone
    }
    for (const tid of tasks) {
      let children = "";
      try {
        children = readFileSync(`/proc/${parent}/task/${tid}/children`, "utf8");
      } catch {
        continue;
      }
      for (const child of children.trim().split(/\s+/).filter((c) => c !== "").map(Number)) {
        if (!found.includes(child)) {
          found.push(child);
          visit(child);
        }
      }
    }
  };
  visit(pid);
  return found.sort((a, b) => a - b);
}

/** Pins an existing process (e.g. this one), all its threads (-a), to a core. */
export function pinPid(pid: number, core: number): void {
  execFileSync("taskset", ["-a", "-pc", String(core), String(pid)], { stdio: "ignore" });
}

export interface SystemTicks {
  /** user + nice + system over all cores (guest time is inside user). */
  readonly busy: number;
  readonly irq: number;
  /** Time the hypervisor gave to someone else while we wanted to run. */
  readonly steal: number;
}

/** The aggregate "cpu" line of /proc/stat, in clock ticks. */
export function systemTicks(): SystemTicks {
  const line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0] ?? "";
  const [, user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
  return { busy: (user ?? 0) + (nice ?? 0) + (system ?? 0), irq: (irq ?? 0) + (softirq ?? 0), steal: steal ?? 0 };
}

/**
 * The port a server child announces on stdout ("listening on http://HOST:PORT");
 * rejects if it fails to start or exits first, with `describeExit()` in the message.
 */
export function listeningPort(child: ChildProcess, what: string, describeExit: () => string = () => ""): Promise<number> {
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.setEncoding("utf8").on("data", (s: string) => {
      out += s;
      const m = /listening on https?:\/\/[^\s]*:(\d+)/.exec(out);
      if (m !== null) resolve(Number(m[1]));
    });
    child.once("error", reject);
    child.once("exit", (code, signal) => reject(new Error(`${what} exited (code ${code}, signal ${signal}) before listening${describeExit()}`)));
  });
}
