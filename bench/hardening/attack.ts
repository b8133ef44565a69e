// `npm run attack -- <name> [options]`: the attacks that stay scripts, one
// runner. They are not benchmarks: each attacks the parser or the real
// server process on 127.0.0.1 and prints what it cost, against the bound
// docs/reliability.md gives. The other attacks are tests with their bounds
// (test/hardening/: floods, slowloris, worker-deaths, slow-readers). Each
// script runs as its own process, with the options after its name, so
// `node dist/bench/hardening/<script>.js` works as well.

import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ATTACKS: ReadonlyArray<readonly [name: string, script: string, what: string]> = [
  ["stalled-readers", "stalled-readers", "clients that never read a large answer (echo, list, list-yaml; drip), six full lists read: RSS, a status request's wait"],
  ["status-wait", "status-wait", "clients cheap to run that keep the server busy (1-byte chunks, slow heads, 2,000 delays, large merge patches): a status request's wait"],
  ["fuzz", "fuzz", "a million fast-check cases over the parser, on worker threads, watched for hangs"],
  ["llhttp", "llhttp-compare", "the fuzzer's inputs read by startline and by llhttp, disagreements by kind"],
];

const usage = `Usage: npm run attack -- <name> [the attack's own options]\n\n${ATTACKS.map(([name, , what]) => `  ${name.padEnd(17)}${what}`).join("\n")}`;
const [name, ...rest] = process.argv.slice(2);
const attack = ATTACKS.find(([n]) => n === name);
if (name === undefined || name === "--help" || name === "-h") {
  console.log(usage);
  process.exitCode = name === undefined ? 2 : 0;
} else if (attack === undefined) {
  console.error(`attack: no attack named ${JSON.stringify(name)}\n\n${usage}`);
  process.exitCode = 2;
} else {
  const child = spawnSync(process.execPath, [path.join(path.dirname(fileURLToPath(import.meta.url)), `${attack[1]}.js`), ...rest], { stdio: "inherit" });
  if (child.error !== undefined) throw child.error;
  process.exitCode = child.status ?? 1;
}
