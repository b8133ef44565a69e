// One measurement of one running server: a load run under wrk, with the
// server's CPU time and RSS read from /proc around it and what the rest of
// the machine did meanwhile; or the RSS that idle connections cost it.

import { writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import type { Server, Workspace } from "./launch.js";
import { HZ, cpuTicks, machineBusyTicks, procStatus, processTree, reapedChildrenTicks } from "./proc.js";
import type { Scenario, ServerKind } from "./scenarios.js";
import { runWrk, type LoadSummary } from "./wrk.js";

export interface Run extends Omit<LoadSummary, "seconds"> {
  readonly scenario: string;
  readonly server: ServerKind;
  readonly round: number;
  /** Server CPU (utime + stime, summed over its processes) ÷ responses. */
  readonly cpuUsPerRequest: number;
  /** VmRSS after the run, summed over the processes; VmHWM of the first. */
  readonly rssMiB: number;
  readonly peakMiB: number;
  /** CPU of everything but the server, wrk and this runner, in cores, over the run: another process's load. */
  readonly otherCores: number;
}

let runs = 0;
const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

/** wrk against the server for `seconds` (a warm-up is the same run, its figures dropped). */
export async function loadRun(ws: Workspace, scenario: Scenario, server: Server, round: number, seconds: number, connections: number): Promise<Run> {
  const job = {
    url: server.url,
    method: scenario.method,
    path: scenario.path,
    headers: scenario.headers ?? {},
    connections: scenario.connections ?? connections,
    depth: scenario.depth ?? 1,
    seconds,
    // Every run publishes under ids of its own (post-new): a repeated id would be a 409.
    prefix: `r${++runs}`,
    ...(scenario.body === undefined ? {} : { bodyFile: path.join(ws.dir, `${scenario.name}.body`) }),
  };
  if (job.bodyFile !== undefined) writeFileSync(job.bodyFile, scenario.body!);
  const pids = processTree(server.pid);
  const ours = () => cpuTicks(process.pid) + reapedChildrenTicks();
  const [ticks, busy, own, wall] = [sum(pids.map(cpuTicks)), machineBusyTicks(), ours(), process.hrtime.bigint()];
  const s = await runWrk(ws.pinning, job);
  const wallS = Number(process.hrtime.bigint() - wall) / 1e9;
  const serverTicks = sum(pids.map(cpuTicks)) - ticks;
  const others = machineBusyTicks() - busy - serverTicks - (ours() - own);
  return {
    scenario: scenario.name,
    server: server.kind,
    round,
    requests: s.requests,
    reqPerSec: s.reqPerSec,
    p50Ms: s.p50Ms,
    p99Ms: s.p99Ms,
    errors: s.errors,
    wrkCpu: s.wrkCpu,
    cpuUsPerRequest: s.requests > 0 ? (serverTicks * 1e6) / HZ / s.requests : NaN,
    rssMiB: sum(pids.map((pid) => procStatus(pid).rssKiB)) / 1024,
    peakMiB: procStatus(server.pid).hwmKiB / 1024,
    otherCores: Math.max(0, others / HZ / wallS),
  };
}

export interface IdleRun {
  readonly scenario: string;
  readonly server: ServerKind;
  readonly round: number;
  /** Connections answered and then held open and silent until the end. */
  readonly held: number;
  /** Failed, answered with another status than 2xx, or closed by the server while held. */
  readonly failed: number;
  readonly kibPerConnection: number;
  /** The server's CPU accepting them and answering their one request, ÷ connections. */
  readonly cpuUsPerConnection: number;
}

/** Its RSS after a full collection (SIGUSR2: bench/gc-on-signal.cjs) and a second's pause, in KiB. */
async function settledRss(pid: number): Promise<number> {
  process.kill(pid, "SIGUSR2");
  await new Promise((resolve) => setTimeout(resolve, 1000));
  return procStatus(pid).rssKiB;
}

/**
 * `count` connections, each sending a request and reading its answer (as
 * many times as the scenario's idleRequests, one after another), then
 * held open and silent (by this process, on the client core; at most 100
 * being opened at a time): the server's RSS with them, less its RSS before.
 */
export async function idleRun(scenario: Scenario, server: Server, round: number, count: number): Promise<IdleRun> {
  const request = `${scenario.method} ${scenario.path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
  const before = await settledRss(server.pid);
  const ticks = cpuTicks(server.pid);
  const sockets: net.Socket[] = [];
  let [refused, closedEarly, next] = [0, 0, 0];
  // An answer is whole once its Content-Length of body is in; then the connection is held, and any close is early.
  const openOne = () =>
    new Promise<void>((resolve) => {
      const socket = net.connect(server.port, "127.0.0.1", () => socket.write(request));
      let text = "";
      let answered = 0;
      socket.once("error", () => (refused++, socket.destroy(), resolve()));
      socket.on("data", (d: Buffer) => {
        const end = (text += d.toString("latin1")).indexOf("\r\n\r\n");
        const length = /\r\ncontent-length: *(\d+)/i.exec(text);
        if (end < 0 || length === null || text.length < end + 4 + Number(length[1])) return;
        if (/^HTTP\/1\.1 2/.test(text) && ++answered < (scenario.idleRequests ?? 1)) {
          text = "";
          socket.write(request);
          return;
        }
        socket.removeAllListeners("data").removeAllListeners("error");
        if (/^HTTP\/1\.1 2/.test(text)) sockets.push(socket.on("close", () => closedEarly++).on("error", () => {}));
        else (refused++, socket.destroy());
        resolve();
      });
    });
  await Promise.all(Array.from({ length: 100 }, async () => {
    while (next++ < count) await openOne();
  }));
  const cpu = cpuTicks(server.pid) - ticks;
  const withThem = await settledRss(server.pid);
  const held = sockets.length - closedEarly;
  for (const s of sockets) s.removeAllListeners("close").destroy();
  return {
    scenario: scenario.name,
    server: server.kind,
    round,
    held,
    failed: refused + closedEarly,
    kibPerConnection: held > 0 ? (withThem - before) / held : NaN,
    cpuUsPerConnection: held > 0 ? (cpu * 1e6) / HZ / held : NaN,
  };
}
