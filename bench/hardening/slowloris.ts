// Slowloris against the real server process, on 127.0.0.1 only.
//
//   npm run --silent build && node dist/bench/hardening/slowloris.js [--slow 1000] [--seconds 8] [--headers-timeout-ms 3000]
//
// 1. Starts dist/src/main.js with HEADERS_TIMEOUT_MS=3000 and counts its open
//    sockets (/proc/<pid>/fd): the baseline.
// 2. A normal client (autocannon, 10 connections, keep-alive) runs against
//    GET /api/v2/status: p50 and p99 latency without attack.
// 3. An attacker process holds 1,000 slowloris connections: each sends a
//    request head one byte per second and never finishes it; when the server
//    cuts one, it reconnects at once, so 1,000 are held all along. The same
//    normal client runs again: p50 and p99 under attack (target: p99 within 2x).
// 4. The attacker stops reconnecting; every slow connection must be cut at the
//    headers timeout, with a 408: the time from its first byte to the 408 is
//    reported (min, median, max), and any connection cut otherwise is counted.
// 5. The server's socket count must return to the baseline.
//
// Bounded in time: about 30 s with the defaults. Exit status 0 when every
// check holds, 1 otherwise.

import { fork } from "node:child_process";
import net from "node:net";
import { fileURLToPath } from "node:url";
import { fmt, load, percentile, socketCount, startServer, waitFor, type LoadResult } from "./lib.js";

interface AttackerStart {
  readonly kind: "start";
  readonly port: number;
  readonly count: number;
}
type ToAttacker = AttackerStart | { readonly kind: "stop" };

interface AttackerReport {
  readonly kind: "report";
  /** Connections opened in all. */
  readonly opened: number;
  /** Cut by the server after a 408 response: ms from the first byte sent to the 408. */
  readonly cutAfterMs: readonly number[];
  /** Closed by the server without any response, or failed to connect. */
  readonly cutWithoutResponse: number;
  readonly connectErrors: number;
  /** Anything but a 408 received. */
  readonly otherResponses: readonly string[];
  /** Most connections open at once. */
  readonly maxOpen: number;
  /** Connections still open when the attacker gave up waiting. */
  readonly stillOpen: number;
}
type FromAttacker = { readonly kind: "ready"; readonly open: number } | AttackerReport;

// ---- The attacker (a child process, so that its timers do not disturb the normal client's measurements) ----

function attacker(): void {
  const HEAD = "GET /api/v2/status HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slowloris\r\nX-Slow: ";
  let port = 0;
  let stopping = false;
  let open = 0;
  let maxOpen = 0;
  let opened = 0;
  let connectErrors = 0;
  let cutWithoutResponse = 0;
  const cutAfterMs: number[] = [];
  const otherResponses: string[] = [];
  const sockets = new Set<net.Socket>();

  const send = (m: FromAttacker) => process.send!(m);

  const openOne = () => {
    opened++;
    const socket = net.connect(port, "127.0.0.1");
    socket.setNoDelay(true);
    sockets.add(socket);
    let sent = 0;
    let firstByteAt = 0;
    let answered = false;
    let timer: NodeJS.Timeout | undefined;
    const next = () => {
      // One byte per second, never the end of the head: past the prefix, the value goes on with "a".
      socket.write(sent < HEAD.length ? HEAD[sent]! : "a");
      sent++;
    };
    socket.on("connect", () => {
      open++;
      maxOpen = Math.max(maxOpen, open);
      firstByteAt = performance.now();
      next();
      timer = setInterval(next, 1000);
    });
    socket.on("data", (d: Buffer) => {
      if (answered) return;
      answered = true;
      const text = d.toString("latin1");
      if (text.startsWith("HTTP/1.1 408 ")) cutAfterMs.push(performance.now() - firstByteAt);
      else otherResponses.push(text.split("\r\n")[0]!);
    });
    socket.on("error", (e: NodeJS.ErrnoException) => {
      if (firstByteAt === 0) connectErrors++;
      void e;
    });
    socket.on("close", () => {
      clearInterval(timer);
      sockets.delete(socket);
      if (firstByteAt !== 0) open--;
      if (firstByteAt !== 0 && !answered) cutWithoutResponse++;
      if (!stopping) openOne();
      else if (sockets.size === 0) finish();
    });
    // The server ends its side after the 408; end ours too.
    socket.on("end", () => socket.end());
  };

  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    send({ kind: "report", opened, cutAfterMs, cutWithoutResponse, connectErrors, otherResponses, maxOpen, stillOpen: sockets.size });
    for (const s of sockets) s.destroy();
    setTimeout(() => process.exit(0), 100);
  };

  process.on("message", (m: ToAttacker) => {
    if (m.kind === "start") {
      port = m.port;
      // Ramp up over about a second, in batches, so the listen backlog is not overrun.
      let started = 0;
      const batch = () => {
        const n = Math.min(100, m.count - started);
        for (let i = 0; i < n; i++) openOne();
        started += n;
        if (started < m.count) setTimeout(batch, 100);
        else {
          void waitOpen(m.count).then(() => send({ kind: "ready", open }));
        }
      };
      batch();
    } else {
      stopping = true;
      if (sockets.size === 0) finish();
      // The server must have cut every one by then (headers timeout + sweep); give up after 15 s.
      setTimeout(finish, 15_000).unref();
    }
  });

  const waitOpen = async (count: number) => {
    while (open < count) await new Promise((r) => setTimeout(r, 20));
  };
}

// ---- The measuring side ----

interface Options {
  slow: number;
  seconds: number;
  headersTimeoutMs: number;
}

function parseArgs(argv: readonly string[]): Options {
  const o: Options = { slow: 1000, seconds: 8, headersTimeoutMs: 3000 };
  for (let i = 0; i < argv.length; i++) {
    const v = () => Number(argv[++i]);
    if (argv[i] === "--slow") o.slow = v();
    else if (argv[i] === "--seconds") o.seconds = v();
    else if (argv[i] === "--headers-timeout-ms") o.headersTimeoutMs = v();
    else throw new Error(`unknown option ${argv[i]}`);
  }
  return o;
}

function row(name: string, r: LoadResult): string {
  return `| ${name} | ${Math.round(r.reqPerSec)} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.max)} | ${r.non2xx} | ${r.errors} |`;
}

async function main(): Promise<number> {
  const o = parseArgs(process.argv.slice(2));
  const started = performance.now();
  const server = await startServer({ HEADERS_TIMEOUT_MS: String(o.headersTimeoutMs) });
  const url = `${server.url}/api/v2/status`;
  console.log(`server pid ${server.pid} at ${server.url}, HEADERS_TIMEOUT_MS=${o.headersTimeoutMs}`);
  const baseline = socketCount(server.pid);
  console.log(`baseline: ${baseline} open sockets in the server process`);

  await load(url, 1); // warm-up
  await waitFor(() => socketCount(server.pid) === baseline, 5000);
  const quiet = await load(url, o.seconds);
  console.log(`normal client alone: ${Math.round(quiet.reqPerSec)} req/s, p99 ${fmt(quiet.p99)} ms`);

  const child = fork(fileURLToPath(import.meta.url), ["--attacker"], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const messages: FromAttacker[] = [];
  const waiters: ((m: FromAttacker) => void)[] = [];
  child.on("message", (m: FromAttacker) => {
    const w = waiters.shift();
    if (w) w(m);
    else messages.push(m);
  });
  const nextMessage = () => new Promise<FromAttacker>((resolve) => (messages.length > 0 ? resolve(messages.shift()!) : waiters.push(resolve)));
  child.send({ kind: "start", port: server.port, count: o.slow } satisfies ToAttacker);
  const ready = await nextMessage();
  const atReady = socketCount(server.pid);
  console.log(`attack: ${ready.kind === "ready" ? ready.open : "?"} slowloris connections open; the server holds ${atReady} sockets`);

  // Sockets are counted before and after the measured run, not during it: reading
  // 1,000 entries of /proc/<pid>/fd would stall this process, the normal client's.
  const attacked = await load(url, o.seconds);
  const afterRun = socketCount(server.pid);
  const minHeld = Math.min(atReady, afterRun);
  const maxHeld = Math.max(atReady, afterRun);
  console.log(`normal client under attack: ${Math.round(attacked.reqPerSec)} req/s, p99 ${fmt(attacked.p99)} ms (server sockets ${atReady} before, ${afterRun} after)`);

  const stopAt = performance.now();
  child.send({ kind: "stop" } satisfies ToAttacker);
  const report = (await nextMessage()) as AttackerReport;
  const drainedMs = performance.now() - stopAt;
  const backMs = await waitFor(() => socketCount(server.pid) === baseline, 10_000);
  const finalSockets = socketCount(server.pid);
  const stopped = await server.stop();
  const totalS = (performance.now() - started) / 1000;

  const cuts = [...report.cutAfterMs].sort((a, b) => a - b);
  const ratio = attacked.p99 / quiet.p99;
  console.log("");
  console.log("| normal client (autocannon, 10 connections, GET /api/v2/status) | req/s | p50 ms | p99 ms | max ms | non-2xx | errors |");
  console.log("|---|---:|---:|---:|---:|---:|---:|");
  console.log(row("alone", quiet));
  console.log(row(`with ${o.slow} slowloris connections`, attacked));
  console.log("");
  console.log(`p99 under attack / p99 alone: ${fmt(ratio)}x (target: within 2x)`);
  console.log(
    `slowloris connections: ${report.opened} opened (${report.maxOpen} at once at most, reconnecting when cut); ` +
      `${cuts.length} cut with a 408 after ${fmt(cuts[0] ?? NaN, 0)} / ${fmt(percentile(cuts, 50), 0)} / ${fmt(cuts[cuts.length - 1] ?? NaN, 0)} ms ` +
      `(min / median / max, from the first byte; HEADERS_TIMEOUT_MS=${o.headersTimeoutMs}); ` +
      `${report.cutWithoutResponse} closed without a 408, ${report.otherResponses.length} other responses, ${report.connectErrors} connect errors`,
  );
  console.log(`after the attack: all slow connections gone ${fmt(drainedMs / 1000, 1)} s after it stopped reconnecting (${report.stillOpen} left open)`);
  console.log(
    `server sockets: baseline ${baseline}, ${minHeld}..${maxHeld} during the attack (before and after the measured run), ${finalSockets} at the end` +
      (backMs === null ? " (NOT back to the baseline within 10 s)" : ` (back to the baseline ${fmt(backMs / 1000, 1)} s after the attacker finished)`),
  );
  console.log(`server exit on SIGTERM: code ${stopped.code} after ${fmt(stopped.ms, 0)} ms; whole run ${fmt(totalS, 1)} s`);

  const problems: string[] = [];
  if (!(ratio <= 2)) problems.push(`p99 under attack is ${fmt(ratio)}x the p99 alone`);
  if (quiet.errors + attacked.errors + quiet.non2xx + attacked.non2xx > 0) problems.push("the normal client saw errors or non-2xx responses");
  if (cuts.length === 0 || cuts[0]! < o.headersTimeoutMs || cuts[cuts.length - 1]! > o.headersTimeoutMs + 1500) {
    problems.push(`slow connections were not all cut between ${o.headersTimeoutMs} and ${o.headersTimeoutMs + 1500} ms`);
  }
  if (report.cutWithoutResponse + report.otherResponses.length + report.stillOpen > 0) problems.push("some slow connections ended otherwise than with a 408");
  if (backMs === null) problems.push("the socket count did not return to the baseline");
  if (stopped.code !== 0) problems.push(`exit code ${stopped.code}`);
  console.log(problems.length === 0 ? "OK: every check holds" : `PROBLEMS:\n- ${problems.join("\n- ")}`);
  return problems.length === 0 ? 0 : 1;
}

if (process.argv.includes("--attacker")) attacker();
else
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
