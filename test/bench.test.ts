// The benchmark suite (bench/): that `npm run bench -- --quick` runs its
// subset of scenarios (one of each kind: plain, with setup and node:http
// started from startline's state, UPDATE that node:http refuses, HTTPS,
// cluster workers, idle connections, pipelined, a body) under wrk and
// prints its tables with all three servers (no timing figure
// is asserted: they depend on the machine); that
// responses are compared byte for byte or with timestamps masked; that a
// server started through the open-files wrapper is still node itself; that
// the ceiling server counts pipelined requests across chunk boundaries; and
// that bench/autocannon-methods.cjs makes autocannon send UPDATE (API,
// worker threads, CLI).

import t, { type Test } from "tap";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type autocannonFn from "autocannon";
import { compareResponses, type RawResponse } from "../bench/probe.js";
import { NODE_EXE, detectPinning, exePath, openFilesLimit, pinnedNode } from "../bench/proc.js";
import { ENGINE_SCENARIOS, QUICK_SCENARIOS, SCENARIOS, checkScenarios, seedPostFields } from "../bench/scenarios.js";
import { countEnds } from "../bench/servers/count-ends.js";
import { withoutSettings } from "../src/config.js";

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
const METHODS_MODULE = path.join(ROOT, "bench", "autocannon-methods.cjs");
const AUTOCANNON_CLI = path.join(ROOT, "node_modules", "autocannon", "autocannon.js");

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The environment without tap's own (its NODE_OPTIONS, a process-info hook,
 * would otherwise load into every server the bench starts) and without any
 * startline setting the caller's shell exports.
 */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(withoutSettings(process.env)).filter(([name]) => name !== "NODE_OPTIONS" && !/^_?TAP/.test(name)));
  return { ...env, ...extra };
}

function runCommand(command: string, args: readonly string[], env: Record<string, string> = {}): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env: cleanEnv(env), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s));
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Every .ts under dir, recursively. */
function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === "results" ? [] : tsFiles(p);
    return e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [p] : [];
  });
}

/** dist/ holds a build at least as new as every source of src/ and bench/ (npm test builds first). */
function distIsFresh(): boolean {
  for (const source of [...tsFiles(path.join(ROOT, "src")), ...tsFiles(path.join(ROOT, "bench"))]) {
    const built = path.join(ROOT, "dist", path.relative(ROOT, source)).replace(/\.ts$/, ".js");
    try {
      if (statSync(built).mtimeMs < statSync(source).mtimeMs) return false;
    } catch {
      return false;
    }
  }
  return true;
}

t.test("npm run bench -- --quick: exit 0, both tables with startline, node:http and the ceiling for every quick scenario", async (t) => {
  const resultsDir = mkdtempSync(path.join(tmpdir(), "startline-bench-"));
  t.teardown(() => rmSync(resultsDir, { recursive: true, force: true }));
  const args = ["--quick", "--results-dir", resultsDir];
  // When npm test has just built dist/, run it as is rather than rebuilding
  // dist/ under the other test files; otherwise build first, as npm run bench does.
  const started = Date.now();
  const outcome = distIsFresh()
    ? await runCommand(process.execPath, [path.join(ROOT, "dist", "bench", "run.js"), ...args])
    : await runCommand("npm", ["run", "--silent", "bench", "--", ...args]);
  const output = { stdout: outcome.stdout, stderr: outcome.stderr, seconds: (Date.now() - started) / 1000 };
  t.equal(outcome.code, 0, "exit code 0", output);

  const quick = SCENARIOS.filter((s) => QUICK_SCENARIOS.includes(s.name));
  // One of each kind of scenario, so that every path of the runner is exercised.
  t.ok(quick.some((s) => s.setup !== undefined && s.nodeHttpUnsupported === undefined), "one with setup requests and node:http started from startline's state");
  t.ok(quick.some((s) => s.nodeHttpUnsupported !== undefined), "one that node:http cannot serve");
  t.ok(quick.some((s) => s.tls), "one over HTTPS");
  t.ok(quick.some((s) => (s.workers ?? 1) > 1), "one with cluster workers");
  t.ok(quick.some((s) => s.idle !== undefined), "one with idle connections");
  t.ok(quick.some((s) => s.pipelining > 1), "one pipelined (bench/wrk.lua's depth)");
  t.ok(quick.some((s) => s.request.body !== undefined), "one with a body (bench/wrk.lua's @body=)");

  const lines = outcome.stdout.split("\n").filter((l) => l.startsWith("| "));
  const header = lines[0] ?? "";
  for (const column of ["scenario", "server", "req/s", "p50", "p99", "CPU µs/req", "RSS MiB", "vs node:http", "vs ceiling", "non-2xx / errors"]) {
    t.match(header, column, `the header has ${column}`);
  }
  t.match(lines[1] ?? "", /^\|( -+:? \|)+$/, "the separator row");
  const idleHeader = lines.find((l) => l.includes("KiB per connection")) ?? "";
  t.ok(idleHeader, "the idle-connections table", output);
  for (const column of ["idle connections", "RSS before MiB", "RSS with them MiB", "KiB per connection", "vs node:http", "vs ceiling", "failed / closed early"]) {
    t.match(idleHeader, column, `the idle table's header has ${column}`);
  }
  // A row of the latency-per-run table ends in "p50 / p99 / max"; the main table's, in "non-2xx / errors".
  const latencyRow = /\| [0-9.]+ \/ [0-9.]+ \/ [0-9.]+ \|$/;
  for (const scenario of quick) {
    for (const server of ["startline", "node:http", "ceiling"]) {
      const row = lines.find((r) => r.startsWith(`| ${scenario.name} | ${server} |`) && !latencyRow.test(r));
      t.ok(row, `a row for ${scenario.name} / ${server}`, output);
      if (row === undefined) continue;
      // Every cell present: 12 columns in the main table, 10 in the idle one.
      t.equal(row.split("|").length - 2, scenario.idle === undefined ? 12 : 10, "every cell", { row });
      if (server === "node:http" && scenario.nodeHttpUnsupported !== undefined) t.match(row, `n/a (${scenario.nodeHttpUnsupported})`);
      else if (scenario.idle === undefined) t.match(row, /^\| [a-z0-9-]+ \| [a-z:]+ \| [0-9,]+/, "a req/s figure", { row });
    }
  }
  // The whole table of ratios, last: a row per timed scenario, beside node:http and the ceiling.
  const ratioRows = outcome.stdout.slice(outcome.stdout.indexOf("The whole table of ratios")).split("\n").filter((l) => l.startsWith("| "));
  t.match(ratioRows[0] ?? "", "| scenario | beside | startline req/s |", "the table of ratios", output);
  for (const scenario of quick.filter((s) => s.idle === undefined)) {
    const row = ratioRows.find((r) => r.startsWith(`| ${scenario.name} | node:http |`)) ?? "";
    const vsNode = scenario.nodeHttpUnsupported === undefined ? "[0-9.]+× \\| [0-9.]+×" : `n/a \\(${scenario.nodeHttpUnsupported}\\) \\| n/a`;
    t.match(row, new RegExp(`^\\| ${scenario.name} \\| node:http \\| [0-9,]+ \\| [0-9.]+ \\| ${vsNode} \\| [0-9.]+× \\| [0-9.]+× \\|$`), `ratios of ${scenario.name}`, { row });
  }
  // Latency per run for the engine scenarios: p50 / p99 / max of round 1.
  for (const scenario of quick.filter((s) => ENGINE_SCENARIOS.includes(s.name))) {
    const row = lines.find((r) => r.startsWith(`| ${scenario.name} | startline |`) && latencyRow.test(r));
    t.ok(row, `latency per run: ${scenario.name}`, output);
  }

  const files = readdirSync(resultsDir).filter((f) => f.endsWith(".json"));
  t.equal(files.length, 1, "one results file");
  const results = JSON.parse(readFileSync(path.join(resultsDir, files[0]!), "utf8")) as {
    runs: {
      scenario: string;
      server: string;
      measured: { requests: number; non2xx: number; errors: number };
      processes: { pid: number; cpusAllowed: string }[];
    }[];
    idleRuns: { scenario: string; server: string; connections: number; opened: { open: number; failed: number; non2xx: number }; closed: { closedEarly: number }; kibPerConnection: number }[];
    problems: string[];
  };
  t.same(results.problems, []);
  const servers = (name: string) => [...results.runs, ...results.idleRuns].filter((r) => r.scenario === name).map((r) => r.server).sort();
  for (const scenario of quick) {
    t.same(servers(scenario.name), scenario.nodeHttpUnsupported === undefined ? ["ceiling", "node-http", "startline"] : ["ceiling", "startline"], scenario.name);
  }
  for (const run of results.runs) {
    t.ok(run.measured.requests > 0, `${run.scenario} / ${run.server}: wrk got responses`);
    t.same([run.measured.non2xx, run.measured.errors], [0, 0], `${run.scenario} / ${run.server}`);
  }
  for (const run of results.runs.filter((r) => (quick.find((s) => s.name === r.scenario)?.workers ?? 1) > 1)) {
    t.equal(run.processes.length, 3, `${run.scenario} / ${run.server}: the primary and 2 workers measured`);
  }
  for (const run of results.idleRuns) {
    t.same([run.opened.open, run.opened.failed, run.opened.non2xx, run.closed.closedEarly], [run.connections, 0, 0, 0], `${run.scenario} / ${run.server}: every idle connection held`);
    t.ok(Number.isFinite(run.kibPerConnection), "a figure per connection");
  }
});

t.test("the scenarios are consistent; the seeded posts are valid posts", async (t) => {
  t.doesNotThrow(() => checkScenarios(SCENARIOS));
  for (let n = 1; n <= 100; n++) {
    const post = seedPostFields(n);
    t.ok(typeof post.title === "string" && post.title.length >= 1 && post.title.length <= 200, `post ${n}: title`);
    t.ok(typeof post.body === "string", `post ${n}: body`);
  }
});

function response(body: string, fields: [string, string][] = []): RawResponse {
  const bytes = Buffer.from(body);
  const all: [string, string][] = [["Date", "Sun, 22 Nov 2026 20:47:36 GMT"], ["Content-Type", "application/json"], ...fields, ["Content-Length", String(bytes.length)]];
  return { raw: Buffer.alloc(0), statusLine: "HTTP/1.1 200 OK", status: 200, fields: all, body: bytes };
}

t.test("responses are compared exactly, with timestamps masked, or not at all", async (t) => {
  const a = response('{"id":"1","updatedAt":"2026-11-22T20:47:36.801Z"}', [["ETag", '"aaa"']]);
  const b = response('{"id":"1","updatedAt":"2026-11-22T20:49:01.123Z"}', [["ETag", '"bbb"']]);
  const c = response('{"id":"2","updatedAt":"2026-11-22T20:49:01.123Z"}', [["ETag", '"bbb"']]);
  t.same(compareResponses(a, a, "exact"), []);
  t.equal(compareResponses(a, b, "exact").length, 2, "exact: the ETag and the body differ");
  t.same(compareResponses(a, b, "timestamps"), [], "timestamps: only the time and the ETag differ");
  t.match(compareResponses(a, c, "timestamps").join(), /body \(timestamps masked\)/, "timestamps: any other difference counts");
  t.same(compareResponses(a, response("{}", [["ETag", '"x"']]), "none"), [], "none: only the head's shape");
  t.match(compareResponses(a, response("{}"), "none").join(), /header fields/, "none: field names still count");
});

t.test("a server started through the open-files wrapper is node itself, with the limit it needs", async (t) => {
  const pinning = detectPinning();
  const [command, args] = pinnedNode(pinning, pinning.serverCore, ["-e", "console.log('up'); setTimeout(() => {}, 5000)"], 2048);
  t.equal(command, "bash");
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] });
  t.teardown(() => {
    child.kill("SIGKILL");
  });
  await once(child.stdout!, "data");
  t.equal(exePath(child.pid!), NODE_EXE, "the pid runs node, not bash or taskset");
  t.ok(openFilesLimit(child.pid!) >= 2048, "it may open 2048 files");
});

t.test("npm run bench -- --help and a bad option", async (t) => {
  const run = path.join(ROOT, "dist", "bench", "run.js");
  const help = await runCommand(process.execPath, [run, "--help"]);
  t.equal(help.code, 0);
  t.match(help.stdout, "--duration");
  t.match(help.stdout, "--quick");
  const bad = await runCommand(process.execPath, [run, "--rounds", "zero"]);
  t.equal(bad.code, 2);
  t.match(bad.stderr, "--rounds");
  const unknown = await runCommand(process.execPath, [run, "--scenarios", "nope"]);
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, "unknown scenario nope");
  t.match(help.stdout, "page-50", "the data endpoints are scenarios of the same command");
});

t.test("npm run bench -- --quick --scenarios post-one: the data endpoints' table, startline beside fastify and the data ceiling", async (t) => {
  const resultsDir = mkdtempSync(path.join(tmpdir(), "startline-bench-"));
  t.teardown(() => rmSync(resultsDir, { recursive: true, force: true }));
  const outcome = await runCommand(process.execPath, [path.join(ROOT, "dist", "bench", "run.js"), "--quick", "--scenarios", "post-one", "--results-dir", resultsDir]);
  t.equal(outcome.code, 0, "exit code 0", { stdout: outcome.stdout, stderr: outcome.stderr });
  const header = outcome.stdout.split("\n").find((l) => l.startsWith("| endpoint |")) ?? "";
  for (const column of ["startline req/s", "fastify req/s", "ceiling req/s", "fastify CPU ÷ startline CPU", "CPU vs ceiling"]) t.match(header, column, `the data table has ${column}`);
  const row = outcome.stdout.split("\n").find((l) => l.startsWith("| GET /api/v1/post/:id |")) ?? "";
  t.match(row, /^\| GET \/api\/v1\/post\/:id \| [0-9,]+ \| [0-9,]+ \| [0-9,]+ \| [0-9.]+x \|/, "a row with the three servers' req/s and the ratio", { row });
  t.notMatch(outcome.stdout, /\| status \|/, "no engine scenario was asked for");
  const ratio = outcome.stdout.split("\n").find((l) => l.startsWith("| post-one | fastify |")) ?? "";
  t.match(ratio, /^\| post-one \| fastify \| [0-9,]+ \| [0-9.]+ \| [0-9.]+× \| [0-9.]+× \| [0-9.]+× \| [0-9.]+× \|$/, "the table of ratios has the data endpoint beside fastify and the data ceiling", { ratio });
});

t.test("the ceiling counts request ends split anywhere across chunks", async (t) => {
  const one = "GET /api/v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n";
  const stream = Buffer.from(one.repeat(3) + "GET / HTTP/1.1\r\n\r\n\r\n\r\n", "latin1"); // 3 + 2 ends (an empty line after an end is its own)
  const expected = 5;
  // Every way to cut the stream in two and three pieces.
  for (let a = 0; a <= stream.length; a++) {
    for (let b = a; b <= stream.length; b += a % 7 === 0 ? 1 : 13) {
      let state = 0;
      let total = 0;
      for (const piece of [stream.subarray(0, a), stream.subarray(a, b), stream.subarray(b)]) {
        const [n, next] = countEnds(piece, state);
        total += n;
        state = next;
      }
      if (total !== expected) {
        t.fail(`cut at ${a} and ${b}: counted ${total}`);
        return;
      }
    }
  }
  // Byte by byte.
  let state = 0;
  let total = 0;
  for (const byte of stream) {
    const [n, next] = countEnds(Buffer.from([byte]), state);
    total += n;
    state = next;
  }
  t.equal(total, expected);
  t.same(countEnds(Buffer.from("\r\n\r\r\n\r\n"), 0), [1, 0], "a CR that breaks a match can start the next");
});

/** A server that answers any request 200 and records each request's method. */
async function recordingServer(t: Test): Promise<{ url: string; methods: string[] }> {
  const methods: string[] = [];
  const server = net.createServer((socket) => {
    let buffered = "";
    socket.on("data", (chunk: Buffer) => {
      buffered += chunk.toString("latin1");
      let end: number;
      while ((end = buffered.indexOf("\r\n\r\n")) >= 0) {
        methods.push(buffered.slice(0, buffered.indexOf(" ")));
        buffered = buffered.slice(end + 4);
        socket.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
      }
    });
    socket.on("error", () => socket.destroy());
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as net.AddressInfo;
  return { url: `http://127.0.0.1:${port}/api/v1/articles/1`, methods };
}

t.test("autocannon-methods: autocannon sends UPDATE", async (t) => {
  t.test("without the module, autocannon refuses UPDATE", async (t) => {
    const { url } = await recordingServer(t);
    const script = `require("autocannon")({ url: ${JSON.stringify(url)}, method: "UPDATE", amount: 2, connections: 1 }).then(() => console.log("accepted"), (e) => console.log(e.message))`;
    const outcome = await runCommand(process.execPath, ["-e", script]);
    t.match(outcome.stdout, "UPDATE HTTP method is not supported");
  });

  t.test("programmatic API, in this process and in worker threads", async (t) => {
    const require = createRequire(import.meta.url);
    const methodsModule = require(METHODS_MODULE) as { methods: string[]; workersPatched: boolean };
    const autocannon = require("autocannon") as typeof autocannonFn;
    t.ok(methodsModule.methods.includes("UPDATE"));
    t.ok(methodsModule.workersPatched, "loaded before autocannon: worker threads are covered");

    const direct = await recordingServer(t);
    const result = await autocannon({ url: direct.url, method: "UPDATE" as "PATCH", amount: 5, connections: 1 });
    t.equal(result["2xx"], 5);
    t.same(direct.methods, Array(5).fill("UPDATE"));

    const threaded = await recordingServer(t);
    const viaWorkers = await autocannon({ url: threaded.url, method: "UPDATE" as "PATCH", amount: 4, connections: 2, workers: 2 } as autocannonFn.Options);
    t.equal(viaWorkers["2xx"], 4);
    t.same(threaded.methods, Array(4).fill("UPDATE"));
  });

  t.test("autocannon loaded first: workers get the methods through setupClient", async (t) => {
    const { url, methods } = await recordingServer(t);
    const script = [
      `const autocannon = require("autocannon");`,
      `const m = require(${JSON.stringify(METHODS_MODULE)});`,
      `autocannon({ url: ${JSON.stringify(url)}, method: "UPDATE", amount: 3, connections: 1, workers: 1, setupClient: ${JSON.stringify(METHODS_MODULE)} })`,
      `  .then((r) => console.log("2xx=" + r["2xx"] + " patched=" + m.workersPatched), (e) => console.log("error: " + e.message));`,
    ].join("\n");
    const outcome = await runCommand(process.execPath, ["-e", script]);
    t.match(outcome.stdout, "2xx=3 patched=false", "3 responses, no Worker patch", { stderr: outcome.stderr });
    t.same(methods, ["UPDATE", "UPDATE", "UPDATE"]);
  });

  t.test("CLI: node --require bench/autocannon-methods.cjs autocannon -m UPDATE", async (t) => {
    const { url, methods } = await recordingServer(t);
    const outcome = await runCommand(process.execPath, ["--require", "./bench/autocannon-methods.cjs", AUTOCANNON_CLI, "-m", "UPDATE", "-a", "3", "-c", "1", url]);
    t.equal(outcome.code, 0, "exit code 0", { stderr: outcome.stderr });
    t.same(methods, ["UPDATE", "UPDATE", "UPDATE"], "the server got UPDATE", { stderr: outcome.stderr });
  });

  t.test("CLI with workers and AUTOCANNON_EXTRA_METHODS=UPDATE,FOO", async (t) => {
    const { url, methods } = await recordingServer(t);
    const outcome = await runCommand(
      process.execPath,
      ["--require", "./bench/autocannon-methods.cjs", AUTOCANNON_CLI, "-m", "FOO", "-w", "2", "-a", "4", "-c", "2", url],
      { AUTOCANNON_EXTRA_METHODS: "UPDATE,FOO" },
    );
    t.equal(outcome.code, 0, "exit code 0", { stderr: outcome.stderr });
    t.same(methods, ["FOO", "FOO", "FOO", "FOO"], "the server got FOO", { stderr: outcome.stderr });
  });
});
