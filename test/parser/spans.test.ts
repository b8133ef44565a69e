// The parser's spans (src/http/parse/spans.ts): the byte ranges it reports to a
// SpanListener. The wire view and the terminal trace are built from them
// alone, so these properties are what keeps both honest:
//  - the line spans and body pieces tile the bytes read, from 0, with no gap;
//  - the parts inside a line (method, field-name, chunk-size...) lie inside it;
//  - an error span is empty, comes just before onError, and sits at the byte
//    the error's offset names: after the last span, or at the start of the
//    blank line for a head refused as a whole;
//  - the spans are the same however the stream is cut (body pieces merged);
//  - a listener changes nothing of the events the parser hands out.

import fc from "fast-check";
import t from "tap";
import type { ProtocolError } from "../../src/http/parse/errors.js";
import { DEFAULT_LIMITS, RequestParser, type ParserLimits } from "../../src/http/parse/parser.js";
import type { SpanKind } from "../../src/http/parse/spans.js";
import { Driver } from "./fixtures/drive.js";
import { feedAt } from "./fixtures/helpers.js";
import { chunkingArb, cutsFrom, httpishArb, limitsArb, mutate, mutationArb, pipelineArb } from "./fixtures/generators.js";

type Event = [SpanKind | "head" | "request" | "error!", number, number];

/** Spans that cover bytes of the stream in turn; the others lie inside the next of these. */
const TILING: ReadonlySet<SpanKind> = new Set<SpanKind>([
  "empty-line",
  "request-line",
  "field-line",
  "blank-line",
  "body",
  "chunk-size-line",
  "chunk-data",
  "chunk-end",
  "last-chunk",
  "trailer-line",
  "trailer-end",
]);

/** Every span and sink call, in order, with adjacent body and chunk-data pieces merged (their cut depends on the chunks). */
function record(input: Buffer, cuts: readonly number[], limits: ParserLimits): Event[] {
  const events: Event[] = [];
  const parser = new RequestParser(limits, {
    span(kind, start, end) {
      const last = events[events.length - 1];
      if ((kind === "body" || kind === "chunk-data") && last !== undefined && last[0] === kind && last[2] === start) last[2] = end;
      else events.push([kind, start, end]);
    },
  });
  const driver = new Driver(parser, {
    onHead: () => void events.push(["head", 0, 0]),
    onRequest: () => void events.push(["request", 0, 0]),
    onError: (e: ProtocolError) => void events.push(["error!", e.offset, 0]),
  });
  let from = 0;
  for (const cut of [...cuts, input.length]) {
    if (cut <= from) continue;
    driver.feed(Buffer.from(input.subarray(from, cut)));
    from = cut;
  }
  return events;
}

/** Throws unless the events satisfy the properties above. */
function check(input: Buffer, cuts: readonly number[], limits: ParserLimits): void {
  const events = record(input, cuts, limits);
  let at = 0;
  /** Where the message being read starts: after the last request, and after empty lines before its request line. */
  let messageStart = 0;
  const inner: [SpanKind, number, number][] = [];
  /** The last span that covers bytes. */
  let last: Event | undefined;
  for (let i = 0; i < events.length; i++) {
    const [kind, start, end] = events[i]!;
    if (kind === "head" || kind === "request") {
      if (kind === "request") messageStart = at;
      continue;
    }
    if (kind === "error!") throw new Error("onError without an error span before it");
    if (kind === "error") {
      if (start !== end) throw new Error(`error span [${start}, ${end}) is not empty`);
      // After the last span, in what the parser refused; or at the blank line, where a head is judged as a whole.
      const refusedHead = last !== undefined && last[0] === "blank-line" && start === last[1];
      if ((start < at && !refusedHead) || start >= input.length) throw new Error(`error at ${start}: inside the last span (ending at ${at}), or past the input`);
      const next = events[i + 1];
      if (next?.[0] !== "error!") throw new Error("an error span not followed by onError");
      if (start - next[1] !== messageStart) throw new Error(`error at ${start} with offset ${next[1]}: its message starts at ${messageStart}`);
      if (i + 2 !== events.length) throw new Error("events after the error");
      return;
    }
    if (start > end || end > input.length) throw new Error(`${kind} [${start}, ${end}) is not a range of the input`);
    if (TILING.has(kind)) {
      if (start !== at) throw new Error(`${kind} starts at ${start}, the last span ended at ${at}`);
      for (const [k, s, e] of inner) if (s < start || e > end) throw new Error(`${k} [${s}, ${e}) is not inside ${kind} [${start}, ${end})`);
      inner.length = 0;
      at = end;
      last = events[i];
      if (kind === "empty-line") messageStart = end;
    } else {
      inner.push([kind, start, end]);
    }
  }
  if (inner.length > 0) throw new Error(`${inner.map((s) => s[0]).join(", ")} without the line around them`);
  const whole = JSON.stringify(record(input, [], limits));
  if (JSON.stringify(events) !== whole) throw new Error(`cut at ${cuts.join(",")}: ${JSON.stringify(events)}\nwhole: ${whole}`);
  // A listener is only told: the events are the same with or without one.
  const withListener = events.filter((e) => e[0] === "head" || e[0] === "request" || e[0] === "error!").length;
  const outcome = feedAt(input, cuts, limits).outcome.events.length;
  if (withListener !== outcome) throw new Error(`${withListener} sink calls with a listener, ${outcome} without`);
}

t.test("spans tile the bytes, hold their parts, mark errors at their offset, and do not depend on the cuts", (t) => {
  const run = <Ts extends [unknown, ...unknown[]]>(name: string, property: fc.IProperty<Ts>) => {
    const details = fc.check(property, { numRuns: 700, includeErrorInReport: true });
    t.notOk(details.failed, `${name}: ${details.numRuns} runs${details.failed ? `\n${fc.defaultReportMessage(details)}` : ""}`);
  };
  run(
    "valid pipelines",
    fc.property(pipelineArb, chunkingArb, fc.boolean(), ({ raw }, chunking, bareLf) => {
      const input = Buffer.from(raw, "latin1");
      check(input, cutsFrom(chunking, input.length), { ...DEFAULT_LIMITS, allowBareLf: bareLf });
    }),
  );
  run(
    "mutated pipelines",
    fc.property(pipelineArb, fc.array(mutationArb, { minLength: 1, maxLength: 3 }), limitsArb, chunkingArb, ({ raw }, mutations, limits, chunking) => {
      const input = Buffer.from(mutate(raw, mutations), "latin1");
      check(input, cutsFrom(chunking, input.length), limits);
    }),
  );
  run(
    "HTTP-ish byte strings",
    fc.property(httpishArb, limitsArb, chunkingArb, (raw, limits, chunking) => {
      const input = Buffer.from(raw, "latin1");
      check(input, cutsFrom(chunking, input.length), limits);
    }),
  );
  t.end();
});

/** Spans of `raw` fed whole, as [kind, text]. */
function spans(raw: string, limits: ParserLimits = DEFAULT_LIMITS): [string, string][] {
  return record(Buffer.from(raw, "latin1"), [], limits)
    .filter((e) => e[0] !== "head" && e[0] !== "request" && e[0] !== "error!")
    .map(([kind, s, e]) => [kind, raw.slice(s, e)]);
}

t.test("every kind of span, in order, on a chunked request with extensions and trailers", (t) => {
  const raw =
    "\r\nPOST /p?q HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n" +
    "3;x=1\r\nabc\r\n0\r\nT:  v \r\n\r\n" +
    "PUT /b HTTP/1.0\r\nContent-Length: 2\r\n\r\nhi";
  t.same(spans(raw), [
    ["empty-line", "\r\n"],
    ["method", "POST"],
    ["target", "/p?q"],
    ["version", "HTTP/1.1"],
    ["request-line", "POST /p?q HTTP/1.1\r\n"],
    ["field-name", "Host"],
    ["field-value", "h"],
    ["field-line", "Host: h\r\n"],
    ["field-name", "Transfer-Encoding"],
    ["field-value", "chunked"],
    ["field-line", "Transfer-Encoding: chunked\r\n"],
    ["blank-line", "\r\n"],
    ["chunk-size", "3"],
    ["chunk-extension", ";x=1"],
    ["chunk-size-line", "3;x=1\r\n"],
    ["chunk-data", "abc"],
    ["chunk-end", "\r\n"],
    ["chunk-size", "0"],
    ["last-chunk", "0\r\n"],
    ["trailer-name", "T"],
    ["trailer-value", "v"],
    ["trailer-line", "T:  v \r\n"],
    ["trailer-end", "\r\n"],
    ["method", "PUT"],
    ["target", "/b"],
    ["version", "HTTP/1.0"],
    ["request-line", "PUT /b HTTP/1.0\r\n"],
    ["field-name", "Content-Length"],
    ["field-value", "2"],
    ["field-line", "Content-Length: 2\r\n"],
    ["blank-line", "\r\n"],
    ["body", "hi"],
  ]);
  t.end();
});


t.test("a head refused as a whole is refused at its blank line, which is reported first", (t) => {
  const missingHost = "GET / HTTP/1.1\r\nX: h\r\n\r\n";
  t.same(record(Buffer.from(missingHost, "latin1"), [], DEFAULT_LIMITS).slice(-3), [
    ["blank-line", 22, 24],
    ["error", 22, 22],
    ["error!", 22, 0],
  ]);
  // Refused after onHead: the handler lowered the body limit below the announced length.
  const events: Event[] = [];
  const parser = new RequestParser(DEFAULT_LIMITS, { span: (kind, s, e) => void events.push([kind, s, e]) });
  const driver = new Driver(parser, {
    onHead: () => parser.limitBody(5),
    onRequest: () => void events.push(["request", 0, 0]),
    onError: (e) => void events.push(["error!", e.offset, 0]),
  });
  driver.feed(Buffer.from("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n0123456789", "latin1"));
  t.same(events.slice(-3), [
    ["blank-line", 46, 48],
    ["error", 46, 46],
    ["error!", 46, 0],
  ]);
  t.end();
});
