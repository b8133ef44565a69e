// How long a status request (GET /api/v2/status, on a fresh connection) waits
// beside whatever a hardening script makes the server do. Timed from a
// process of its own: the script's process is busy with its own clients
// (hundreds of sockets), whose events would delay the timing and count as
// the server's wait.
//
//   node dist/bench/hardening/status-probe.js PORT HOLD_MS   (prints the waits as JSON)

import { spawn } from "node:child_process";
import { once } from "node:events";
import net from "node:net";
import { fileURLToPath } from "node:url";

/** One GET on a fresh connection: ms from connect to the whole response. */
export async function timedStatus(port: number): Promise<number> {
  const t0 = performance.now();
  const socket = net.connect(port, "127.0.0.1");
  let failed = false;
  socket.on("error", () => (failed = true));
  socket.write("GET /api/v2/status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  socket.resume();
  await once(socket, "close");
  // A status request that failed waited forever, as far as its client can tell.
  return failed ? Infinity : performance.now() - t0;
}

/** Status waits, one every 100 ms for `ms`, timed by a process of its own. */
export async function probeStatus(port: number, ms: number): Promise<number[]> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), String(port), String(ms)], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  const [code] = (await once(child, "exit")) as [number | null];
  if (code !== 0) throw new Error(`the status prober exited with ${code}`);
  return JSON.parse(out) as number[];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const port = Number(process.argv[2]);
  const holdMs = Number(process.argv[3]);
  const waits: number[] = [];
  const t0 = performance.now();
  while (performance.now() - t0 < holdMs) {
    waits.push(await timedStatus(port));
    await new Promise((r) => setTimeout(r, 100));
  }
  console.log(JSON.stringify(waits));
}
