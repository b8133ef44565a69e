// src/validation/json-schema.ts against Ajv, the library it replaced: on drawn
// JSON values (parsed from text, as a body is), for the schemas the server
// checks requests against, both modes (the first violation; every violation)
// give the same violations, in the same order, as Ajv's `strict` validators
// did. The values are drawn near every rule's edge: member names the schema
// has, lacks or sets itself, strings around each length bound counted in
// code points (astral characters and lone surrogates), NUL, arrays around
// maxItems, and values of every type where another is expected.

import assert from "node:assert/strict";
import fc from "fast-check";
import { Ajv, type ErrorObject } from "ajv";
import t, { type Test } from "tap";
import { compileSchema } from "../../src/validation/json-schema.js";
import { articleFieldsSchema, postFieldsSchema, postPatchSchema } from "../../src/validation/schemas.js";

function report<Ts>(t: Test, name: string, details: fc.RunDetails<Ts>): void {
  t.notOk(details.failed, `${name} (${details.numRuns} runs)${details.failed ? `\n${fc.defaultReportMessage(details) ?? ""}` : ""}`);
}

/** Units that count differently in UTF-16 and in code points, and NUL. */
const unit = fc.constantFrom("a", "é", "\u0000", "\u{1F600}", "\ud800", "\udc00", "~", "/");
/**
 * Units that JSON writes as they are: the strings around 100,000 are made of these, since a body of
 * 100,000 escaped characters (`\u0000`) cost this file a second of CPU to write and read back, and
 * the short strings draw escaped ones at every other bound.
 */
const plainUnit = fc.constantFrom("a", "é", "\u{1F600}", "~");
/** A string of `n` units around a bound: the bounds of these schemas are 1, 50, 100, 200 and 100,000. */
const around = (bound: number, units = unit) =>
  fc.tuple(fc.array(units, { minLength: 1, maxLength: 3 }), fc.integer({ min: -1, max: 1 })).map(([units, off]) => {
    const n = Math.max(0, bound + off);
    return units.join("").repeat(Math.floor(n / units.length)) + units.slice(0, n % units.length).join("");
  });
const text = fc.oneof(
  ...[fc.string({ maxLength: 6 }), fc.array(unit, { maxLength: 4 }).map((u) => u.join("")), around(1), around(100), around(200)].map((arbitrary) => ({ weight: 3, arbitrary })),
  // Rarer: each costs more to write and read back than all the rest of a body.
  { weight: 1, arbitrary: around(100_000, plainUnit) },
);
const scalar = fc.oneof({ weight: 4, arbitrary: text }, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null));
const strings = fc.oneof(fc.array(text, { maxLength: 4 }), fc.tuple(fc.integer({ min: 48, max: 52 }), scalar).map(([n, last]) => [...Array.from({ length: n - 1 }, (_, i) => `t${i}`), last]));
const value = fc.oneof({ weight: 4, arbitrary: scalar }, strings, fc.array(scalar, { maxLength: 3 }), fc.constant({}), fc.constant({ title: "x" }));
const name = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("title", "body", "author", "tags") },
  fc.constantFrom("id", "publishedAt", "extra", "__proto__", "constructor", "a/b", "~c", "0"),
  fc.string({ maxLength: 3 }),
);
/** JSON text of an object of drawn members (a name may repeat: the last wins, as in any body). */
const objectText = fc.array(fc.tuple(name, value), { maxLength: 7 }).map((members) => `{${members.map(([n, v]) => `${JSON.stringify(n)}:${JSON.stringify(v)}`).join(",")}}`);
const body = fc.oneof({ weight: 8, arbitrary: objectText }, value.map((v) => JSON.stringify(v)));

/** Ajv's violations, reduced to what json-schema.ts reports. */
const fields = (errors: readonly ErrorObject[] | null | undefined) => (errors ?? []).map(({ keyword, instancePath, params }) => ({ keyword, instancePath, params }));

for (const [label, schema] of [
  ["post fields", postFieldsSchema],
  ["article fields", articleFieldsSchema],
] as const) {
  t.test(`${label}: the same violations as Ajv, first only and all`, (t) => {
    const check = compileSchema(schema);
    const first = new Ajv({ allErrors: false, strict: true }).compile(schema);
    const all = new Ajv({ allErrors: true, strict: true }).compile(schema);
    const details = fc.check(
      fc.property(body, (json) => {
        const parsed: unknown = JSON.parse(json);
        first(parsed);
        all(parsed);
        assert.deepStrictEqual(check(parsed, false), fields(first.errors), "the first violation");
        assert.deepStrictEqual(check(parsed, true), fields(all.errors), "every violation");
      }),
      { numRuns: 400, includeErrorInReport: true },
    );
    report(t, `${label} against Ajv`, details);
    t.end();
  });
}

t.test("the drawn values reach every rule", (t) => {
  // Without this, a generator that never broke a rule would make the comparison above pass vacuously.
  const check = compileSchema(postFieldsSchema);
  const seen = new Set<string>();
  fc.assert(
    fc.property(body, (json) => {
      for (const v of check(JSON.parse(json), true)) seen.add(v.keyword);
    }),
    { numRuns: 400, seed: 51 },
  );
  t.same([...seen].sort(), ["additionalProperties", "maxItems", "maxLength", "minLength", "pattern", "required", "type"]);
  t.end();
});

t.test("a schema with a keyword it does not check is refused, not half-checked", (t) => {
  t.throws(() => compileSchema(postPatchSchema), /the keyword "anyOf" is not supported/, "anyOf (the patch schemas are documents, not checks)");
  t.throws(() => compileSchema({ type: "string", format: "date-time" }), /the keyword "format" is not supported/);
  t.throws(() => compileSchema({ type: "object", properties: { n: { type: "integer" } } }), /at \/properties\/n: type must be one of string, object, array/);
  t.throws(() => compileSchema({ type: "object", additionalProperties: { type: "string" } }), /additionalProperties may only be false/);
  t.doesNotThrow(() => compileSchema({ $id: "x", title: "T", description: "D", type: "string" }), "annotations change nothing and are accepted");
  t.end();
});
