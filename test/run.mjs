// The test runner of both tiers: `npm run test:fast` (node test/run.mjs) runs
// every test file except those test/external.json lists, the ones that need
// a program from outside this repository (Chromium, nginx, HAProxy,
// PostgreSQL, a load generator); `npm test` (node test/run.mjs --all) runs
// them all. test/tiers.test.ts, itself in the fast tier, fails when that list
// and the test files' imports disagree, so the tiers cannot drift apart.
//
// Files may be named (`npm run test:fast -- test/api test/main.test.ts`) to
// run part of a tier. `--verbose` prints every file's whole output.
//
// What it does, and why it is cheap:
//
// - One tsc build type-checks everything and writes dist/, the tests
//   included (incremental: seconds after a small change). The tests then
//   run as that compiled JavaScript, with no loader:
//   a file started through tsx costs about half a second of CPU more, which
//   over a hundred files was most of this tier's time.
// - The files are tap tests, run compiled (`node dist/test/x.test.js`), in
//   three lanes. Files share processes: starting Node and tap costs about
//   0.3 s of CPU, more than most files' own work, and each process loads and
//   warms up the modules its files share again. Each lane runs one process
//   of test/batch.mjs and sends it the next file from one queue as soon as
//   the one before has ended, longest first by the times the last run took
//   (dist/.test-times.json; a file never timed counts as 3 s), so that a long
//   file does not start last and the lanes end together. A file that
//   measures its process's memory (it mentions memoryUsage) and one that runs
//   its tests side by side (t.jobs) get a process of their own at their turn.
// - A file that fails in a shared process is run again alone, and its line
//   says which way it went there: a failure that only comes after other files
//   is a fault of isolation, and is reported as one, never passed over.
// - The output is a line per file (its time, and its CPU time with the
//   processes it started, test/cpu-time.mjs, for all but the files that run
//   alone for their memory or t.jobs)
//   and the closing count, with the CPU time of the whole run, the build
//   included; a failing file's whole output (its TAP, and whatever it
//   printed) follows, so a failure needs no second run to be read. On a
//   shared machine wall times swing with the load; CPU times much less.
//
// A file's time limit is tap's own (package.json `tap.timeout`, given to each
// file as TAP_TIMEOUT); past it and a grace, the runner stops the file and
// reports it. The limit only catches hangs.

import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { cpuMs } from "./cpu-time.mjs";

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
const external = new Set(Object.keys(JSON.parse(readFileSync(path.join(root, "test", "external.json"), "utf8"))));

const args = process.argv.slice(2);
const all = args.includes("--all");
const verbose = args.includes("--verbose");
const named = args.filter((a) => !a.startsWith("--"));

/** Every `*.test.ts` under `dir`, as a path relative to the repository root. */
function testFiles(dir) {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(relative);
    return entry.name.endsWith(".test.ts") ? [relative] : [];
  });
}

const files = testFiles("test")
  .filter((file) => all || !external.has(file))
  .filter((file) => named.length === 0 || named.some((name) => file === name || file.startsWith(name.replace(/\/?$/, "/"))))
  .sort();
if (files.length === 0) {
  console.error(`no test file ${all ? "" : "in the fast tier "}matches ${named.join(" ")}`);
  process.exit(2);
}

const { tap: tapConfig } = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
const LIMIT_MS = tapConfig.timeout * 1000;
const env = { ...process.env, TAP_TIMEOUT: String(tapConfig.timeout) };

/** Runs a command from the repository root with its output shown; resolves to its exit status. */
function run(command, commandArgs) {
  return new Promise((resolve) => {
    spawn(command, commandArgs, { cwd: root, stdio: "inherit", env }).on("close", (code) => resolve(code ?? 1));
  });
}

// Two preparations, side by side: the build (tsconfig.test.json, which
// references tsconfig.build.json: the server's own build, the one `npm start`
// and `npm pack` run, with the same record, then the tests'), and tap's build
// of the plugin set package.json names (the tests use no optional plugin; the
// default set costs every file half a second of CPU). Since the server's build
// is the very one `npm start` makes, the tests that start or pack a copy of
// the repository find it up to date and compile nothing again.
// tap's build rewrites a module inside node_modules, so it runs only when the plugin set
// differs from the one it last built (a stamp beside that module): two runs in checkouts that share
// node_modules would otherwise rebuild it under each other.
const tap = path.join(root, "node_modules", "tap", "dist", "esm", "run.mjs");
const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc");
const stamp = path.join(root, "node_modules", "@tapjs", "test", ".startline-plugins.json");
const plugins = JSON.stringify(tapConfig.plugin ?? []);
const tapBuilt = existsSync(stamp) && readFileSync(stamp, "utf8") === plugins;
const tapBuild = tapBuilt
  ? Promise.resolve(0)
  : run(process.execPath, [tap, "build"]).then((code) => {
      if (code === 0) writeFileSync(stamp, plugins);
      return code;
    });
const prepared = await Promise.all([run(process.execPath, [tsc, "-b", "tsconfig.test.json"]), tapBuild]);
if (prepared.some((code) => code !== 0)) process.exit(1);

const TIMES = path.join(root, "dist", ".test-times.json");
const lastTimes = existsSync(TIMES) ? JSON.parse(readFileSync(TIMES, "utf8")) : {};

// Each of the three lanes runs one process of test/batch.mjs and gives it one file at a time, the next
// as soon as the one before has ended, from one queue ordered longest first by last times (measured
// with others running beside them; a file never timed counts as UNTIMED_MS). So the whole tier starts a
// process a lane, not one per group of files: each process loads Node, tap and the modules its files
// share, and compiles and optimizes the same hot code, again (40 small test files, test/api/ to
// test/hardening/, cost 4.5 to 5.9 s more CPU in 4 processes than in 2). And no lane sits idle at the
// end while another still has a group to run: groups made in advance from last times ended up to a
// whole group apart, since those times swing with the load. Two kinds of file would not be themselves
// in company and get a process of their own at their turn in the queue, while their lane's shared
// process waits: one that measures its process's memory (it would count the others' garbage), and one
// that runs its tests side by side (t.jobs on tap's root, which the files after it would inherit).
const UNTIMED_MS = 3_000;
const estimate = (file) => lastTimes[file] ?? UNTIMED_MS;
const solitary = (file) => /memoryUsage|\bt\.jobs\s*=/.test(readFileSync(path.join(root, file), "utf8"));
const queue = [...files].sort((a, b) => estimate(b) - estimate(a) || a.localeCompare(b));
let processes = 0;

const compiled = (file) => path.join(root, "dist", file.replace(/\.ts$/, ".js"));
const STOPPED_TEXT = `\n# stopped by test/run.mjs: still running ${(LIMIT_MS + 30_000) / 1000} s after it started\n`;

/** One file, compiled, in a process of its own: its exit status, its whole output, its time. */
function runAlone(file) {
  processes++;
  const started = Date.now();
  // Through test/batch.mjs, which reports the file's time and CPU, unless the file must be alone in its process as it is.
  const args = solitary(file) ? [compiled(file)] : [path.join(root, "test", "batch.mjs"), compiled(file)];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--enable-source-maps", ...args], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
    const output = [];
    child.stdout.on("data", (d) => output.push(d));
    child.stderr.on("data", (d) => output.push(d));
    let stopped = false;
    const limit = setTimeout(() => {
      stopped = true;
      child.kill("SIGKILL");
    }, LIMIT_MS + 30_000);
    child.on("close", (code, signal) => {
      clearTimeout(limit);
      let text = Buffer.concat(output).toString("utf8");
      if (stopped) text += STOPPED_TEXT;
      else if (signal !== null) text += `\n# ended by ${signal}\n`;
      const marker = /^# startline-file \S+ \d+ (\d+|-)$/m.exec(text);
      resolve({ ok: code === 0 && !stopped, text, ms: Date.now() - started, cpuMs: marker === null || marker[1] === "-" ? undefined : Number(marker[1]) });
    });
  });
}

/**
 * A lane's shared process of test/batch.mjs, which runs the files it is sent on its standard input one
 * at a time. `run(file)` resolves once the file's closing test (`<file> ended`) and its end-of-file line
 * are both in, with the file's share of the output (what the process printed since the end of the file
 * before), its time and CPU, and whether it passed: no `not ok` at tap's top level, and its closing test
 * passed, which it cannot once tap's root has ended (a time-out). It resolves with undefined if the process ended first, or
 * was stopped for a file past its time limit. `finish()` ends the input (the process then undoes the
 * files' top-level teardowns and exits) and resolves with its exit status and what it printed after
 * the last file's end.
 */
function sharedProcess() {
  processes++;
  const child = spawn(process.execPath, ["--enable-source-maps", path.join(root, "test", "batch.mjs")], { cwd: root, env, stdio: ["pipe", "pipe", "pipe"] });
  child.stdin.on("error", () => {}); // a process that has died is seen by "close"
  let text = "";
  let from = 0; // where the running file's share starts
  let stdout = ""; // read for the end-of-file lines, which only standard output carries
  let waiting; // the running file: { file, resolve }
  let stopped = false;
  let limit;
  child.stdout.on("data", (d) => {
    text += d;
    stdout += d;
    for (let nl = stdout.indexOf("\n"); nl !== -1; nl = stdout.indexOf("\n")) {
      const line = stdout.slice(0, nl);
      stdout = stdout.slice(nl + 1);
      if (waiting === undefined) continue;
      // The file has ended once both its closing test's line and its end-of-file line are in, in either
      // order (test/batch.mjs writes the second straight out, and it may overtake what tap still holds).
      const name = compiled(waiting.file);
      const closing = /^(not )?ok \d+ - (\S+) ended\b/.exec(line);
      if (closing !== null && closing[2] === name) waiting.closed = closing[1] === undefined;
      const m = /^# startline-file (\S+) (\d+) (\d+|-)$/.exec(line);
      if (m !== null && m[1] === name) waiting.marker = m;
      if (waiting.closed === undefined || waiting.marker === undefined) continue;
      const share = text.slice(from);
      from = text.length;
      const { closed, marker, resolve } = waiting;
      waiting = undefined;
      clearTimeout(limit);
      resolve({ text: share, ms: Number(marker[2]), cpuMs: marker[3] === "-" ? undefined : Number(marker[3]), passed: closed && !/^not ok /m.test(share) });
    }
  });
  child.stderr.on("data", (d) => void (text += d));
  const stopAfter = () => {
    clearTimeout(limit);
    limit = setTimeout(() => {
      stopped = true;
      child.kill("SIGKILL");
    }, LIMIT_MS + 30_000);
  };
  const closed = new Promise((resolve) => {
    child.on("close", (code, signal) => {
      clearTimeout(limit);
      if (stopped) text += STOPPED_TEXT;
      else if (signal !== null) text += `\n# ended by ${signal}\n`;
      waiting?.resolve(undefined);
      waiting = undefined;
      resolve(code === 0 && !stopped);
    });
  });
  let alive = true;
  void closed.then(() => (alive = false));
  return {
    alive: () => alive,
    /** Everything the process has printed so far. */
    output: () => text,
    run(file) {
      return new Promise((resolve) => {
        if (!alive) return resolve(undefined);
        waiting = { file, resolve };
        stopAfter();
        child.stdin.write(`${compiled(file)}\n`);
      });
    },
    async finish() {
      if (alive) stopAfter();
      child.stdin.end();
      const ok = await closed;
      return { ok, after: text.slice(from) };
    },
  };
}

const concurrency = Math.max(1, Number(process.env.TEST_CONCURRENCY ?? Math.min(3, availableParallelism() + 1)));
const results = [];
const started = Date.now();
const width = String(files.length).length;

function report(result) {
  results.push(result);
  const n = String(results.length).padStart(width);
  const cpu = result.cpuMs === undefined ? "" : `${(result.cpuMs / 1000).toFixed(1)} s CPU`;
  console.log(`${result.ok ? "ok    " : "FAILED"} ${n}/${files.length} ${(result.ms / 1000).toFixed(1).padStart(6)} s ${cpu.padStart(10)}  ${result.file}`);
  if (verbose || !result.ok) process.stdout.write(`${result.text.replace(/^/gm, "    ")}\n`);
}

/**
 * A file that failed, or did not get to its end, in a shared process is run again alone, and reported
 * either way: failing alone too, or passing alone, a fault of isolation (what ran before it in that
 * process made it fail).
 */
async function again(file, how, before, sharedText) {
  const alone = await runAlone(file);
  const note = alone.ok
    ? `# ${file} ${how} (before it: ${before.join(", ") || "none"}), and passes alone: something in that process made it fail. The shared process's whole output:\n${sharedText}`
    : `# ${file} ${how}, and fails alone too; its whole output alone:\n${alone.text}`;
  report({ file, ok: false, text: note, ms: alone.ms });
}

/** A lane: takes the next file from the queue until it is empty. */
async function lane() {
  let shared;
  let given = []; // the files the shared process has been given, in order
  let passed = []; // those of them that passed there
  const drop = () => {
    const gone = { process: shared, passed, clean: passed.length === given.length };
    shared = undefined;
    given = [];
    passed = [];
    return gone;
  };
  /** Ends the shared process; if it failed with no file to blame (an error after its last file ended, say), each file that passed in it is run again alone. */
  const finish = async () => {
    if (shared === undefined) return;
    const { process: done, passed: files, clean } = drop();
    const { ok, after } = await done.finish();
    // A process with a file that failed in it has that failure to show for its status.
    if (ok || !clean) return;
    let blamed = 0;
    for (const file of files) {
      const alone = await runAlone(file);
      if (alone.ok) continue;
      blamed++;
      // Its line said ok; this one, which says why not, takes that result's place.
      results.splice(results.findIndex((r) => r.file === file), 1);
      report({ file, ok: false, text: `# ${file} passed in a shared process that then failed, and fails alone; what the shared process printed after its last file:\n${after}\n# ${file}'s whole output alone:\n${alone.text}`, ms: alone.ms });
    }
    if (blamed === 0) {
      const names = files.join(", ") || "no file";
      report({ file: `(the shared process of ${names})`, ok: false, text: `# a shared process failed after its files (${names}) had passed, and each passes alone; its whole output:\n${done.output()}`, ms: 0 });
    }
  };
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    if (solitary(file)) {
      const alone = await runAlone(file);
      report({ file, ok: alone.ok, text: alone.text, ms: alone.ms, cpuMs: alone.cpuMs });
      continue;
    }
    if (shared !== undefined && !shared.alive()) await finish();
    shared ??= sharedProcess();
    const before = [...given];
    given.push(file);
    const share = await shared.run(file);
    if (share?.passed === true) {
      passed.push(file);
      report({ file, ok: true, text: share.text, ms: share.ms, cpuMs: share.cpuMs });
      continue;
    }
    const sharedText = shared.output();
    // A process that ended with the file (or was stopped for it) is blamed on that file; the next file gets a new one.
    if (share === undefined) await drop().process.finish();
    await again(file, share === undefined ? `did not get to its end in a process shared with others` : `failed in a process shared with others`, before, sharedText);
  }
  await finish();
}
await Promise.all(Array.from({ length: concurrency }, lane));

const times = { ...lastTimes };
for (const r of results) times[r.file] = r.ms;
writeFileSync(TIMES, JSON.stringify(times, null, 1));

const failed = results.filter((r) => !r.ok);
if (failed.length > 0) {
  console.log(`\nfailed (their whole output is above, under each):`);
  for (const r of failed) console.log(`  ${r.file}`);
}
const slowest = [...results].sort((a, b) => b.ms - a.ms).slice(0, 5);
console.log(`\nslowest: ${slowest.map((r) => `${r.file} ${(r.ms / 1000).toFixed(1)} s`).join(", ")}`);
const cpu = cpuMs();
const cpuText = cpu.children === undefined ? "" : `; ${(cpu.total / 1000).toFixed(1)} s of CPU (user + system: the build, the tests and every process they started)`;
console.log(`${((Date.now() - started) / 1000).toFixed(1)} s for ${files.length} files in ${processes} processes, ${concurrency} at a time${cpuText}`);
console.log(`${results.length - failed.length} passed, ${failed.length} failed`);
process.exit(failed.length === 0 ? 0 : 1);
