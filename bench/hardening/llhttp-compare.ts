// `npm run fuzz:llhttp`: the fuzzer's inputs, read by startline's parser and
// by llhttp (node's own HTTP/1.1 parser, the one behind node:http), and
// every disagreement counted by kind.
//
//   node dist/bench/hardening/llhttp-compare.js [--runs 20000] [--seed 1] [--show HPE_STRICT]
//
// --show prints, whole, the shortest example of each difference whose name holds its argument.
//
// The inputs are the fuzzer's (test/parser/fixtures/generators.ts): valid
// pipelines, mutations of them, whitespace and odd numbers in their framing,
// and HTTP-ish byte strings. Each is read whole by both parsers at their
// defaults (llhttp strict, as node:http runs it; 16 KiB of head, as
// startline's header section). Two readings agree when both refuse the same
// request (each with its own code), or both take every request there is. A
// disagreement is keyed by the parser that stopped first and its code
// (startline's error code, llhttp's HPE_ code): the rule that parser applies
// and the other does not. The table lists each with its count and its
// shortest example; what each means is written down in docs/protocol.md
// ("startline and llhttp").
//
// Exit status: 0 (the run reports; it does not judge).

import fc from "fast-check";
import { createRequire } from "node:module";
import { DEFAULT_LIMITS, RequestParser, type ParserLimits } from "../../src/http/parse/parser.js";
import { framingMutationArb, httpishArb, mutate, mutationArb, pipelineArb, requestArb } from "../../test/parser/fixtures/generators.js";
import { option } from "../option.js";


/** What one parser made of the input: whole requests, then an error code or null (accepted, maybe waiting for more). */
interface Reading {
  readonly requests: number;
  readonly error: string | null;
  /** startline: it stopped reading without an error (after a request that closes the connection). */
  readonly closed?: boolean;
}

function startline(input: Buffer, limits: ParserLimits): Reading {
  let requests = 0;
  let error: string | null = null;
  const parser = new RequestParser(limits);
  parser.receive(input);
  for (let event = parser.next(); event.kind !== "need-data"; event = parser.next()) {
    if (event.kind === "request") requests++;
    else if (event.kind === "error") error = event.error.code;
  }
  return { requests, error, closed: error === null && parser.closed };
}

// node's binding of llhttp, as node:http's server uses it (lib/_http_server.js).
interface LlhttpParser {
  initialize(type: number, resource: object, maxHeaderSize: number, lenient: number): void;
  execute(data: Buffer): number | (Error & { code: string });
  close(): void;
  [callback: number]: (...args: unknown[]) => unknown;
}
interface LlhttpModule {
  HTTPParser: {
    new (): LlhttpParser;
    readonly REQUEST: number;
    readonly kOnHeaders: number;
    readonly kOnHeadersComplete: number;
    readonly kOnBody: number;
    readonly kOnMessageComplete: number;
    readonly kOnExecute: number;
  };
}
const { HTTPParser } = createRequire(import.meta.url)("_http_common") as LlhttpModule;

function llhttp(input: Buffer, maxHeaderSize: number): Reading {
  const parser = new HTTPParser();
  parser.initialize(HTTPParser.REQUEST, {}, maxHeaderSize, 0);
  let requests = 0;
  parser[HTTPParser.kOnHeaders] = () => {};
  parser[HTTPParser.kOnHeadersComplete] = () => 0;
  parser[HTTPParser.kOnBody] = () => {};
  parser[HTTPParser.kOnMessageComplete] = () => {
    requests++;
  };
  parser[HTTPParser.kOnExecute] = () => {};
  const result = parser.execute(input);
  parser.close();
  return { requests, error: typeof result === "number" ? null : result.code };
}

/**
 * The fuzzer's pipelines with a method llhttp knows in each request line:
 * llhttp refuses any other token (see docs/protocol.md), which would
 * otherwise hide every later difference behind that one.
 */
const knownMethodPipelineArb = fc
  .array(fc.tuple(requestArb, fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD")), { minLength: 1, maxLength: 4 })
  .map((requests) => requests.map(([r, method]) => r.raw.replace(/^[^ ]+/, method)).join(""));

/** The inputs, by kind, as the fuzzer makes them. */
const KINDS: readonly [string, fc.Arbitrary<string>][] = [
  ["valid pipelines (any token as method)", pipelineArb.map((p) => p.raw)],
  ["valid pipelines", knownMethodPipelineArb],
  ["mutated valid pipelines", fc.tuple(knownMethodPipelineArb, fc.array(mutationArb, { minLength: 1, maxLength: 4 })).map(([raw, m]) => mutate(raw, m))],
  ["whitespace around tokens, odd numbers in framing", fc.tuple(knownMethodPipelineArb, fc.array(framingMutationArb, { minLength: 1, maxLength: 3 })).map(([raw, m]) => mutate(raw, m))],
  ["HTTP-ish byte strings", httpishArb],
];

const show = (raw: string) => JSON.stringify(raw.length > 160 ? `${raw.slice(0, 160)}...` : raw);

function main(): void {
  const runs = Number(option("--runs", "20000"));
  const seed = Number(option("--seed", "1"));
  const limits = DEFAULT_LIMITS;
  let agreed = 0;
  let total = 0;
  const differences = new Map<string, { count: number; example: string }>();
  for (const [k, [kind, arb]] of KINDS.entries()) {
    for (const raw of fc.sample(arb, { numRuns: Math.ceil(runs / KINDS.length), seed: seed + k })) {
      const input = Buffer.from(raw, "latin1");
      const ours = startline(input, limits);
      const theirs = llhttp(input, limits.maxHeaderBytes);
      total++;
      // Where each one stopped taking requests: at the request it refused, or never.
      const oursStop = ours.error === null ? Infinity : ours.requests;
      const theirsStop = theirs.error === null ? Infinity : theirs.requests;
      let key: string;
      if (oursStop === theirsStop) {
        // Both refuse the same request (each in its own words), or both take every request there is.
        if (oursStop !== Infinity || ours.requests === theirs.requests) {
          agreed++;
          continue;
        }
        key = `neither refuses; startline delivers ${ours.requests}, llhttp ${theirs.requests}`;
      } else if (oursStop < theirsStop) key = `startline refuses (${ours.error}), llhttp reads on`;
      else if (ours.closed === true && theirs.requests >= ours.requests) key = `startline stops reading (the connection closes), llhttp reads on and refuses (${theirs.error})`;
      else key = `llhttp refuses (${theirs.error}), startline reads on`;
      key += ` | ${kind}`;
      const seen = differences.get(key);
      if (seen === undefined) differences.set(key, { count: 1, example: raw });
      else {
        seen.count++;
        if (raw.length < seen.example.length) seen.example = raw;
      }
    }
  }
  console.log(`${total} inputs (seed ${seed}): ${agreed} read alike by startline and llhttp (node ${process.versions.node}, llhttp ${process.versions.llhttp}), ${total - agreed} not\n`);
  console.log("| difference | inputs | count | shortest example |");
  console.log("|---|---|---:|---|");
  for (const [key, { count, example }] of [...differences].sort((a, b) => b[1].count - a[1].count)) {
    const [what, kind] = key.split(" | ");
    console.log(`| ${what} | ${kind} | ${count} | \`${show(example).replace(/\|/g, "\\|").replace(/`/g, "'")}\` |`);
  }
  const wanted = option("--show", "");
  if (wanted !== "") for (const [key, { example }] of differences) if (key.includes(wanted)) console.log(`\n${key}:\n${JSON.stringify(example)}`);
}

main();
