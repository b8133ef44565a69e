// The benchmark (bench/): that `npm run bench -- --quick` runs its subset
// of scenarios (one of each kind: pipelined, HTTPS, cluster workers, idle
// connections, a data endpoint on SQLite beside fastify and the data
// ceiling) under wrk and prints its tables with every server (no timing
// figure is asserted: they depend on the machine); its options; that the
// ceiling server counts pipelined requests across chunk boundaries; and that
// bench/autocannon-methods.cjs makes autocannon send UPDATE (API, worker
// threads, CLI).

import t, { type Test } from "tap";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type autocannonFn from "autocannon";
import { LABEL, SCENARIOS } from "../bench/scenarios.js";
import { countEnds } from "../bench/servers/count-ends.js";
import { withoutSettings } from "../src/config.js";
import { ROOT } from "./helpers/root.js";


const RUN = path.join(ROOT, "dist", "bench", "run.js");
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

t.test("npm run bench -- --quick: exit 0, every quick scenario against each of its servers, the tables", async (t) => {
  const resultsDir = mkdtempSync(path.join(tmpdir(), "startline-bench-"));
  t.teardown(() => rmSync(resultsDir, { recursive: true, force: true }));
  const args = ["--quick", "--results-dir", resultsDir];
  // When npm test has just built dist/, run it as is rather than rebuilding
  // dist/ under the other test files; otherwise build first, as npm run bench does.
  const started = Date.now();
  const outcome = distIsFresh() ? await runCommand(process.execPath, [RUN, ...args]) : await runCommand("npm", ["run", "--silent", "bench", "--", ...args]);
  const output = { stdout: outcome.stdout, stderr: outcome.stderr, seconds: (Date.now() - started) / 1000 };
  t.equal(outcome.code, 0, "exit code 0", output);

  const quick = SCENARIOS.filter((s) => s.quick);
  // One of each kind of scenario, so that every path of the runner is exercised.
  t.ok(quick.some((s) => (s.depth ?? 1) > 1), "one pipelined (bench/wrk.lua's depth)");
  t.ok(quick.some((s) => s.tls), "one over HTTPS");
  t.ok(quick.some((s) => (s.workers ?? 1) > 1), "one with cluster workers");
  t.ok(quick.some((s) => s.idle !== undefined), "one with idle connections");
  t.ok(quick.some((s) => s.fill !== undefined && s.servers.includes("fastify")), "one data endpoint beside fastify");

  const lines = outcome.stdout.split("\n").filter((l) => l.startsWith("| "));
  for (const s of quick) {
    for (const server of s.servers) {
      const row = lines.find((r) => r.startsWith(`| ${s.name} | ${LABEL[server]} |`));
      t.ok(row, `a row for ${s.name} / ${LABEL[server]}`, output);
      if (s.idle === undefined) t.match(row ?? "", new RegExp(`^\\| ${s.name} \\| ${LABEL[server]} \\| [0-9,]+ \\| [0-9.,]+ \\|.* \\| 0 \\| [0-9.]+ \\|$`), "req/s, CPU per request, no error", { row });
      else t.match(row ?? "", new RegExp(`^\\| ${s.name} \\| ${LABEL[server]} \\| 500 \\| [0-9.-]+ \\|.* \\| 0 \\|$`), "500 connections held, KiB each, none failed", { row });
    }
  }
  // The table of ratios: a row per timed scenario, beside the server a user would run instead and the ceiling.
  const ratios = outcome.stdout.slice(outcome.stdout.indexOf("The table of ratios")).split("\n").filter((l) => l.startsWith("| "));
  t.match(ratios[0] ?? "", "| scenario | beside | startline req/s |", "the table of ratios", output);
  for (const s of quick.filter((q) => q.idle === undefined)) {
    const row = ratios.find((r) => r.startsWith(`| ${s.name} | ${LABEL[s.servers[1]!]} |`)) ?? "";
    // Beside a ceiling: four ratios; a scenario with none (the node-* apps) leaves the ceiling's two empty.
    const ratiosOfRow = s.servers.some((kind) => kind === "ceiling" || kind === "data-ceiling") ? "( [0-9.]+× \\|){4}" : "( [0-9.]+× \\|){2}  \\|  \\|";
    t.match(row, new RegExp(`^\\| ${s.name} \\| ${LABEL[s.servers[1]!]} \\| [0-9,]+ \\| [0-9.,]+ \\|${ratiosOfRow}$`), `ratios of ${s.name}`, { row });
  }

  const files = readdirSync(resultsDir).filter((f) => f.endsWith(".json"));
  t.equal(files.length, 1, "one results file");
  const results = JSON.parse(readFileSync(path.join(resultsDir, files[0]!), "utf8")) as { runs: { scenario: string; server: string; requests: number }[]; problems: string[] };
  t.same(results.problems, []);
  for (const run of results.runs) t.ok(run.requests > 0, `${run.scenario} / ${run.server}: wrk got responses`);
});

t.test("npm run bench -- --help, a bad option, an unknown scenario", async (t) => {
  const help = await runCommand(process.execPath, [RUN, "--help"]);
  t.equal(help.code, 0);
  for (const option of ["--duration", "--quick", "--paired", "--instructions", "--alloc", "page-50", "idle-10k"]) t.match(help.stdout, option);
  const bad = await runCommand(process.execPath, [RUN, "--rounds", "zero"]);
  t.equal(bad.code, 2);
  t.match(bad.stderr, "--rounds");
  const unknown = await runCommand(process.execPath, [RUN, "--scenarios", "nope"]);
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, "unknown scenario nope");
});

t.test("npm run bench -- --paired: the servers kept up, a ratio per cycle", async (t) => {
  const resultsDir = mkdtempSync(path.join(tmpdir(), "startline-bench-"));
  t.teardown(() => rmSync(resultsDir, { recursive: true, force: true }));
  const outcome = await runCommand(process.execPath, [RUN, "--paired", "--scenarios", "status", "--cycles", "3", "--slice", "1", "--warmup", "0", "--connections", "10", "--results-dir", resultsDir]);
  t.equal(outcome.code, 0, "exit code 0", { stdout: outcome.stdout, stderr: outcome.stderr });
  const row = outcome.stdout.slice(outcome.stdout.indexOf("The table of ratios")).split("\n").find((l) => l.startsWith("| status | node:http |")) ?? "";
  t.match(row, /^\| status \| node:http \| [0-9,]+ \| [0-9.,]+ \|( [0-9.]+× \[[0-9.]+×–[0-9.]+×\] \|){4}$/, "medians and quartiles of the three cycles' ratios", { row });
  const results = JSON.parse(readFileSync(path.join(resultsDir, readdirSync(resultsDir).find((f) => f.endsWith(".json"))!), "utf8")) as { runs: { server: string; round: number }[] };
  t.same(results.runs.map((r) => r.round).sort(), [1, 1, 1, 2, 2, 2, 3, 3, 3], "each server once a cycle");
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

  t.test("programmatic API, in this process and, through setupClient, in worker threads", async (t) => {
    const require = createRequire(import.meta.url);
    const methodsModule = require(METHODS_MODULE) as { methods: string[] };
    const autocannon = require("autocannon") as typeof autocannonFn;
    t.ok(methodsModule.methods.includes("UPDATE"));

    const direct = await recordingServer(t);
    const result = await autocannon({ url: direct.url, method: "UPDATE" as "PATCH", amount: 5, connections: 1 });
    t.equal(result["2xx"], 5);
    t.same(direct.methods, Array(5).fill("UPDATE"));

    const threaded = await recordingServer(t);
    const viaWorkers = await autocannon({ url: threaded.url, method: "UPDATE" as "PATCH", amount: 4, connections: 2, workers: 2, setupClient: METHODS_MODULE } as unknown as autocannonFn.Options);
    t.equal(viaWorkers["2xx"], 4);
    t.same(threaded.methods, Array(4).fill("UPDATE"));
  });

  t.test("npm run load -- -w 2 -m UPDATE: the workers send UPDATE", async (t) => {
    const { url, methods } = await recordingServer(t);
    const outcome = await runCommand(process.execPath, [path.join(ROOT, "bench", "load.cjs"), "-m", "UPDATE", "-w", "2", "-a", "4", "-c", "2", url]);
    t.equal(outcome.code, 0, "exit code 0", { stderr: outcome.stderr });
    t.same(methods, ["UPDATE", "UPDATE", "UPDATE", "UPDATE"], "the server got UPDATE", { stderr: outcome.stderr });
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
