// The two tiers of tests: `npm run test:fast` runs every test file except
// those test/external.json lists; `npm test` runs them all. A file belongs in
// that list exactly when it needs a program from outside the repository, and
// tests reach such a program only through the modules below. This test reads
// every test file's imports, and the imports of the files they import, and
// fails when the list and the imports disagree: a new PostgreSQL test cannot
// slip into the fast tier, and a list entry cannot outlive its reason. And
// since both tiers run *.test.ts files alone, no other file may hold tests.

import t from "tap";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { ROOT } from "./helpers/root.js";



/** The ways to an external program: a module specifier (package, or repository file) and what it brings in. */
const GATEWAYS: readonly { readonly module: string; readonly program: string }[] = [
  { module: "playwright-core", program: "Chromium" },
  { module: "autocannon", program: "a load generator" },
  { module: "test/helpers/postgres.ts", program: "PostgreSQL" },
  { module: "test/helpers/nginx.ts", program: "nginx" },
  { module: "test/helpers/haproxy.ts", program: "HAProxy" },
];

const external = JSON.parse(readFileSync(path.join(ROOT, "test", "external.json"), "utf8")) as Record<string, string>;

/** Specifiers of static and dynamic imports, and of require() calls. */
function specifiers(source: string): string[] {
  const found: string[] = [];
  for (const m of source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)["']([^"'\n]+)["']/g)) found.push(m[1]!);
  return found;
}

/** A relative specifier as the repository file it names (".js" in a specifier is the ".ts" source). */
function resolve(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const target = path.join(path.dirname(from), specifier);
  for (const candidate of [target.replace(/\.js$/, ".ts"), target]) {
    try {
      readFileSync(path.join(ROOT, candidate));
      return candidate;
    } catch {
      // not this one
    }
  }
  return undefined;
}

/**
 * A file's own imports, read once: the programs it names and the repository files it imports. Every test
 * file reaches most of src/ through its imports; read again for each one, the same few hundred files were
 * read and scanned a hundred times over (a second of CPU).
 */
const imports = new Map<string, { readonly programs: readonly string[]; readonly locals: readonly string[] }>();
function importsOf(file: string): { readonly programs: readonly string[]; readonly locals: readonly string[] } {
  let found = imports.get(file);
  if (found === undefined) {
    const programs: string[] = [];
    const locals: string[] = [];
    for (const gateway of GATEWAYS) if (gateway.module === file) programs.push(gateway.program);
    for (const specifier of specifiers(readFileSync(path.join(ROOT, file), "utf8"))) {
      for (const gateway of GATEWAYS) if (gateway.module === specifier) programs.push(gateway.program);
      const local = resolve(file, specifier);
      if (local !== undefined) locals.push(local);
    }
    imports.set(file, (found = { programs, locals }));
  }
  return found;
}

/** The programs a file needs, through its imports and theirs. */
function programsOf(file: string, seen = new Set<string>()): Set<string> {
  const programs = new Set<string>();
  if (seen.has(file)) return programs;
  seen.add(file);
  const { programs: own, locals } = importsOf(file);
  for (const program of own) programs.add(program);
  for (const local of locals) for (const program of programsOf(local, seen)) programs.add(program);
  return programs;
}

function testFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(relative);
    return entry.name.endsWith(".test.ts") ? [relative] : [];
  });
}

const files = testFiles("test");

/** Every TypeScript file under `dir` that is not a test file: helpers, suites, fixtures. */
function otherFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return otherFiles(relative);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [relative] : [];
  });
}

/** Whether `source` takes a value from tap (its test runner), not only its types. */
function runsTap(source: string): boolean {
  return /\bimport\s*\(\s*["']tap["']\s*\)|\bimport\s+(?!type\b)[^;]*?\bfrom\s*["']tap["']/.test(source);
}

t.test("the reader of imports finds what it must", async (t) => {
  t.same([...programsOf("test/scaling/nginx.test.ts")].sort(), ["PostgreSQL", "nginx"], "through the helpers");
  t.same([...programsOf("test/docs/browser.test.ts")], ["Chromium"], "a package import");
  t.same([...programsOf("test/parser/cases.test.ts")], [], "nothing for a parser test");
  t.same(specifiers('import a from "x";\nimport type { B } from "./y.js";\nconst c = require("z");\nawait import("./w.js");'), ["x", "./y.js", "z", "./w.js"]);
});

t.test("test/external.json lists exactly the test files that need an external program", async (t) => {
  for (const file of files) {
    const programs = [...programsOf(file)];
    if (programs.length > 0) t.ok(file in external, `${file} needs ${programs.join(" and ")}: list it in test/external.json`);
    else t.notOk(file in external, `${file} needs no external program: remove it from test/external.json`);
  }
  for (const listed of Object.keys(external)) t.ok(files.includes(listed), `${listed} (listed in test/external.json) exists`);
});

t.test("npm test runs every tier; npm run test:fast runs the list's complement", async (t) => {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string>; tap: { include: string[] } };
  t.same(pkg.tap.include, ["test/**/*.test.ts"], "tap's default set, for `npx tap`, is every test file");
  t.match(pkg.scripts.test, /&& node test\/run\.mjs --all$/, "npm test runs every test file");
  t.match(pkg.scripts["test:fast"], /^node test\/run\.mjs$/);
  const runner = readFileSync(path.join(ROOT, "test", "run.mjs"), "utf8");
  t.match(runner, /external\.json/, "test/run.mjs excludes what the list names");
  t.match(runner, /testFiles\("test"\)/, "and finds the files under test/ itself, every *.test.ts");
});

t.test("only test files run tests: tap runs *.test.ts files, and nothing else", async (t) => {
  t.ok(runsTap('import t from "tap";'), "the reader sees a default import");
  t.ok(runsTap('const { default: tap } = await import("tap");'), "and a dynamic one");
  t.notOk(runsTap('import type { Test } from "tap";'), "types only are not running tests");
  // A helper that starts tests of its own (when run by hand, say) has them skipped by npm test without a word.
  for (const file of otherFiles("test")) {
    t.notOk(runsTap(readFileSync(path.join(ROOT, file), "utf8")), `${file} takes only tap's types (tests it held would never run)`);
  }
});
