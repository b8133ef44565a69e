// The one YAML configuration: a sequence written in groups, each by js-yaml
// nested under its key, joins to exactly the whole document's dump, for any
// values and any way of cutting them into groups.

import fc from "fast-check";
import { dump, load } from "js-yaml";
import t from "tap";
import { toYaml, yamlSequencePart } from "../../src/representation/yaml.js";

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
