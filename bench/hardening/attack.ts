// `npm run attack -- <name> [options]`: the attacks on the server, one
// runner. They are not benchmarks: each one attacks the real server process
// on 127.0.0.1 and prints what it cost the server and everybody else, against
// the bound docs/reliability.md gives. Each attack is a script of its own
// (the options after its name are its own, see the script's header), run as
// its own process, so `node dist/bench/hardening/<script>.js` still works.
//
//   npm run attack                 # the list
//   npm run attack -- floods --only pipeline

import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

interface Attack {
  readonly name: string;
  readonly script: string;
  readonly what: string;
}

const ATTACKS: readonly Attack[] = [
  { name: "slowloris", script: "slowloris", what: "1,000 connections sending a head a byte a second: a normal client's p99 beside them" },
  { name: "floods", script: "floods", what: "pipelined, huge-Content-Length, tiny-chunk and header floods: peak RSS and sockets" },
  { name: "drips", script: "drips", what: "200 slow drips (/api/lab/drip): RSS against their budgets, a status request's wait" },
  { name: "stalled-readers", script: "stalled-readers", what: "clients that never read a large answer: RSS, a status request's wait" },
  { name: "wire-amplify", script: "wire-amplify", what: "the wire view as an amplifier: answer size and a neighbour's wait" },
  { name: "worker-deaths", script: "worker-deaths", what: "workers killed under load: no request may be left hanging" },
  { name: "fuzz", script: "fuzz", what: "a million fast-check cases over the parser, on worker threads, watched for hangs" },
  { name: "llhttp", script: "llhttp-compare", what: "the fuzzer's inputs read by startline and by llhttp, disagreements by kind" },
];

function usage(): string {
  const width = Math.max(...ATTACKS.map((a) => a.name.length)) + 2;
  return `Usage: npm run attack -- <name> [the attack's own options]\n\n${ATTACKS.map((a) => `  ${a.name.padEnd(width)}${a.what}`).join("\n")}`;
}

function main(argv: readonly string[]): number {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h") {
    console.log(usage());
    return name === undefined ? 2 : 0;
  }
  const attack = ATTACKS.find((a) => a.name === name);
  if (attack === undefined) {
    console.error(`attack: no attack named ${JSON.stringify(name)}\n\n${usage()}`);
    return 2;
  }
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), `${attack.script}.js`);
  const child = spawnSync(process.execPath, [script, ...rest], { stdio: "inherit" });
  if (child.error !== undefined) throw child.error;
  return child.status ?? 1;
}

process.exitCode = main(process.argv.slice(2));
