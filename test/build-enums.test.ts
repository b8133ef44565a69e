// The build (tsconfig.build.json) inlines a const enum's members as numbers
// wherever they are used: the connection's step function and its callers
// compare them many times a request, and as loads from the enum's object
// they cost a few hundred instructions of every status request
// (docs/benchmarks.md). Nothing else would notice the setting gone, so this
// compiles the connection's files as the build does and reads what it emits.

import path from "node:path";
import t from "tap";
import ts from "typescript";
import { ROOT } from "./helpers/root.js";

/** What the build emits for the connection's state files, by file name. */
function emitted(): Map<string, string> {
  const config = ts.getParsedCommandLineOfConfigFile(path.join(ROOT, "tsconfig.build.json"), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
  if (config === undefined) throw new Error("tsconfig.build.json could not be read");
  const roots = ["steps.ts", "lifecycle.ts", "connection.ts"].map((name) => path.join(ROOT, "src/http/connection", name));
  const options = { ...config.options, composite: false, incremental: false, declaration: false, sourceMap: false, noEmit: false };
  const program = ts.createProgram(roots, options);
  const out = new Map<string, string>();
  for (const root of roots) {
    program.emit(program.getSourceFile(root), (file, text) => {
      if (file.endsWith(".js")) out.set(path.basename(file), text);
    });
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
