// The build (tsconfig.build.json) inlines a const enum's members as numbers
// wherever they are used: the connection's step function and its callers
// compare them many times a request, and as loads from the enum's object
// they cost a few hundred instructions of every status request
// (docs/benchmarks.md). Nothing else would notice the setting gone, so this
// reads what the build emitted for the connection's files: dist/src/, which
// test/run.mjs builds with `tsc -b` before any test runs (as the tests that
// start dist/src/main.js need), and which that build redoes whenever
// tsconfig.build.json changes. Compiling the files again here, with
// TypeScript's API, cost this file some 4 s of CPU for the same text.

import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import t from "tap";
import { ROOT } from "./helpers/root.js";

/** What the build emitted for the connection's state files, by file name. */
function emitted(): Map<string, string> {
  const out = new Map<string, string>();
  for (const name of ["steps.js", "lifecycle.js", "connection.js"]) {
    const file = path.join(ROOT, "dist", "src", "http", "connection", name);
    if (existsSync(file)) out.set(name, readFileSync(file, "utf8"));
  }
  return out;
}

/** The code without its comments (the build names in one each number it inlined) and without the enums' own declarations, `(function (State) { ... })(State || (State = {}));`: what is left are the uses. */
function uses(js: string): string {
  return js
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/\/\/.*$/gm, "")
    .replace(/\(function \((\w+)\) \{[\s\S]*?\}\)\(\1 \|\| \(\1 = \{\}\)\);/g, "");
}

t.test("the build inlines the connection's const enums: State.Idle is emitted as 0, not read from State", (t) => {
  const js = emitted();
  t.same([...js.keys()].sort(), ["connection.js", "lifecycle.js", "steps.js"], "the three files are emitted");
  for (const [file, text] of js) {
    const loads = uses(text).match(/\b(State|Event|Input|Reading|Expired)\.[A-Z]\w*/g) ?? [];
    t.same(loads, [], `${file}: no enum member is read from its object`);
  }
  t.match(js.get("steps.js")!, /case 2 \/\* Input\.Flow \*\//, "step() compares its input with numbers");
  // Code built without the setting (the tests themselves, tsx) still finds the enums' objects.
  t.match(js.get("lifecycle.js")!, /State\[State\["Idle"\] = 0\] = "Idle"/, "lifecycle.js still defines State at run time");
  t.end();
});
