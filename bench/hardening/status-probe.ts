// How long a status request waits while other clients keep the server busy:
// the measure of "no step holds the event loop" (bench/hardening/
// stalled-readers.ts, status-wait.ts).
//
// GET /api/v2/status is sent on a fresh connection every `every` ms, and
// timed from connect to the end of its answer, by a process of its own (this
// file, run with --probe): the process that drives the busy clients is busy
// itself, and its own delays would count as the server's.

import { spawn } from "node:child_process";
import { once } from "node:events";
import net from "node:net";
import { fileURLToPath } from "node:url";

/** One GET /api/v2/status on a fresh connection: ms from connect to the whole response (Infinity if it failed). */
export async function timedStatus(port: number): Promise<number> {
  const t0 = performance.now();
  const socket = net.connect(port, "127.0.0.1");
  let failed = false;
  socket.on("error", () => (failed = true));
  socket.write("GET /api/v2/status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  socket.resume();
  await once(socket, "close");
  return failed ? Infinity : performance.now() - t0;
}

/** Status waits, one every `every` ms for `ms`, timed by a process of its own; sorted, shortest first. */
export async function probeStatus(port: number, ms: number, every: number): Promise<number[]> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "--probe", String(port), String(ms), String(every)], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  const [code] = (await once(child, "exit")) as [number | null];
  if (code !== 0) throw new Error(`the status prober exited with ${code}`);
  return (JSON.parse(out) as number[]).sort((a, b) => a - b);
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === "--probe") {
  const [port, holdMs, every] = process.argv.slice(3).map(Number) as [number, number, number];
  const waits: number[] = [];
  for (const t0 = performance.now(); performance.now() - t0 < holdMs; await new Promise((r) => setTimeout(r, every))) waits.push(await timedStatus(port));
  console.log(JSON.stringify(waits));
  process.exit(0);
}
