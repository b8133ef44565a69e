// Properties of the parser, checked with fast-check:
//  (a) random valid requests parse to the values they were built from, under any chunking;
//  (b) random bytes and random mutations of valid requests never throw, end in requests
//      and at most one named error, give the same outcome under every chunking, and never
//      make the parser hold more than its limits allow.

import assert from "node:assert/strict";
import fc from "fast-check";
import t, { type Test } from "tap";
import { DEFAULT_LIMITS } from "../../src/http/parse/parser.js";
import { bytes, feedAt, feedWhole } from "./fixtures/helpers.js";
import { parsesAsBuilt, robust } from "./fixtures/checks.js";
import { chunkingArb, cutsFrom, httpishArb, limitsArb, mutate, mutationArb, pipelineArb, smallLimitsArb } from "./fixtures/generators.js";

function report<Ts>(t: Test, name: string, details: fc.RunDetails<Ts>): void {
  t.notOk(details.failed, `${name} (${details.numRuns} runs)${details.failed ? `\n${fc.defaultReportMessage(details) ?? ""}` : ""}`);
}

t.test("(a) valid requests parse to what they were built from, under any chunking", (t) => {
  const details = fc.check(
    fc.property(pipelineArb, chunkingArb, fc.boolean(), ({ raw, expected }, chunking, bareLf) => {
      parsesAsBuilt(raw, expected, bareLf ? { ...DEFAULT_LIMITS, allowBareLf: true } : DEFAULT_LIMITS, chunking);
    }),
    { numRuns: 700, includeErrorInReport: true },
  );
  report(t, "random valid pipelines", details);
  t.end();
});

t.test("(b) random bytes", (t) => {
  const details = fc.check(
    fc.property(fc.uint8Array({ maxLength: 300 }), limitsArb, chunkingArb, (data, limits, chunking) => {
      robust(Buffer.from(data).toString("latin1"), limits, chunking);
    }),
    { numRuns: 600, includeErrorInReport: true },
  );
  report(t, "random bytes", details);
  t.end();
});

t.test("(b) random byte strings made of HTTP's pieces", (t) => {
  const details = fc.check(
    fc.property(httpishArb, limitsArb, chunkingArb, (raw, limits, chunking) => {
      robust(raw, limits, chunking);
    }),
    { numRuns: 900, includeErrorInReport: true },
  );
  report(t, "HTTP-ish byte strings", details);
  t.end();
});

t.test("(b) random mutations of valid requests", (t) => {
  const details = fc.check(
    fc.property(pipelineArb, fc.array(mutationArb, { minLength: 1, maxLength: 4 }), limitsArb, chunkingArb, ({ raw }, mutations, limits, chunking) => {
      robust(mutate(raw, mutations), limits, chunking);
    }),
    { numRuns: 1500, includeErrorInReport: true },
  );
  report(t, "mutated pipelines", details);
  t.end();
});

t.test("(b) valid requests under limits small enough to be hit", (t) => {
  const details = fc.check(
    fc.property(pipelineArb, smallLimitsArb, chunkingArb, ({ raw }, limits, chunking) => {
      robust(raw, limits, chunking);
    }),
    { numRuns: 700, includeErrorInReport: true },
  );
  report(t, "valid pipelines, small limits", details);
  t.end();
});

t.test("(b) the same input gives the same outcome under many chunkings", (t) => {
  const details = fc.check(
    fc.property(
      pipelineArb,
      fc.array(mutationArb, { maxLength: 2 }),
      limitsArb,
      fc.array(chunkingArb, { minLength: 4, maxLength: 8 }),
      ({ raw }, mutations, limits, chunkings) => {
        const input = bytes(mutate(raw, mutations));
        const expected = JSON.stringify(feedWhole(input, limits).outcome);
        for (const chunking of chunkings) {
          const cuts = cutsFrom(chunking, input.length);
          assert.equal(JSON.stringify(feedAt(input, cuts, limits).outcome), expected, `cut at ${cuts.join(",")}`);
        }
      },
    ),
    { numRuns: 400, includeErrorInReport: true },
  );
  report(t, "many chunkings of one input", details);
  t.end();
});
