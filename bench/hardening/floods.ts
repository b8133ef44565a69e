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
//   cl-1gib-ignoring  the same from --pipeline-connections clients that keep sending after the 413
//   chunked    POST, Transfer-Encoding: chunked, 16 KiB chunks without end
//   headers    10,000 header fields
//   long-line  a header line that never ends (1 MiB and more)
//   chunk-ext  a chunk-size line whose extensions never end
//   tiny-chunks  8 clients, each a ~1 MiB chunked body of one-byte chunks
//
// Reported per flood: the status every client got, when (ms after its first
// byte), how many bytes each had sent by then, and the server's RSS before,
// at its peak, and after; for `pipeline`, how many requests the server
// answered before it stopped reading, its CPU while stalled, and when and how
// the connections ended. Exit status 0 when every client got the expected
// status and the server's peak RSS stayed under 256 MiB; 1 otherwise.

import net from "node:net";
import { once } from "node:events";
import { clockTicks, cpuTicks, fmt, memory, percentile, socketCount, startServer, waitFor, type ServerProcess } from "./lib.js";

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
  // The close is timed from the answer: how long the server takes to read a flood before it answers depends on the machine's load.
  const answered = new Promise<void>((resolve) => {
    if (answeredMs !== null) resolve();
    else socket.once("data", () => resolve());
  });
  await Promise.race([answered, closed, new Promise((r) => setTimeout(r, 60_000).unref())]);
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
  /** The protocol error code in the problem body; null for an API error, which has none. */
  readonly code: string | null;
  /** Clients at once, where the flood's point is not how many there are (default: --connections). */
  readonly connections?: number;
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
    // Memory in proportion to the body's bytes, whatever the chunking: each
    // one-byte chunk used to be kept as its own slice, ~125 MiB per connection.
    name: "tiny-chunks",
    what: "a chunked body of 1,048,560 one-byte chunks (6 MB on the wire), then its end",
    status: 400,
    code: null,
    connections: 8,
    head: Buffer.from("POST /api/v1/post/tiny HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"),
    more: () => {
      const perPiece = 10_000;
      const total = MiB - 16;
      const piece = Buffer.from("1\r\nx\r\n".repeat(perPiece), "latin1");
      let sent = 0;
      return () => {
        if (sent >= total) return null;
        if (sent + perPiece >= total) {
          const last = total - sent;
          sent = total;
          return Buffer.concat([piece.subarray(0, last * 6), Buffer.from("0\r\n\r\n", "latin1")]);
        }
        sent += perPiece;
        return piece;
      };
    },
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

interface IgnoringReport {
  readonly connections: number;
  /** MiB each client got into the server's socket after the 413, min..max. */
  readonly drainedMiB: string;
  /** ms from the first 413 to the server having closed every connection (its socket count back to the baseline). */
  readonly closedAfterMs: string;
  readonly serverCpuS: number;
  readonly statuses: string;
  readonly rss: { before: number; peak: number; after: number };
}

/**
 * Clients that ignore the 413: Content-Length: 1 GiB, and they keep sending
 * after the answer (half-open, as a raw client can), up to 1 GiB each. The
 * server reads and drops what arrives while it lingers (so that its response
 * is not lost to a reset), then closes: how much it takes in, and its CPU.
 */
async function runIgnoring(connections: number): Promise<IgnoringReport> {
  const server = await startServer();
  const before = memory(server.pid).rssMiB;
  const baseline = socketCount(server.pid);
  const cpu0 = cpuTicks(server.pid);
  const piece = Buffer.alloc(256 * 1024, 0x61);
  let firstAnswer: number | null = null;
  let allClosedAt: number | null = null;
  let connected = 0;
  const watcher = setInterval(() => {
    if (connected === connections && allClosedAt === null && socketCount(server.pid) === baseline) allClosedAt = performance.now();
  }, 20);
  const results = await Promise.all(
    Array.from({ length: connections }, async () => {
      const socket = net.connect({ port: server.port, host: "127.0.0.1", allowHalfOpen: true });
      await once(socket, "connect");
      connected++;
      let flushed = 0;
      let answeredAt: number | null = null;
      let flushedAtAnswer = 0;
      let closedAt: number | null = null; // a write failed or the socket closed: the server is gone
      let head = "";
      const done = new Promise<void>((resolve) => {
        socket.on("error", () => {
          closedAt ??= performance.now();
          resolve();
        });
        socket.on("close", () => {
          closedAt ??= performance.now();
          resolve();
        });
        // A client that queued its whole 1 GiB sees no error; the server's close is seen by the watcher.
        const poll = setInterval(() => {
          if (allClosedAt !== null) {
            clearInterval(poll);
            resolve();
          }
        }, 20);
        setTimeout(() => {
          clearInterval(poll);
          resolve();
        }, 15_000).unref();
      });
      socket.on("data", (d: Buffer) => {
        if (answeredAt === null) {
          answeredAt = performance.now();
          firstAnswer ??= answeredAt;
          flushedAtAnswer = flushed;
        }
        head += d.toString("latin1");
      });
      socket.write(`POST /api/v2/facts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: ${1024 * MiB}\r\n\r\n`);
      let queued = 0;
      const pump = () => {
        while (!socket.destroyed && closedAt === null && queued < 1024 * MiB) {
          queued += piece.length;
          const more = socket.write(piece, (error) => {
            if (!error) flushed += piece.length;
          });
          if (!more) return void socket.once("drain", pump);
        }
      };
      pump();
      await done;
      socket.destroy();
      return { status: /^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? "none", drained: flushed - flushedAtAnswer };
    }),
  );
  clearInterval(watcher);
  if (allClosedAt === null && (await waitFor(() => socketCount(server.pid) === baseline, 5000, 10)) !== null) allClosedAt = performance.now();
  const serverCpuS = (cpuTicks(server.pid) - cpu0) / clockTicks();
  const { rssMiB: after, peakMiB: peak } = memory(server.pid);
  await server.stop();
  const drained = results.map((r) => r.drained / MiB).sort((a, b) => a - b);
  const counts = new Map<string, number>();
  for (const r of results) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
  return {
    connections,
    drainedMiB: `${fmt(drained[0]!, 0)}..${fmt(drained[drained.length - 1]!, 0)}`,
    closedAfterMs: allClosedAt !== null && firstAnswer !== null ? fmt(allClosedAt - firstAnswer, 0) : "not within 20 s",
    serverCpuS,
    statuses: [...counts].map(([k, n]) => `${n} × ${k}`).join(", "),
    rss: { before, peak, after },
  };
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
  let ignoring: IgnoringReport | null = null;
  if (only === null || only.includes("cl-1gib-ignoring")) {
    console.log(`cl-1gib-ignoring: ${pipelineConnections} connections × Content-Length: 1 GiB, sending on after the 413 ...`);
    ignoring = await runIgnoring(pipelineConnections);
  }
  for (const flood of FLOODS) {
    if (only !== null && !only.includes(flood.name)) continue;
    const n = flood.connections ?? connections;
    console.log(`${flood.name}: ${n} connections × ${flood.what} ...`);
    rows.push(await runFlood(flood, n));
  }
  console.log("");
  console.log(`| flood (${connections} connections at once, each its own; pipeline: ${pipelineConnections}) | every client got | answered after, ms (median / max) | written by the client before the answer arrived, KiB (median / max) | server RSS MiB: before / peak / after |`);
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
  if (ignoring !== null) {
    console.log("");
    console.log(
      `cl-1gib-ignoring: ${ignoring.connections} clients that keep sending after the 413 (${ignoring.statuses}): the server read and dropped ` +
        `${ignoring.drainedMiB} MiB from each after answering, and had closed every connection ${ignoring.closedAfterMs}${/^\d/.test(ignoring.closedAfterMs) ? " ms" : ""} after the first 413 (the linger); ` +
        `server CPU ${fmt(ignoring.serverCpuS, 2)} s in all; RSS ${fmt(ignoring.rss.before, 1)} / ${fmt(ignoring.rss.peak, 1)} / ${fmt(ignoring.rss.after, 1)} MiB`,
    );
    rows.push({ name: "cl-1gib-ignoring", what: "", statuses: ignoring.statuses, ok: ignoring.statuses === `${ignoring.connections} × 413`, answeredMs: "", sentKiB: "", rss: ignoring.rss });
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
