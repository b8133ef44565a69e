// `npm run test:fast`: every test file except those test/external.json lists,
// the ones that need a program from outside this repository (Chromium, nginx,
// PostgreSQL, a load generator). test/tiers.test.ts, itself in the fast tier,
// fails when that list and the test files' imports disagree, so the tiers
// cannot drift apart silently. `npm test` still runs everything, under tap.
//
// The files are the same tap tests; what runs them here is Node's own test
// runner, which reads each file's TAP output and exit status. On a 2-core
// machine tap's runner keeps one core free and runs one file at a time, and
// instruments every process a test starts; Node's runs three files at once
// with nothing added, which is what brings this tier from about four minutes
// to about one (see docs/testing.md for the figures).

import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
const external = new Set(Object.keys(JSON.parse(readFileSync(path.join(root, "test", "external.json"), "utf8"))));

/** Every `*.test.ts` under `dir`, as a path relative to the repository root. */
function testFiles(dir) {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(relative);
    return entry.name.endsWith(".test.ts") ? [relative] : [];
  });
}

// Files may be named on the command line (`npm run test:fast -- test/api`)
// to run part of the tier; whatever is named, external files stay out.
const named = process.argv.slice(2);
const files = testFiles("test")
  .filter((file) => !external.has(file))
  .filter((file) => named.length === 0 || named.some((name) => file === name || file.startsWith(name.replace(/\/?$/, "/"))))
  .sort();
if (files.length === 0) {
  console.error(`no test file in the fast tier matches ${named.join(" ")}`);
  process.exit(2);
}

// A test file's time limit is the one tap's runner gives it under `npm test`
// (package.json `tap.timeout`); Node's runner would leave tap at its own
// default of 30 s, which files that start server processes can pass on a
// loaded machine without anything being wrong. The limit only catches hangs.
const { tap: tapConfig } = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
const env = { ...process.env, TAP_TIMEOUT: String(tapConfig.timeout) };

/** Runs a command from the repository root; resolves to its exit status. */
function run(command, args) {
  return new Promise((resolve) => {
    spawn(command, args, { cwd: root, stdio: "inherit", env }).on("close", (code) => resolve(code ?? 1));
  });
}

// Two preparations, side by side. One tsc pass type-checks everything (tsx,
// which runs the tests, strips types without reading them) and writes dist/,
// declarations included, which the tests that start dist/src/main.js or pack
// the library need; it is incremental, so a second run takes seconds. The
// other is tap's build of its plugin set. The
// tests use no optional plugin, and package.json leaves those out; loading
// the default set instead costs every test file half a second of CPU.
const tap = path.join(root, "node_modules", "tap", "dist", "esm", "run.mjs");
const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc");
const prepared = await Promise.all([
  run(process.execPath, [tsc, "-p", "tsconfig.json", "--declaration", "--incremental", "--tsBuildInfoFile", "dist/.tsbuildinfo"]),
  run(process.execPath, [tap, "build"]),
]);
if (prepared.some((code) => code !== 0)) process.exit(1);

process.exit(await run(process.execPath, ["--import=tsx", "--test", "--test-concurrency=3", "--test-reporter=spec", ...files]));
