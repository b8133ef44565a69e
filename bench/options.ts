// The runner's options: the command line, parsed, and its usage text.

import { DEFAULT_RESULTS_DIR } from "./paths.js";
import { DATA_SCENARIOS } from "./data.js";
import { MODES } from "./modes.js";
import { QUICK_SCENARIOS, SCENARIOS } from "./scenarios.js";

export interface Options {
  duration: number;
  warmup: number;
  connections: number;
  pipelining: number | undefined;
  rounds: number;
  scenarios: string[] | undefined;
  quick: boolean;
  resultsDir: string;
  /** Before each run, wait up to this many seconds for other processes to go quiet (0: do not wait). */
  waitQuiet: number;
  /** How many times a run disturbed by other load is measured again. */
  retries: number;
  /** Overrides the idle connections of idle-* scenarios. */
  idleConnections: number | undefined;
  help: boolean;
}

/** Idle connections per server with --quick (unless --idle-connections says otherwise). */
export const QUICK_IDLE_CONNECTIONS = 500;

export const USAGE = `Usage: npm run bench -- [options]

Benchmarks startline against node:http and a no-parse node:net "ceiling"
server (and fastify and a data ceiling on the data endpoints), under wrk;
prints a markdown table of medians and ratios; writes every run as JSON to
bench/results/<timestamp>.json.

Options:
  --duration <s>       seconds per measured run, whole (default 10; wrk takes
                       whole seconds)
  --warmup <s>         seconds of warm-up before each measured run, whole
                       (default 2; 0: none)
  --connections <n>    concurrent connections (default 100)
  --pipelining <n>     requests in flight per connection, for every scenario
                       (default: each scenario's own)
  --rounds <n>         rounds; each server runs once per round per scenario,
                       in an order that rotates (default 3)
  --scenarios <a,b>    only these scenarios (default all): ${SCENARIOS.map((s) => s.name).join(", ")};
                       and of the data endpoints beside fastify (bench/data.ts, run last, none with --quick):
                       ${DATA_SCENARIOS.map((s) => s.name).join(", ")}
  --quick              smoke run: 1 s runs, no warm-up, 1 round,
                       10 connections, ${QUICK_IDLE_CONNECTIONS} idle connections, and only
                       ${QUICK_SCENARIOS.join(", ")}
                       (explicit options still win)
  --idle-connections <n>
                       idle connections per server in idle-* scenarios
                       (default: the scenario's, 10000)
  --results-dir <dir>  where to write the JSON (default bench/results)
  --retries <n>        measure a run again, up to <n> times, when other
                       processes used over 10% of a core during it (default 2,
                       0 with --quick; a run without a single response is
                       measured again at least once)
  --wait-quiet <s>     before each run, wait up to <s> seconds until other
                       processes use under 10% of a core (default 0: no wait;
                       for shared machines)
  --help               this text

Modes (one at a time; the options after it are the mode's own, see bench/README.md):
${MODES.map((m) => `  ${m.flag.padEnd(19)}${m.what}`).join("\n")}

Exit status: 0 when every run succeeded with only 2xx responses, no errors
and the same responses from every server; 1 otherwise; 2 on bad options.`;

export class UsageError extends Error {}

export function parseOptions(argv: readonly string[]): Options {
  const given = new Map<string, string | true>();
  const valued = new Set(["duration", "warmup", "connections", "pipelining", "rounds", "scenarios", "results-dir", "wait-quiet", "retries", "idle-connections"]);
  const flags = new Set(["quick", "help"]);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "-h") {
      given.set("help", true);
      continue;
    }
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (m === null) throw new UsageError(`unexpected argument ${JSON.stringify(arg)}`);
    const name = m[1]!;
    if (flags.has(name)) {
      if (m[2] !== undefined) throw new UsageError(`--${name} takes no value`);
      given.set(name, true);
    } else if (valued.has(name)) {
      const value = m[2] ?? argv[++i];
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
      given.set(name, value);
    } else throw new UsageError(`unknown option --${name}`);
  }
  const quick = given.has("quick");
  const number = (name: string, fallback: number, min: number, integer: boolean): number => {
    const raw = given.get(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (raw === true || raw === "" || !Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) {
      throw new UsageError(`--${name} must be ${integer ? "a whole number" : "a number"} >= ${min}, got ${JSON.stringify(raw)}`);
    }
    return n;
  };
  const scenarios = given.get("scenarios");
  const resultsDir = given.get("results-dir");
  return {
    // Whole seconds: wrk's -d takes no fraction.
    duration: number("duration", quick ? 1 : 10, 1, true),
    warmup: number("warmup", quick ? 0 : 2, 0, true),
    connections: number("connections", quick ? 10 : 100, 1, true),
    pipelining: given.has("pipelining") ? number("pipelining", 1, 1, true) : undefined,
    rounds: number("rounds", quick ? 1 : 3, 1, true),
    scenarios: typeof scenarios === "string" ? scenarios.split(",").map((s) => s.trim()).filter((s) => s !== "") : undefined,
    quick,
    resultsDir: typeof resultsDir === "string" ? resultsDir : DEFAULT_RESULTS_DIR,
    waitQuiet: number("wait-quiet", 0, 0, false),
    retries: number("retries", quick ? 0 : 2, 0, true),
    idleConnections: given.has("idle-connections") ? number("idle-connections", 1, 1, true) : quick ? QUICK_IDLE_CONNECTIONS : undefined,
    help: given.has("help"),
  };
}

