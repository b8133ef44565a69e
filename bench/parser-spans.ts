// What the parser's span listener costs, in process.
//
//   npm run --silent build && node dist/bench/parser-spans.js [--requests N] [--rounds R] [--baseline path/to/parser.js] [--variants none,baseline]
//
// Feeds N pipelined GETs with 6 header fields (200,000 by default), in pieces
// of 64 KiB cut wherever they fall (as a socket delivers them), to a
// RequestParser:
//   none       without a listener: what every connection runs (TRACE off);
//   no-op      with a listener that does nothing: the price of reporting spans;
//   wire       with the wire view's listener (src/docs/wire.ts), under the
//              budget POST /api/wire gives its account of the requests: parts
//              for the first requests, then only counting;
//   wire-all   the wire view's listener without a budget, every part made
//              (on N / 10 requests: it keeps them all);
//   trace      the terminal trace's (TRACE=1), its lines formatted and dropped;
//   baseline   (with --baseline) another build's RequestParser without a
//              listener, e.g. the parser before spans existed, to show that
//              "none" costs nothing extra.
// Variants take turns, R rounds (5); the median and the least CPU time per
// request (user + system, process.cpuUsage: on a shared machine, what the
// parser itself used; the least is the one other processes disturbed least)
// are reported, with the spread. Compare figures within one run.

import { pathToFileURL } from "node:url";
import { requestReader } from "../src/docs/wire.js";
import { requestBudget } from "../src/docs/wire-route.js";
import { DEFAULT_LIMITS, RequestParser, type ParserSink } from "../src/http/parse/parser.js";
import { painter } from "../src/trace/text.js";
import { Tracer } from "../src/trace/tracer.js";

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : process.argv[i + 1]!;
}

const REQUEST =
  "GET /api/v1/post/hello-world?view=full HTTP/1.1\r\n" +
  "Host: 127.0.0.1:8080\r\n" +
  "User-Agent: bench-parser-spans/1.0\r\n" +
  "Accept: application/json\r\n" +
  "Accept-Encoding: gzip, br\r\n" +
  "Accept-Language: en-GB,en;q=0.8\r\n" +
  "Connection: keep-alive\r\n" +
  "\r\n";
const PIECE = 64 * 1024;

type Parse = (input: Buffer, pieces: readonly Buffer[]) => number;

/** A sink that counts whole requests, so every variant does the same work after the parser. */
function counter(): { sink: ParserSink; count: () => number } {
  let requests = 0;
  return {
    sink: {
      onHead: () => {},
      onRequest: () => void requests++,
      onError: (e) => {
        throw new Error(`the bench input broke a rule: ${e.code}`);
      },
    },
    count: () => requests,
  };
}

function feedAll(parser: { feed(b: Buffer): void }, pieces: readonly Buffer[]): void {
  for (const piece of pieces) parser.feed(piece);
}

const variants: Record<string, Parse> = {
  none: (_input, pieces) => {
    const c = counter();
    feedAll(new RequestParser(c.sink, DEFAULT_LIMITS), pieces);
    return c.count();
  },
  "no-op": (_input, pieces) => {
    const c = counter();
    feedAll(new RequestParser(c.sink, DEFAULT_LIMITS, { span() {} }), pieces);
    return c.count();
  },
  wire: (input, pieces) => {
    const reader = requestReader(input, DEFAULT_LIMITS, requestBudget());
    feedAll(reader.parser, pieces);
    return reader.account().requests.length;
  },
  trace: (_input, pieces) => {
    let lines = 0;
    const tracer = new Tracer("#1", { write: () => void lines++, paint: painter(false), bodyBytes: 256 });
    const c = counter();
    const sink: ParserSink = {
      onHead: (head) => tracer.head(head),
      onRequest: (request) => (tracer.request(request), c.sink.onRequest(request)),
      onError: (error) => c.sink.onError(error),
    };
    const parser = new RequestParser(sink, DEFAULT_LIMITS, tracer);
    for (const piece of pieces) {
      tracer.received(piece);
      parser.feed(piece);
    }
    return c.count();
  },
};

function cut(input: Buffer): Buffer[] {
  const pieces: Buffer[] = [];
  for (let at = 0; at < input.length; at += PIECE) pieces.push(input.subarray(at, at + PIECE));
  return pieces;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function main(): Promise<void> {
  const n = Number(option("--requests", "200000"));
  const rounds = Number(option("--rounds", "5"));
  const baseline = process.argv.includes("--baseline") ? option("--baseline", "") : null;
  if (baseline !== null) {
    const mod = (await import(pathToFileURL(baseline).href)) as { RequestParser: typeof RequestParser };
    variants.baseline = (_input, pieces) => {
      const c = counter();
      feedAll(new mod.RequestParser(c.sink, DEFAULT_LIMITS), pieces);
      return c.count();
    };
  }
  const input = Buffer.from(REQUEST.repeat(n), "latin1");
  const pieces = cut(input);
  const small = Buffer.from(REQUEST.repeat(Math.max(1, Math.floor(n / 10))), "latin1");
  const smallPieces = cut(small);
  const only = process.argv.includes("--variants") ? option("--variants", "").split(",") : null;
  const all: { name: string; input: Buffer; pieces: Buffer[]; requests: number; parse: Parse }[] = [
    ...Object.entries(variants).map(([name, parse]) => ({ name, input, pieces, requests: n, parse })),
    {
      name: "wire-all",
      input: small,
      pieces: smallPieces,
      requests: Math.max(1, Math.floor(n / 10)),
      parse: (i: Buffer, p: readonly Buffer[]) => {
        const reader = requestReader(i, DEFAULT_LIMITS, null);
        feedAll(reader.parser, p);
        return reader.account().requests.length;
      },
    },
  ];
  const runs = all.filter((r) => only === null || only.includes(r.name));
  if (runs.length === 0 || !runs.some((r) => r.name === "none")) throw new Error("--variants must include none");
  console.log(`${n} pipelined GETs of ${REQUEST.length} bytes (6 header fields), fed in ${pieces.length} pieces of 64 KiB; ${rounds} rounds`);
  const times = new Map<string, number[]>(runs.map((r) => [r.name, []]));
  // Round 0 warms every variant up (compiles the hot paths) and is not counted.
  for (let round = 0; round <= rounds; round++) {
    for (const run of runs) {
      const start = process.cpuUsage();
      const got = run.parse(run.input, run.pieces);
      const used = process.cpuUsage(start);
      const ns = ((used.user + used.system) * 1e3) / run.requests;
      if (got !== run.requests) throw new Error(`${run.name}: ${got} requests parsed, expected ${run.requests}`);
      if (round > 0) times.get(run.name)!.push(ns);
    }
  }
  const none = times.get("none")!;
  const vs = (x: number, base: number) => `${x >= base ? "+" : ""}${(((x - base) / base) * 100).toFixed(1)}%`;
  console.log("variant   median  least  ns CPU/request  [spread]            requests  vs none (median, least)");
  for (const run of runs) {
    const t = times.get(run.name)!;
    const m = median(t);
    const least = Math.min(...t);
    const vsNone = run.name === "none" ? "" : `${vs(m, median(none))}, ${vs(least, Math.min(...none))}`;
    const spread = `[${least.toFixed(0)}..${Math.max(...t).toFixed(0)}]`;
    console.log(`${run.name.padEnd(9)} ${m.toFixed(0).padStart(6)} ${least.toFixed(0).padStart(6)}                  ${spread.padEnd(18)} ${String(run.requests).padStart(8)}  ${vsNone}`);
  }
}

await main();
