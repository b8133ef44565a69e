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
// - The files are tap tests, run compiled (`node dist/test/x.test.js`), a
//   few processes at a time. Files share processes, up to 40 s of their last
//   runs to a process, or a seventh of the files' last times when a loaded
//   last run made that more (test/batch.mjs runs them one after another): starting
//   Node and tap costs about 0.3 s of CPU, more than most files' own work, and
//   each process loads and warms up the modules its files share again. A
//   long file, a file that measures its process's memory (it mentions
//   memoryUsage) and one that runs its tests side by side (t.jobs) get a
//   process of their own; a file never timed counts as 3 s. Longest first,
//   by the times the last run took (dist/.test-times.json), so that a long
//   file does not start last and run alone.
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

// Files share processes in groups of at most SHARED_MS of last times (measured with others running
// beside them). The fast tier's last times have added up to some 280 s, run three processes at a time:
// groups of 40 s, longest first, still end the three together, and start 10 processes where groups of
// 20 s started 17 (40 small test files, test/api/ to test/hardening/, cost 4.5 to 5.9 s more CPU in 4
// processes than in 2: each process loads Node, tap and the modules its files share again, and compiles
// and optimizes the same hot code again). Much longer groups would leave one running alone at the end. A last run beside heavier
// jobs stretches every time alike (the tier's have come to 450 to 640 s): the bound is a seventh of their
// sum when that is more, so that such a run does not split the next into 15 to 32 processes. A file never
// timed (a first run) is counted as UNTIMED_MS, so a first run shares processes too. Two kinds would not
// be themselves in company and always run alone: one that measures its process's memory (it would count
// the others' garbage), and one that runs its tests side by side (t.jobs on tap's root, which the files
// after it would inherit).
const UNTIMED_MS = 3_000;
const estimate = (file) => lastTimes[file] ?? UNTIMED_MS;
const SHARED_MS = Math.max(40_000, files.reduce((sum, file) => sum + estimate(file), 0) / 7);
const solitary = (file) => /memoryUsage|\bt\.jobs\s*=/.test(readFileSync(path.join(root, file), "utf8"));
const shares = (file) => estimate(file) < SHARED_MS && !solitary(file);
/** The processes to run, each a list of files, longest first. */
const jobs = [];
for (const file of files.filter((f) => !shares(f))) jobs.push([file]);
let group = [];
let groupMs = 0;
for (const file of files.filter(shares).sort((a, b) => estimate(b) - estimate(a) || a.localeCompare(b))) {
  if (group.length > 0 && groupMs + estimate(file) > SHARED_MS) {
    jobs.push(group);
    group = [];
    groupMs = 0;
  }
  group.push(file);
  groupMs += estimate(file);
}
if (group.length > 0) jobs.push(group);
const jobMs = (job) => job.reduce((sum, file) => sum + estimate(file), 0);
const queue = [...jobs].sort((a, b) => jobMs(b) - jobMs(a) || a[0].localeCompare(b[0]));

const compiled = (file) => path.join(root, "dist", file.replace(/\.ts$/, ".js"));

/** Files, compiled, in one process: its exit status, its whole output, its time. */
function runProcess(job) {
  const started = Date.now();
  // Through test/batch.mjs, which reports each file's time and CPU, unless the file must be alone in its process as it is.
  const args = job.length === 1 && solitary(job[0]) ? [compiled(job[0])] : [path.join(root, "test", "batch.mjs"), ...job.map(compiled)];
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
      if (stopped) text += `\n# stopped by test/run.mjs: still running ${(LIMIT_MS + 30_000) / 1000} s after it started\n`;
      else if (signal !== null) text += `\n# ended by ${signal}\n`;
      resolve({ ok: code === 0 && !stopped, text, ms: Date.now() - started });
    });
  });
}

/**
 * A shared process's output cut at test/batch.mjs's end-of-file lines: per file that got to its end,
 * its share of the output, its time, and whether it passed: no `not ok` at tap's top level, and its
 * closing test (`<file> ended`) passed, which it cannot once tap's root has ended (a time-out).
 */
function perFile(job, text) {
  const ended = new Map();
  let from = 0;
  for (const m of text.matchAll(/^# startline-file (\S+) (\d+) (\d+|-)\n/gm)) {
    const share = text.slice(from, m.index + m[0].length);
    const closed = share.split("\n").some((line) => /^ok \d+ - (\S+) ended\b/.exec(line)?.[1] === m[1]);
    ended.set(m[1], { text: share, ms: Number(m[2]), cpuMs: m[3] === "-" ? undefined : Number(m[3]), passed: closed && !/^not ok /m.test(share) });
    from = m.index + m[0].length;
  }
  return job.map((file) => ({ file, share: ended.get(compiled(file)) }));
}

/**
 * A job's results, one per file. A file that failed, or did not get to its end, in a shared process is
 * run again alone; so is every file of a shared process that failed with no file to blame (an error
 * after the last file ended, say).
 */
async function runJob(job) {
  const run = await runProcess(job);
  if (job.length === 1) return [{ file: job[0], ok: run.ok, text: run.text, ms: run.ms, cpuMs: perFile(job, run.text)[0].share?.cpuMs }];
  const found = perFile(job, run.text);
  const blameless = !run.ok && found.every(({ share }) => share?.passed === true);
  const results = [];
  for (const { file, share } of found) {
    if (share?.passed === true && !blameless) {
      results.push({ file, ok: true, text: share.text, ms: share.ms, cpuMs: share.cpuMs });
      continue;
    }
    const alone = await runProcess([file]);
    const how =
      share === undefined
        ? `did not get to its end in a process shared with others`
        : blameless
          ? `was in a shared process that failed with no file to blame`
          : `failed in a process shared with others`;
    const before = job.slice(0, job.indexOf(file));
    const note = alone.ok
      ? `# ${file} ${how} (before it: ${before.join(", ") || "none"}), and passes alone: something in that process made it fail. The shared process's whole output:\n${run.text}`
      : `# ${file} ${how}, and fails alone too; its whole output alone:\n${alone.text}`;
    results.push({ file, ok: false, text: note, ms: alone.ms });
  }
  return results;
}

const concurrency = Math.max(1, Number(process.env.TEST_CONCURRENCY ?? Math.min(3, availableParallelism() + 1)));
const results = [];
const started = Date.now();
const width = String(files.length).length;
async function worker() {
  for (let job = queue.shift(); job !== undefined; job = queue.shift()) {
    for (const result of await runJob(job)) {
      results.push(result);
      const n = String(results.length).padStart(width);
      const cpu = result.cpuMs === undefined ? "" : `${(result.cpuMs / 1000).toFixed(1)} s CPU`;
      console.log(`${result.ok ? "ok    " : "FAILED"} ${n}/${files.length} ${(result.ms / 1000).toFixed(1).padStart(6)} s ${cpu.padStart(10)}  ${result.file}`);
      if (verbose || !result.ok) process.stdout.write(`${result.text.replace(/^/gm, "    ")}\n`);
    }
  }
}
await Promise.all(Array.from({ length: concurrency }, worker));

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
console.log(`${((Date.now() - started) / 1000).toFixed(1)} s for ${files.length} files in ${jobs.length} processes, ${concurrency} at a time${cpuText}`);
console.log(`${results.length - failed.length} passed, ${failed.length} failed`);
process.exit(failed.length === 0 ? 0 : 1);
