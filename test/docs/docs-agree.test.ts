// The docs against the server, for what a reader acts on and a check can
// read: every `/api/...` path the docs name is served (or the line says it
// is a 404), the endpoint table's methods and request body types are the
// route table's, the page's size is what docs/wire-view.md says, and the
// packages .ci installs are the ones docs/testing.md names. Checks of
// meaning, not of numbers copied into a list that would drift.

import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import t from "tap";
import { ANY_METHOD } from "../../src/router/route.js";
import { ROOT } from "../helpers/checkout.js";
import { docsApp, request } from "../helpers/app.js";

const DOCS = path.join(ROOT, "docs");
const { app } = await docsApp();

/** A route path as a pattern: `:name` one segment, a last `*name` the rest. */
const patterns = app.routes.map((route) => ({
  route,
  re: new RegExp(`^${route.path.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/:[A-Za-z_]+/g, "[^/]+").replace(/\*[A-Za-z_]+$/, ".*")}$`),
}));
/** The routes a path, written as in the docs (a concrete path or the route's own `:id` form), reaches. */
const served = (p: string) => patterns.filter(({ route, re }) => route.path === p || re.test(p)).map(({ route }) => route);

t.test("every /api/ path the docs name is served, or the line says it is a 404", async (t) => {
  let named = 0;
  for (const file of (await readdir(DOCS)).filter((f) => f.endsWith(".md"))) {
    const lines = (await readFile(path.join(DOCS, file), "utf8")).split("\n");
    lines.forEach((line, i) => {
      for (const m of line.matchAll(/`(?:[A-Za-z]+ )?(\/api\/[^`\s]*)`/g)) {
        const p = m[1]!.replace(/[?#].*$/, "");
        // A placeholder (`/api/lab/...`, `<id>`, `{id}`, `openapi.*`) names a family, not a path.
        if (/\.\.\.|[<{*]/.test(p)) continue;
        named++;
        if (served(p).length > 0) continue;
        // A prefix (`/api/`), or a path named to say that it is not served.
        if (p.endsWith("/") && patterns.some(({ route }) => route.path.startsWith(p))) continue;
        t.match(line, /\b404\b/, `docs/${file}:${i + 1} names ${p}, which no route serves, without saying it is a 404`);
      }
    });
  }
  t.ok(named > 50, `the docs name ${named} paths`);
});

t.test("docs/api.md's endpoint table: each method and path is served, each request body type taken", async (t) => {
  const text = await readFile(path.join(DOCS, "api.md"), "utf8");
  const table = text.slice(text.indexOf("| # | Method | Path | Request body | Success |"));
  const lines = table.split("\n").slice(2);
  const rows = lines.slice(0, lines.findIndex((l) => !l.startsWith("|")));
  t.ok(rows.length >= 13, `${rows.length} rows`);
  for (const row of rows) {
    const [, id, method, paths, body] = row.split("|").map((c) => c.trim());
    for (const p of [...paths!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!)) {
      if (p.includes("...")) continue;
      const routes = served(p);
      const methods = method === "any" ? [ANY_METHOD] : method!.split(/,\s*/);
      for (const m of methods) t.ok(routes.some((r) => r.method === m), `row ${id}: ${m} ${p} is served`);
      // A media type the row says the body is (not one a GET's Content-Type uses to choose a representation).
      for (const type of [...body!.matchAll(/(?<!Content-Type: )`([a-z]+\/[a-z0-9.+-]+)`/g)].map((mm) => mm[1]!)) {
        const takes = routes.filter((r) => methods.includes(r.method)).flatMap((r) => r.request?.mediaTypes ?? []);
        t.ok(takes.includes(type), `row ${id}: ${p} takes ${type} (it takes ${takes.join(", ") || "no body"})`);
      }
    }
  }
});

t.test("the page is the size docs/wire-view.md says, within a tenth", async (t) => {
  const page = await request(app, "GET", "/");
  t.equal(page.status, 200);
  const said = /about\s+(\d+)\s+KB/.exec(await readFile(path.join(DOCS, "wire-view.md"), "utf8"));
  t.ok(said, "docs/wire-view.md gives the page's size in KB");
  const kb = Buffer.byteLength(page.body, "latin1") / 1024;
  t.ok(Math.abs(kb - Number(said![1])) <= kb / 10, `the page is ${kb.toFixed(1)} KB; the docs say about ${said![1]} KB`);
});

t.test("docs/testing.md names exactly the Debian packages .ci/install-system-packages installs", async (t) => {
  const script = await readFile(path.join(ROOT, ".ci", "install-system-packages"), "utf8");
  const installed = [...script.matchAll(/missing\+=\(([a-z0-9-]+)\)/g)].map((m) => m[1]!).sort();
  t.ok(installed.length >= 4, `the script installs ${installed.join(", ")}`);
  const testing = await readFile(path.join(DOCS, "testing.md"), "utf8");
  const said = /`\.ci\/install-system-packages`: ([^)]*)\)/.exec(testing);
  t.ok(said, "docs/testing.md lists them after the script's name");
  const names = said![1]!.split(/,\s*(?:and\s+)?|\s+and\s+/).map((n) => n.trim().toLowerCase()).sort();
  t.strictSame(names, installed, `docs/testing.md says: ${said![1]}`);
});
