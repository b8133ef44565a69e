// Several compiled test files run one after another in one process, for
// test/run.mjs: Node and tap take about 0.3 s of CPU to start, which for most
// files is more than the file's own work. Each file is imported once the one
// before it has ended: its top level runs, its tests (queued on tap's one
// root) run, and a last test named `<file> ended` marks the end of its share
// of the output. After it, a line `# startline-file <file> <ms> <cpu-ms>`
// gives the runner the file's time and its CPU time, the processes it started
// and has seen end included (test/cpu-time.mjs; "-" where that is not known:
// a process that a top-level teardown stops ends after the group's last file,
// and counts only in the run's total). A file that fails to load is a failure
// of its own, and the next file still runs.
//
// What a file gives the root to undo (`t.teardown` at its top level: a
// temporary directory, a server it started there) is undone here, in the
// order given, once the last file has ended. Left to tap, the first such
// teardown would make the root end as soon as it sat idle for two timer
// turns, which it does while the next file's modules load on a busy machine,
// and every later file would fail.
//
// The files are named on the command line, or, with none named there, read
// from standard input, a path a line, until it ends: test/run.mjs gives each
// of its lanes one such process and sends it a file whenever the one before
// has ended, so the lanes take the next file as they come free and end
// together, and the whole tier starts three processes, not one per group.
//
// Usage (from the repository root): node test/batch.mjs dist/test/a.test.js dist/test/b.test.js ...
// or: printf 'dist/test/a.test.js\ndist/test/b.test.js\n' | node test/batch.mjs

import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import path from "node:path";
import t from "tap";
import { cpuMs } from "./cpu-time.mjs";

const teardowns = [];
t.teardown = (fn) => void teardowns.push(fn);

const named = process.argv.slice(2);
const files = named.length > 0 ? named : createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const file of files) {
  const started = Date.now();
  const cpu = cpuMs();
  try {
    await import(pathToFileURL(path.resolve(file)).href);
  } catch (error) {
    t.fail(`${file} could not be loaded: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  }
  await t.test(`${file} ended`, (t) => t.end());
  const now = cpuMs();
  const spent = now.children === undefined ? "-" : Math.round(now.total - cpu.total);
  // Written straight out: a comment given to tap's root waits there until the root's next test
  // begins, and the runner sends the next file only once it has read this line. Tap may still hold
  // some of the file's output (the pipe full), so this line can come before the closing test's, and
  // the runner waits for both.
  process.stdout.write(`# startline-file ${file} ${Date.now() - started} ${spent}\n`);
}
for (const fn of teardowns) {
  try {
    await fn();
  } catch (error) {
    t.fail(`a file's teardown failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  }
}
