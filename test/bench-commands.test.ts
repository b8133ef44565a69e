// The names people type: every `npm run <name>` the docs cite is a script of
// package.json, an alias that runs a test names one that exists, and the
// harness's options and the attack runner pass a command on unchanged
// (`npm run bench:alloc -- X` is `npm run bench -- --alloc X`). Runs the
// build in dist/ (npm test and test:fast build first).

import t from "tap";
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { ROOT } from "./helpers/root.js";


const RUN = path.join(ROOT, "dist", "bench", "run.js");
const ATTACK = path.join(ROOT, "dist", "bench", "hardening", "attack.js");

function node(args: readonly string[]) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== "NODE_OPTIONS" && !/^_?TAP/.test(name)));
  return spawnSync(process.execPath, args, { cwd: ROOT, env, encoding: "utf8", timeout: 120_000 });
}

t.test("every npm run name the docs cite is a script", async (t) => {
  const all = (JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
  const scripts = Object.keys(all);
  const docs = ["README.md", "bench/README.md", ...readdirSync(path.join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
  const cited = new Set<string>();
  for (const doc of docs) {
    for (const m of readFileSync(path.join(ROOT, doc), "utf8").matchAll(/npm run (?:--silent )?([a-z][a-z0-9:-]*)/g)) cited.add(m[1]!);
  }
  t.ok(cited.size >= 10, "the docs cite names", { cited: [...cited] });
  // The ones issue 33 names, whether or not a page cites them today.
  for (const name of ["bench", "bench:paired", "bench:instructions", "bench:alloc", "bench:floods", "bench:slowloris", "fuzz", "load"]) cited.add(name);
  for (const name of cited) t.ok(scripts.includes(name), `npm run ${name} is a script`);
  for (const [name, command] of Object.entries(all)) {
    for (const file of command.match(/test\/\S+\.test\.ts/g) ?? []) t.ok(existsSync(path.join(ROOT, file)), `npm run ${name} runs ${file}, which exists`);
  }
});

t.test("an option of npm run bench that runs a file of its own gets the rest of the command line", async (t) => {
  // A short warm-up too: twenty measurements of 5,000 requests each were most of this file's CPU. And 100
  // requests, not 300: what is asked is that the number arrives, and sixteen measurements of 300 cost 1.7 s
  // of CPU more. With 30, Express's and Koa's tenth (3) is too few for their 10 requests a read, and the run fails.
  // One window a measurement rather than the median of three: each window begins with a forced full collection.
  const alloc = node([RUN, "--alloc", "--requests", "100", "--warmup", "100", "--windows", "1"]);
  t.equal(alloc.status, 0, "exit 0", { stderr: alloc.stderr });
  t.match(alloc.stdout, /1 request per read: \d+ bytes allocated per request.*\(100 requests\)/, "alloc ran, with --requests 100");
  const instructions = node([RUN, "--instructions", "--servers", "nope"]);
  t.equal(instructions.status, 1, "instructions refuses a server it does not know");
  t.match(instructions.stderr, '--servers: unknown server "nope"');
});

t.test("npm run attack lists the attacks and refuses an unknown one", async (t) => {
  const list = node([ATTACK, "--help"]);
  t.equal(list.status, 0);
  for (const name of ["stalled-readers", "status-wait", "fuzz", "llhttp"]) t.match(list.stdout, `  ${name} `);
  const unknown = node([ATTACK, "nope"]);
  t.equal(unknown.status, 2);
  t.match(unknown.stderr, 'no attack named "nope"');
  const llhttp = node([ATTACK, "llhttp", "--runs", "200"]);
  t.equal(llhttp.status, 0, "an attack runs with its own options", { stderr: llhttp.stderr });
  t.match(llhttp.stdout, "200", "llhttp-compare ran with --runs 200");
});
