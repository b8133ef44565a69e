// Floods against the real server process, on 127.0.0.1 only, with the
// server's memory read from /proc/<pid>/status (VmRSS, VmHWM = peak RSS).
//
//   npm run --silent build && node dist/bench/hardening/floods.js [--connections 100] [--pipeline-connections 10] [--only name,name]
//
// Each flood runs against a fresh server (so its peak RSS is its own), from
// --connections clients at once (default 100), each sending the flood on
// its own connection:
//
//   pipeline   100,000 pipelined GET /api/v2/status, responses never read
//   cl-1gib    POST with Content-Length: 1 GiB, then body bytes as fast as the socket takes them
//   chunked    POST, Transfer-Encoding: chunked, 16 KiB chunks without end
//   headers    10,000 header fields
//   long-line  a header line that never ends (1 MiB and more)
//   chunk-ext  a chunk-size line whose extensions never end
//
// Reported per flood: the status every client got, when (ms after its first
// byte), how many bytes each had sent by then, and the server's RSS before,
// at its peak, and after; for `pipeline`, how many requests the server
// answered before it stopped reading, its CPU while stalled, and when and how
// the connections ended. Exit status 0 when every client got the expected
// status and the server's peak RSS stayed under 256 MiB; 1 otherwise.

import net from "node:net";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { fmt, memory, percentile, socketCount, startServer, waitFor, type ServerProcess } from "./lib.js";

const MiB = 1024 * 1024;
const RSS_LIMIT_MIB = 256;

interface ClientOutcome {
  readonly status: number | null;
  readonly code: string | null;
  /** ms from connect to the first response byte. */
  readonly answeredMs: number | null;
  readonly sentBeforeAnswer: number;
  readonly closed: boolean;
  readonly error: string | null;
}

/**
 * One hostile client: writes `head`, then what `more` yields, as fast as the
 * socket takes it, until the first response byte; then stops sending and reads
 * until the server closes (at most `closeWithinMs`).
 */
async function floodClient(port: number, head: Buffer, more: () => Buffer | null, closeWithinMs = 10_000): Promise<ClientOutcome> {
  const socket = net.connect(port, "127.0.0.1");
  await once(socket, "connect");
  const t0 = performance.now();
  let sent = 0;
  let answeredMs: number | null = null;
  let sentBeforeAnswer = 0;
  let error: string | null = null;
  const received: Buffer[] = [];
  socket.on("error", (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
  socket.on("data", (d: Buffer) => {
    if (answeredMs === null) {
      answeredMs = performance.now() - t0;
      sentBeforeAnswer = sent;
    }
    received.push(d);
  });
  const closed = once(socket, "close").then(() => true);
  const write = (b: Buffer) => {
    sent += b.length;
    return socket.write(b);
  };
  write(head);
  const pump = () => {
    while (answeredMs === null && !socket.destroyed) {
      const piece = more();
      if (piece === null) return;
      if (!write(piece)) return void socket.once("drain", pump);
    }
  };
  pump();
  const timer = new Promise<false>((r) => setTimeout(() => r(false), closeWithinMs).unref());
  const didClose = await Promise.race([closed, timer]);
  if (!didClose) socket.destroy();
  const text = Buffer.concat(received).toString("latin1");
  const status = /^HTTP\/1\.1 (\d{3}) /.exec(text)?.[1];
  const body = text.slice(text.indexOf("\r\n\r\n") + 4);
  let code: string | null = null;
  try {
    code = (JSON.parse(body) as { code?: string }).code ?? null;
  } catch {
    code = null;
  }
  return { status: status === undefined ? null : Number(status), code, answeredMs, sentBeforeAnswer, closed: didClose, error };
}

interface Flood {
  readonly name: string;
  readonly what: string;
  readonly status: number;
  readonly code: string;
  readonly head: Buffer;
  /** A fresh body generator per client. */
  readonly more: () => () => Buffer | null;
}

const repeat = (piece: Buffer, times: number) => () => {
  let n = 0;
  return () => (n++ < times ? piece : null);
};

const FLOODS: readonly Flood[] = [
  {
    name: "cl-1gib",
    what: "Content-Length: 1 GiB, body bytes as fast as the socket takes them",
    status: 413,
    code: "CONTENT_TOO_LARGE",
    head: Buffer.from(`POST /api/v2/facts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: ${1024 * MiB}\r\n\r\n`),
    more: repeat(Buffer.alloc(64 * 1024, 0x61), 16 * 1024),
  },
  {
    name: "chunked",
    what: "chunked upload, 16 KiB chunks without end",
    status: 413,
    code: "CONTENT_TOO_LARGE",
    head: Buffer.from("POST /api/v2/facts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"),
    more: repeat(Buffer.concat([Buffer.from("4000\r\n"), Buffer.alloc(16 * 1024, 0x62), Buffer.from("\r\n")]), 64 * 1024),
  },
  {
    name: "headers",
    what: "10,000 header fields",
    status: 431,
    code: "TOO_MANY_HEADERS",
    head: Buffer.from(`GET /api/v2/status HTTP/1.1\r\nHost: 127.0.0.1\r\n${Array.from({ length: 10_000 }, (_, i) => `X-Field-${i}: v\r\n`).join("")}\r\n`),
    more: () => () => null,
  },
  {
    name: "long-line",
    what: "a header line that never ends",
    status: 431,
    code: "HEADERS_TOO_LARGE",
    head: Buffer.from("GET /api/v2/status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Long: "),
    more: repeat(Buffer.alloc(64 * 1024, 0x61), 16 * 1024),
  },
  {
    name: "chunk-ext",
    what: "chunk extensions that never end",
    status: 400,
    code: "CHUNK_EXTENSIONS_TOO_LARGE",
    head: Buffer.from("POST /api/v2/facts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n5"),
    more: repeat(Buffer.from(";a=b".repeat(16 * 1024)), 16 * 1024),
  },
];

interface Row {
  readonly name: string;
  readonly what: string;
  readonly statuses: string;
  readonly ok: boolean;
  readonly answeredMs: string;
  readonly sentKiB: string;
  readonly rss: { before: number; peak: number; after: number };
}

async function runFlood(flood: Flood, connections: number): Promise<Row> {
  const server = await startServer();
  const before = memory(server.pid).rssMiB;
  const outcomes = await Promise.all(Array.from({ length: connections }, () => floodClient(server.port, flood.head, flood.more())));
  const { rssMiB: after, peakMiB: peak } = memory(server.pid);
  await server.stop();
  const counts = new Map<string, number>();
  for (const o of outcomes) {
    const key = `${o.status ?? "none"} ${o.code ?? ""}${o.closed ? "" : " (not closed)"}${o.error ? ` (${o.error})` : ""}`.trim();
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const ok = outcomes.every((o) => o.status === flood.status && o.code === flood.code && o.closed && o.error === null);
  const answered = outcomes.map((o) => o.answeredMs ?? NaN).sort((a, b) => a - b);
  const sent = outcomes.map((o) => o.sentBeforeAnswer / 1024).sort((a, b) => a - b);
  return {
    name: flood.name,
    what: flood.what,
    statuses: [...counts].map(([k, n]) => `${n} × ${k}`).join(", "),
    ok,
    answeredMs: `${fmt(percentile(answered, 50), 1)} / ${fmt(answered[answered.length - 1] ?? NaN, 1)}`,
    sentKiB: `${fmt(percentile(sent, 50), 0)} / ${fmt(sent[sent.length - 1] ?? NaN, 0)}`,
    rss: { before, peak, after },
  };
}

/** utime + stime of a process, in clock ticks (/proc/<pid>/stat fields 14, 15). */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(rest[11]) + Number(rest[12]);
}

interface PipelineReport {
  readonly row: Row;
  readonly stalledAfterS: number | null;
  readonly stallCpuShare: number;
  readonly closedAfterS: number | null;
  readonly answered: string;
  readonly endings: string;
}

/**
 * `connections` clients each pipeline `requests` requests in one write and
 * never read. Then: when the server stops (its CPU stays flat), its RSS, and
 * when it closes the connections (its socket count back to the baseline);
 * only then do the clients read what reached them.
 */
async function runPipeline(connections: number, requests: number): Promise<PipelineReport> {
  const server: ServerProcess = await startServer();
  const before = memory(server.pid).rssMiB;
  const baseline = socketCount(server.pid);
  const payload = Buffer.from("GET /api/v2/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".repeat(requests));
  const sockets: net.Socket[] = [];
  const t0 = performance.now();
  for (let i = 0; i < connections; i++) {
    const socket = net.connect(server.port, "127.0.0.1");
    socket.pause(); // never read (until the end of the measurement)
    socket.on("error", () => {});
    sockets.push(socket);
    await once(socket, "connect");
    socket.write(payload);
  }
  // The server has stopped when its CPU stays flat for half a second, after it has been busy.
  let last = cpuTicks(server.pid);
  let busy = false;
  let flat = 0;
  const stalledMs = await waitFor(
    () => {
      const now = cpuTicks(server.pid);
      if (now - last > 1) {
        busy = true;
        flat = 0;
      } else if (busy) flat++;
      last = now;
      return flat >= 2;
    },
    20_000,
    250,
  );
  const stalledAfterS = stalledMs === null ? null : (performance.now() - t0) / 1000;
  const stallStart = cpuTicks(server.pid);
  const stallT0 = performance.now();
  await new Promise((r) => setTimeout(r, 2000));
  const stallCpuShare = (cpuTicks(server.pid) - stallStart) / clockTicks() / ((performance.now() - stallT0) / 1000);
  const stalledRss = memory(server.pid).rssMiB;
  // The server's side of every connection closed (it should: the headers timeout, then the linger).
  const closedMs = await waitFor(() => socketCount(server.pid) === baseline, 30_000, 100);
  const closedAfterS = closedMs === null ? null : (performance.now() - t0) / 1000;
  const { rssMiB: after, peakMiB: peak } = memory(server.pid);
  // Now read what reached each client.
  const endings = new Map<string, number>();
  const answeredCounts: number[] = [];
  await Promise.all(
    sockets.map(async (socket) => {
      let text = "";
      let how = "end";
      socket.on("error", (e: NodeJS.ErrnoException) => (how = e.code ?? e.message));
      socket.on("data", (d: Buffer) => (text += d.toString("latin1")));
      socket.resume();
      await Promise.race([once(socket, "close"), new Promise((r) => setTimeout(r, 5000))]);
      socket.destroy();
      const ok = text.split("HTTP/1.1 200 OK\r\n").length - 1;
      const timeouts = text.split("HTTP/1.1 408 ").length - 1;
      answeredCounts.push(ok);
      const key = `${how}${timeouts > 0 ? ", after a 408" : ""}`;
      endings.set(key, (endings.get(key) ?? 0) + 1);
    }),
  );
  await server.stop();
  answeredCounts.sort((a, b) => a - b);
  return {
    row: {
      name: "pipeline",
      what: `${requests.toLocaleString("en")} pipelined GET /api/v2/status per connection, never read`,
      statuses: `throttled: at most ${answeredCounts[answeredCounts.length - 1]?.toLocaleString("en")} of ${requests.toLocaleString("en")} answered, then not read; RSS ${fmt(stalledRss, 1)} MiB while stalled`,
      ok: stalledMs !== null && closedMs !== null,
      answeredMs: "-",
      sentKiB: `${fmt(payload.length / 1024, 0)} sent`,
      rss: { before, peak, after },
    },
    stalledAfterS,
    stallCpuShare,
    closedAfterS,
    answered: `${answeredCounts[0]?.toLocaleString("en")}..${answeredCounts[answeredCounts.length - 1]?.toLocaleString("en")}`,
    endings: [...endings].map(([k, n]) => `${n} × ${k}`).join(", "),
  };
}

let ticks: number | undefined;
/** Clock ticks per second, the unit of /proc/<pid>/stat's utime and stime. */
function clockTicks(): number {
  if (ticks === undefined) {
    try {
      ticks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  let connections = 100;
  let pipelineConnections = 10;
  let only: string[] | null = null;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--connections") connections = Number(args[++i]);
    else if (args[i] === "--pipeline-connections") pipelineConnections = Number(args[++i]);
    else if (args[i] === "--only") only = args[++i]!.split(",");
    else throw new Error(`unknown option ${args[i]}`);
  }
  const started = performance.now();
  const rows: Row[] = [];
  let pipeline: PipelineReport | null = null;
  if (only === null || only.includes("pipeline")) {
    console.log(`pipeline: ${pipelineConnections} connections × 100,000 pipelined requests, never read ...`);
    pipeline = await runPipeline(pipelineConnections, 100_000);
    rows.push(pipeline.row);
  }
  for (const flood of FLOODS) {
    if (only !== null && !only.includes(flood.name)) continue;
    console.log(`${flood.name}: ${connections} connections × ${flood.what} ...`);
    rows.push(await runFlood(flood, connections));
  }
  console.log("");
  console.log(`| flood (${connections} connections at once, each its own; pipeline: ${pipelineConnections}) | every client got | answered after, ms (median / max) | sent before the answer, KiB (median / max) | server RSS MiB: before / peak / after |`);
  console.log("|---|---|---:|---:|---:|");
  for (const r of rows) {
    console.log(`| ${r.name}: ${r.what} | ${r.statuses} | ${r.answeredMs} | ${r.sentKiB} | ${fmt(r.rss.before, 1)} / ${fmt(r.rss.peak, 1)} / ${fmt(r.rss.after, 1)} |`);
  }
  if (pipeline !== null) {
    console.log("");
    console.log(
      `pipeline: each connection got ${pipeline.answered} responses before the server stopped reading ` +
        `(stalled ${pipeline.stalledAfterS === null ? "NEVER within 20 s" : `${fmt(pipeline.stalledAfterS, 1)} s`} after the flood began; CPU while stalled ${fmt(pipeline.stallCpuShare * 100, 1)}% of a core); ` +
        `the server closed every connection ${pipeline.closedAfterS === null ? "NOT within 30 s" : `${fmt(pipeline.closedAfterS, 1)} s`} after the flood began; the clients then read: ${pipeline.endings}`,
    );
  }
  const peak = Math.max(...rows.map((r) => r.rss.peak));
  console.log(`highest server peak RSS: ${fmt(peak, 1)} MiB (limit checked: ${RSS_LIMIT_MIB} MiB); whole run ${fmt((performance.now() - started) / 1000, 1)} s`);
  const bad = rows.filter((r) => !r.ok).map((r) => r.name);
  if (peak > RSS_LIMIT_MIB) bad.push(`peak RSS ${fmt(peak, 1)} MiB`);
  console.log(bad.length === 0 ? "OK: every flood refused or throttled as expected" : `PROBLEMS: ${bad.join(", ")}`);
  return bad.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
