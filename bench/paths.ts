// Where things are. run.ts runs compiled, as dist/bench/run.js, but some of
// what it needs is not compiled: bench/autocannon-methods.cjs and
// bench/gc-on-signal.cjs (plain CommonJS, outside tsc) and bench/results/. Both are found from the repository root,
// which is the first directory above this file that holds a package.json:
// dist/bench/ -> dist/ (none) -> the root. The same walk works from bench/
// when the sources are run directly (e.g. by a TypeScript loader).
//
// The compiled siblings (servers/*.js, idle-client.js) are found next to this file
// with import.meta.url, i.e. in dist/bench/.

import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

function findRoot(start: string): string {
  let dir = start;
  for (;;) {
    if (existsSync(join(dir, "package.json"))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${start}`);
    dir = parent;
  }
}

export const ROOT = findRoot(here);
/** The benchmark's compiled directory (dist/bench when built). */
export const BENCH_BUILD_DIR = here;
/** The benchmark's source directory: bench/ in the repository. */
export const BENCH_SOURCE_DIR = join(ROOT, "bench");
export const AUTOCANNON_METHODS_MODULE = join(BENCH_SOURCE_DIR, "autocannon-methods.cjs");
/** Preloaded into the servers of idle-* scenarios: a full GC on SIGUSR2. */
export const GC_ON_SIGNAL_MODULE = join(BENCH_SOURCE_DIR, "gc-on-signal.cjs");
export const DEFAULT_RESULTS_DIR = join(BENCH_SOURCE_DIR, "results");
export const STARTLINE_MAIN = join(ROOT, "dist", "src", "main.js");

/** A compiled file of the benchmark, e.g. "servers/ceiling" -> dist/bench/servers/ceiling.js. */
export function benchScript(name: string): string {
  return join(here, `${name}.js`);
}
