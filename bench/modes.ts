// The harness's other modes: `npm run bench -- --paired ...` and the like.
// Each looks at the servers another way than the timed table does, and runs
// as its own process (alloc needs V8 flags that must be set at start), with
// every other argument passed on unchanged, so `npm run bench:paired -- X`
// and `npm run bench -- --paired X` print the same.

import { spawnSync } from "node:child_process";
import { benchScript } from "./paths.js";

export interface Mode {
  readonly flag: string;
  readonly script: string;
  readonly nodeArgs?: readonly string[];
  readonly what: string;
}

export const MODES: readonly Mode[] = [
  { flag: "--paired", script: "paired", what: "the three servers kept up, loaded in turn in short slices; median ratios within each cycle (noisy machines)" },
  { flag: "--instructions", script: "instructions", what: "instructions per request under valgrind's callgrind (the figure the neighbours cannot move)" },
  {
    flag: "--alloc",
    script: "alloc",
    // A young generation large enough that nothing is collected during the run: the heap's growth is what was allocated.
    nodeArgs: ["--expose-gc", "--min-semi-space-size=256", "--max-semi-space-size=256"],
    what: "bytes allocated per request, through the real Connection over an in-memory socket",
  },
  { flag: "--profile", script: "profile", what: "startline under --cpu-prof and wrk, samples summed by part of the stack" },
  { flag: "--data", script: "data", what: "only the data endpoints beside fastify and the data ceiling" },
  { flag: "--lists", script: "lists", what: "lists at scale: a store filled directly, up to 10^6 posts" },
];

/** Runs the mode `argv` asks for, if any, and returns its exit status; undefined when it asks for none. */
export function runMode(argv: readonly string[]): number | undefined {
  const asked = MODES.filter((m) => argv.includes(m.flag));
  if (asked.length === 0) return undefined;
  if (asked.length > 1) {
    console.error(`bench: ${asked.map((m) => m.flag).join(" and ")} are separate modes; give one`);
    return 2;
  }
  const mode = asked[0]!;
  const rest = argv.filter((a) => a !== mode.flag);
  const child = spawnSync(process.execPath, [...(mode.nodeArgs ?? []), benchScript(mode.script), ...rest], { stdio: "inherit" });
  if (child.error !== undefined) throw child.error;
  return child.status ?? 1;
}
