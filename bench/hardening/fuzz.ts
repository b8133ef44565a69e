// `npm run fuzz`: one million fast-check cases over the request parser.
//
// The generators and checks are the ones `npm test` runs a few thousand
// cases of (test/parser/fixtures/: generators.ts, checks.ts); this script only
// runs many more of them, spread over worker threads, and watches for hangs:
//
//   - never an exception: the parser either delivers requests or reports one
//     named error (code known, status the table's, last event, parser closed);
//   - the same outcome for every chunking: whole, one byte at a time, and a
//     random chunking give identical events;
//   - bounded: never more carried or buffered than the limits allow;
//   - never a hang: each worker bumps a shared counter per case; a counter
//     that does not move for --hang-ms (default 20 s) is reported as a hang,
//     with the property, seed and case number, and the run fails.
//
// Inputs: random bytes; byte strings made of HTTP's pieces; valid pipelines
// (checked to parse as built); mutations of valid pipelines (byte flips,
// deleted and duplicated runs, dropped CR or LF, injected NUL, CR, LF and
// header snippets, whitespace around every token, Content-Length values and
// chunk sizes replaced by huge, wrapped, signed or hex numbers); valid
// pipelines under limits small enough to be hit.
//
//   node dist/bench/hardening/fuzz.js [--runs 1000000] [--seed N] [--workers N] [--hang-ms 20000]
//
// Exit status: 0 all cases passed; 1 a property failed (the shrunk
// counterexample is printed, with the seed to replay it); 2 a hang; 3 bad options.

import fc from "fast-check";
import { availableParallelism } from "node:os";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";
import { DEFAULT_LIMITS, type ParserLimits } from "../../src/http/parse/parser.js";
import { parsesAsBuilt, robust } from "../../test/parser/fixtures/checks.js";
import {
  chunkingArb,
  framingMutationArb,
  httpishArb,
  limitsArb,
  mutate,
  mutationArb,
  pipelineArb,
  smallLimitsArb,
} from "../../test/parser/fixtures/generators.js";

/** One property: an input arbitrary and the check it must pass. */
interface PropertyDef<T> {
  readonly name: string;
  /** Share of the total runs. */
  readonly share: number;
  readonly arb: fc.Arbitrary<T>;
  readonly check: (value: T) => void;
}

type AnyProperty = PropertyDef<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function def<T>(p: PropertyDef<T>): AnyProperty {
  return p as AnyProperty;
}

const PROPERTIES: readonly AnyProperty[] = [
  def({
    name: "valid pipelines parse as built",
    share: 0.1,
    arb: fc.tuple(pipelineArb, chunkingArb, fc.boolean()),
    check: ([{ raw, expected }, chunking, bareLf]) => parsesAsBuilt(raw, expected, bareLf ? { ...DEFAULT_LIMITS, allowBareLf: true } : DEFAULT_LIMITS, chunking),
  }),
  def({
    name: "random bytes",
    share: 0.2,
    arb: fc.tuple(fc.uint8Array({ maxLength: 300 }), limitsArb, chunkingArb),
    check: ([data, limits, chunking]) => robust(Buffer.from(data).toString("latin1"), limits, chunking),
  }),
  def({
    name: "HTTP-ish byte strings",
    share: 0.2,
    arb: fc.tuple(httpishArb, limitsArb, chunkingArb),
    check: ([raw, limits, chunking]) => robust(raw, limits, chunking),
  }),
  def({
    name: "mutated valid pipelines",
    share: 0.3,
    arb: fc.tuple(pipelineArb, fc.array(mutationArb, { minLength: 1, maxLength: 4 }), limitsArb, chunkingArb),
    check: ([{ raw }, mutations, limits, chunking]) => robust(mutate(raw, mutations), limits, chunking),
  }),
  def({
    name: "whitespace around tokens, odd numbers in framing",
    share: 0.1,
    arb: fc.tuple(pipelineArb, fc.array(framingMutationArb, { minLength: 1, maxLength: 3 }), limitsArb, chunkingArb),
    check: ([{ raw }, mutations, limits, chunking]) => robust(mutate(raw, mutations), limits, chunking),
  }),
  def({
    name: "valid pipelines, small limits",
    share: 0.1,
    arb: fc.tuple(pipelineArb, smallLimitsArb, chunkingArb),
    check: ([{ raw }, limits, chunking]: [{ raw: string }, ParserLimits, number[]]) => robust(raw, limits, chunking),
  }),
];

// ---- Worker side ----

interface WorkerInput {
  readonly index: number;
  readonly seed: number;
  /** Runs per property, for this worker. */
  readonly runs: readonly number[];
  /** Per worker: [cases done, property index]. */
  readonly heartbeat: SharedArrayBuffer;
}

interface PropertyResult {
  readonly property: number;
  readonly runs: number;
  readonly ms: number;
  readonly slowestCaseMs: number;
  readonly seed: number;
  readonly failure: string | null;
}

type WorkerMessage = { readonly kind: "result"; readonly result: PropertyResult } | { readonly kind: "done" };

function workerMain(input: WorkerInput): void {
  const beat = new Int32Array(input.heartbeat);
  input.runs.forEach((runs, p) => {
    const property = PROPERTIES[p]!;
    const seed = (input.seed + input.index * 7919 + p * 104_729) | 0;
    Atomics.store(beat, input.index * 2 + 1, p);
    let slowest = 0;
    const started = performance.now();
    const details = fc.check(
      fc.property(property.arb, (value) => {
        Atomics.add(beat, input.index * 2, 1);
        const t0 = performance.now();
        try {
          property.check(value);
        } finally {
          const ms = performance.now() - t0;
          if (ms > slowest) slowest = ms;
        }
      }),
      { numRuns: runs, seed, includeErrorInReport: true },
    );
    const result: PropertyResult = {
      property: p,
      runs: details.numRuns,
      ms: performance.now() - started,
      slowestCaseMs: slowest,
      seed,
      failure: details.failed ? (fc.defaultReportMessage(details) ?? "failed") : null,
    };
    parentPort!.postMessage({ kind: "result", result } satisfies WorkerMessage);
  });
  parentPort!.postMessage({ kind: "done" } satisfies WorkerMessage);
}

// ---- Main side ----

interface Options {
  readonly runs: number;
  readonly seed: number;
  readonly workers: number;
  readonly hangMs: number;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({ args: argv, options: { runs: { type: "string" }, seed: { type: "string" }, workers: { type: "string" }, "hang-ms": { type: "string" } } });
  const whole = (name: keyof typeof values, fallback: number) => {
    const v = Number(values[name] ?? fallback);
    if (!Number.isInteger(v) || v < 0) throw new Error(`--${name} needs a whole number`);
    return v;
  };
  return { runs: whole("runs", 1_000_000), seed: whole("seed", Date.now() % 2 ** 31), workers: Math.max(1, whole("workers", Math.min(availableParallelism(), 8))), hangMs: whole("hang-ms", 20_000) };
}

/** Split n into k whole parts that add up to n. */
function split(n: number, weights: readonly number[]): number[] {
  const total = weights.reduce((a, b) => a + b, 0);
  const parts = weights.map((w) => Math.floor((n * w) / total));
  let rest = n - parts.reduce((a, b) => a + b, 0);
  for (let i = 0; rest > 0; i = (i + 1) % parts.length, rest--) parts[i]!++;
  return parts;
}

async function main(): Promise<number> {
  let o: Options;
  try {
    o = parseOptions(process.argv.slice(2));
  } catch (error) {
    console.error(`fuzz: ${(error as Error).message}`);
    return 3;
  }
  const perProperty = split(o.runs, PROPERTIES.map((p) => p.share));
  const perWorker = Array.from({ length: o.workers }, () => [] as number[]);
  perProperty.forEach((n) => split(n, perWorker.map(() => 1)).forEach((k, w) => perWorker[w]!.push(k)));

  console.log(`fuzzing the parser: ${o.runs.toLocaleString("en")} cases, ${o.workers} worker threads, seed ${o.seed}`);
  const heartbeat = new SharedArrayBuffer(4 * 2 * o.workers);
  const beat = new Int32Array(heartbeat);
  const results: PropertyResult[] = [];
  const started = performance.now();
  const workers = perWorker.map(
    (runs, index) => new Worker(new URL(import.meta.url), { workerData: { index, seed: o.seed, runs, heartbeat } satisfies WorkerInput }),
  );

  const outcome = await new Promise<"done" | "hang" | "crash">((resolve) => {
    let running = workers.length;
    const last = workers.map(() => ({ count: -1, at: performance.now() }));
    let lastReport = performance.now();
    const watch = setInterval(() => {
      const now = performance.now();
      let total = 0;
      for (let w = 0; w < workers.length; w++) {
        const count = Atomics.load(beat, w * 2);
        total += count;
        if (count !== last[w]!.count) last[w] = { count, at: now };
        else if (now - last[w]!.at > o.hangMs && last[w]!.count >= 0) {
          const p = Atomics.load(beat, w * 2 + 1);
          const seed = (o.seed + w * 7919 + p * 104_729) | 0;
          console.error(
            `HANG: worker ${w} made no progress for ${o.hangMs} ms in "${PROPERTIES[p]!.name}" ` +
              `(fast-check seed ${seed}, worker case ${count}; replay with --seed ${o.seed} --workers ${o.workers} --runs ${o.runs})`,
          );
          clearInterval(watch);
          resolve("hang");
          return;
        }
      }
      if (now - lastReport >= 10_000) {
        lastReport = now;
        const s = (now - started) / 1000;
        console.log(`  ${total.toLocaleString("en")} cases after ${s.toFixed(0)} s (${Math.round(total / s).toLocaleString("en")}/s)`);
      }
    }, 1000);
    for (const worker of workers) {
      worker.on("message", (m: WorkerMessage) => {
        if (m.kind === "result") results.push(m.result);
        else if (--running === 0) {
          clearInterval(watch);
          resolve("done");
        }
      });
      worker.on("error", (error) => {
        console.error("a worker crashed:", error);
        clearInterval(watch);
        resolve("crash");
      });
    }
  });
  const wallS = (performance.now() - started) / 1000;
  await Promise.all(workers.map((w) => w.terminate()));
  if (outcome !== "done") return outcome === "hang" ? 2 : 1;

  let ran = 0;
  let failed = 0;
  let slowest = 0;
  console.log("");
  console.log("| property | cases | failures | slowest case (ms) |");
  console.log("|---|---:|---:|---:|");
  PROPERTIES.forEach((p, i) => {
    const mine = results.filter((r) => r.property === i);
    const runs = mine.reduce((a, r) => a + r.runs, 0);
    const fails = mine.filter((r) => r.failure !== null).length;
    const slow = Math.max(...mine.map((r) => r.slowestCaseMs));
    ran += runs;
    failed += fails;
    slowest = Math.max(slowest, slow);
    console.log(`| ${p.name} | ${runs.toLocaleString("en")} | ${fails} | ${slow.toFixed(1)} |`);
  });
  console.log("");
  for (const r of results.filter((r) => r.failure !== null)) {
    console.log(`FAILED: ${PROPERTIES[r.property]!.name} (fast-check seed ${r.seed})\n${r.failure}\n`);
  }
  console.log(
    `${ran.toLocaleString("en")} cases in ${wallS.toFixed(1)} s (${Math.round(ran / wallS).toLocaleString("en")} cases/s, ${o.workers} workers), ` +
      `${failed === 0 ? "no failures" : `${failed} FAILED`}, no hang (slowest case ${slowest.toFixed(1)} ms; hang limit ${o.hangMs} ms), seed ${o.seed}`,
  );
  return failed === 0 ? 0 : 1;
}

if (isMainThread) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
} else {
  workerMain(workerData as WorkerInput);
}
