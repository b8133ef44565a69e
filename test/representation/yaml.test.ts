// The one YAML configuration: a sequence written in groups, each by js-yaml
// nested under its key, joins to exactly the whole document's dump, for any
// values and any way of cutting them into groups.

import fc from "fast-check";
import { dump, load } from "js-yaml";
import t from "tap";
import { toYaml, yamlEntry, yamlSequencePart, yamlSequenceStart } from "../../src/representation/yaml.js";
import { codePoint } from "../helpers/code-points.js";

const value = fc.jsonValue({ maxDepth: 3 }).filter((v) => !JSON.stringify(v).match(/\\ud[89ab]/i)); // no lone surrogates: the API refuses them

t.test("groups joined are the whole document, for any items and any cuts", async (t) => {
  fc.assert(
    fc.property(fc.array(value, { maxLength: 25 }), fc.array(fc.nat(25), { maxLength: 6 }), fc.constantFrom("posts", "facts", "x"), (items, cuts, key) => {
      const bounds = [...new Set([0, ...cuts.map((c) => Math.min(c, items.length)), items.length])].sort((a, b) => a - b);
      const groups = items.length === 0 ? [[]] : bounds.slice(1).map((end, i) => items.slice(bounds[i], end));
      const joined = groups.map((group, i) => yamlSequencePart(key, group, i === 0)).join("");
      const whole = dump({ [key]: items }, { noRefs: true, lineWidth: -1 });
      return joined === whole && joined === toYaml({ [key]: items }) && JSON.stringify(load(joined)) === JSON.stringify({ [key]: items });
    }),
    { numRuns: 300 },
  );
  t.pass("held for 300 runs");
});

t.test("a repeated value is written again, not as an alias, and long lines are not folded", async (t) => {
  const shared = { a: "x".repeat(200) };
  const text = toYaml({ list: [shared, shared] });
  t.notMatch(text, /[&*]ref/);
  t.equal(text.split("\n").filter((l) => l.includes("x".repeat(200))).length, 2);
});

const YAML_OPTIONS = { noRefs: true, lineWidth: -1 } as const;

/** Strings that YAML reads as something else, or that change how a scalar must be written. */
const AWKWARD = ["yes", "no", "null", "~", "true", "1e3", "0x1f", ".inf", "- x", "#", "# not a comment", "a: b", "a #b", "  leading", "trailing  ", "", " ", "\t", "'single'", '"double"',
  "> folded", "| literal", "@at", "`tick", "%pc", "!bang", "&anchor", "*alias", "? key", ": colon", "{", "[", ",", "multi\nline", "\n\nstarts with blank lines", "ends with newline\n",
  "blank\n\nline", "white\n   \nspace line", "  indented\nfirst", "crlf\r\nline", "\u0001control", "\u007fdel", "\u0085nel", "ünïcödé ✓", "😀 astral", "\u2028separator", "x".repeat(3000)];

const awkward = fc.oneof(fc.constantFrom(...AWKWARD), fc.string({ unit: "grapheme" }), fc.string({ unit: codePoint }).filter((s) => !/[\ud800-\udfff]/.test(s)));
const post = fc.record(
  { id: fc.stringMatching(/^[a-z0-9-]{1,20}$/), title: awkward, body: awkward, author: awkward, tags: fc.array(awkward, { maxLength: 4 }), publishedAt: fc.constant("2026-12-07T05:00:00.000Z"), updatedAt: fc.constant("2026-12-07T05:00:00.000Z") },
  { requiredKeys: ["id", "title", "body", "publishedAt", "updatedAt"] },
);

t.test("a post's entry, made once and kept, joins with others to exactly js-yaml's dump of the whole list", async (t) => {
  fc.assert(
    fc.property(fc.array(post, { maxLength: 12 }), (posts) => {
      const joined = yamlSequenceStart("posts", posts.length === 0) + posts.map(yamlEntry).join("");
      return joined === dump({ posts }, YAML_OPTIONS);
    }),
    { numRuns: 400 },
  );
  // Every awkward string at least once, in every field, beside the others.
  const every = AWKWARD.map((s, i) => ({ id: `p${i}`, title: s, body: AWKWARD[(i + 7) % AWKWARD.length]! + "\n" + s, author: s, tags: i % 3 === 0 ? [] : [s, "b"], publishedAt: "x", updatedAt: "y" }));
  t.equal(yamlSequenceStart("posts", false) + every.map(yamlEntry).join(""), dump({ posts: every }, YAML_OPTIONS));
  t.equal(yamlSequenceStart("posts", true), dump({ posts: [] }, YAML_OPTIONS));
  t.equal(yamlSequenceStart("yes", false) + yamlEntry({ a: 1 }), dump({ yes: [{ a: 1 }] }, YAML_OPTIONS), "a key that must be quoted");
});
