// GET /: one self-contained HTML page generated from the route table.

import { createHash } from "node:crypto";
import t from "tap";
import { docsApp, request } from "../helpers/app.js";

const scriptOf = (html: string) => /<script>([\s\S]*?)<\/script>/.exec(html)![1]!;
const styleOf = (html: string) => /<style>([\s\S]*?)<\/style>/.exec(html)![1]!;
const hash = (text: string) => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;

t.test("served as HTML with a policy that allows only its own inline script and style", async (t) => {
  const { app } = await docsApp();
  const r = await request(app, "GET", "/");
  t.equal(r.status, 200);
  t.equal(r.headers["content-type"], "text/html; charset=utf-8");
  t.equal(r.headers["x-content-type-options"], "nosniff");
  const csp = r.headers["content-security-policy"]!;
  t.match(csp, /default-src 'none'/);
  t.match(csp, /connect-src 'self'/);
  t.ok(csp.includes(`script-src ${hash(scriptOf(r.body))}`), "the script is allowed by its hash");
  t.ok(csp.includes(`style-src ${hash(styleOf(r.body))}`), "the style is allowed by its hash");
  // The page lists every route of the table with its documentation: about 1 KiB a route (74 since the lab took httpbin's resources).
  t.ok(Buffer.byteLength(r.body) < 96 * 1024, `small: ${Buffer.byteLength(r.body)} bytes`);
  const again = await request(app, "GET", "/", { "If-None-Match": r.headers.etag! });
  t.equal(again.status, 304);
});

t.test("self-contained: nothing is loaded from elsewhere", async (t) => {
  const { app } = await docsApp();
  const html = (await request(app, "GET", "/")).body;
  t.notMatch(html, /\b(?:src|href|action)\s*=\s*["']?(?:https?:)?\/\//i, "no external src, href or action");
  t.notMatch(html, /@import|url\(/i, "no stylesheet imports");
  t.equal((html.match(/<script\b/g) ?? []).length, 2, "the data block and the inline script, nothing else");
  t.notMatch(html, /<script[^>]+src=/);
  t.notMatch(html, /<link[^>]+rel="stylesheet"/);
  t.doesNotThrow(() => new Function(scriptOf(html)), "the script is valid JavaScript");
});

t.test("every route of the table is listed with its method, path and summary", async (t) => {
  const { app } = await docsApp();
  const html = (await request(app, "GET", "/")).body;
  const data = JSON.parse(/<script type="application\/json" id="endpoints">([\s\S]*?)<\/script>/.exec(html)![1]!);
  const routes = app.routes;
  t.equal(data.length, routes.length, "one entry per route");
  routes.forEach((route, i) => {
    t.ok(html.includes(`<code class="m">${route.method}</code></td><td><code class="p">${route.path}</code><div>`), `${route.method} ${route.path} listed`);
    t.match(data[i], { method: route.method, path: route.path, summary: route.summary });
    t.ok(html.includes(`data-i="${i}"`), "with its Try button");
  });
  t.ok(html.includes('<code class="m">UPDATE</code></td><td><code class="p">/api/v1/artigo/:id</code>'), "UPDATE included");
  const update = data.find((e: any) => e.method === "UPDATE");
  t.match(update, { requires: [{ text: "admin token" }], body: { types: ["application/merge-patch+json", "application/json"] }, params: [{ name: "id", example: "1" }] });
  const echo = data.find((e: any) => e.path === "/api/echo");
  t.match(echo, { method: "*", tryMethod: "PURGE" }, "an any-method route starts the form with a custom method");
  t.ok(html.includes('<code class="m">*</code></td><td><code class="p">/api/echo</code><div>'), "listed as *");
  t.match(html, /<code class="p">\/api\/echo<\/code><div>[^<]*(?:<code>[^<]*<\/code>[^<]*)*<span class="tag"[^>]*>any method<\/span>/, "tagged: any method");
});

t.test("accessible structure: a label for every field, real buttons, headings, a live region", async (t) => {
  const { app } = await docsApp();
  const html = (await request(app, "GET", "/")).body;
  t.match(html, /<html lang="en">/);
  const ids = [...html.matchAll(/<(?:input|textarea|select)\b[^>]*\bid="([^"]+)"/g)].map((m) => m[1]!);
  t.ok(ids.length >= 7, `fields: ${ids.join(", ")}`);
  for (const id of ids) t.ok(html.includes(`<label for="${id}"`) || new RegExp(`<label><input[^>]*id="${id}"`).test(html), `#${id} has a label`);
  for (const m of html.matchAll(/<input type="(?:radio|checkbox)"[^>]*>/g)) t.ok(html.includes(`<label>${m[0]}`), "radio and checkbox inputs sit inside their labels");
  t.match(html, /<button id="send" type="submit">Send<\/button>/);
  t.match(html, /<h1>startline<\/h1>/);
  t.match(html, /<main>/);
  t.match(html, /aria-live="polite"/);
});

/** The tags of the row for `method path`, e.g. ["admin token"]. */
function tagsOf(html: string, method: string, path: string): string[] {
  const row = new RegExp(`<tr><td><code class="m">${method.replace("*", "\\*")}</code></td><td><code class="p">${path}</code>.*?</tr>`).exec(html);
  if (row === null) throw new Error(`no row for ${method} ${path}`);
  return [...row[0].matchAll(/<span class="tag"[^>]*>([^<]*)<\/span>/g)].map((m) => m[1]!);
}

t.test("badges say what this server asks: writes need a token only when WRITE_REQUIRES_TOKEN is on", async (t) => {
  const writes: [string, string][] = [["POST", "/api/v1/post/:id"], ["PATCH", "/api/v1/post/:id"], ["DELETE", "/api/v1/post/:id"], ["POST", "/api/v2/facts"]];
  const open = (await request((await docsApp()).app, "GET", "/")).body;
  for (const [method, path] of writes) t.same(tagsOf(open, method, path), [], `${method} ${path}: no badge by default`);
  t.same(tagsOf(open, "UPDATE", "/api/v1/artigo/:id"), ["admin token"], "UPDATE always needs an administrator");
  t.notMatch(open, /token (?:if )?required/, "no token badge anywhere");
  const data = (html: string) =>
    JSON.parse(/<script type="application\/json" id="endpoints">([\s\S]*?)<\/script>/.exec(html)![1]!) as { method: string; path: string; requires: { text: string }[]; needs: string }[];
  t.same(
    data(open).filter((e) => e.requires.length > 0).map((e) => `${e.requires.map((r) => r.text).join()} ${e.method} ${e.path}: ${e.needs}`),
    ["admin token UPDATE /api/v1/artigo/:id: This endpoint needs an administrator's token."],
    "the script is told the same",
  );

  const closed = (await request((await docsApp({ writeRequiresToken: true })).app, "GET", "/")).body;
  for (const [method, path] of writes) t.same(tagsOf(closed, method, path), ["token required"], `${method} ${path}: token required`);
  t.same(tagsOf(closed, "UPDATE", "/api/v1/artigo/:id"), ["admin token"]);
  t.same(tagsOf(closed, "GET", "/api/v1/post/:id"), [], "reads stay open");
  t.same(
    data(closed).filter((e) => e.requires.some((r) => r.text === "token required")).map((e) => `${e.method} ${e.path}`).sort(),
    writes.map(([m, p]) => `${m} ${p}`).sort(),
  );
});

t.test("the page says where an administrator's token comes from", async (t) => {
  const html = (await request((await docsApp()).app, "GET", "/")).body;
  const hint = /<p id="auth-hint"[^>]*>([\s\S]*?)<\/p>/.exec(html)![1]!;
  t.match(hint, /prints one once, at its first start/);
  t.match(hint, /<code>ADMIN_TOKEN<\/code>/);
  t.match(hint, /<code>npm run token -- add --role admin<\/code>/);
  t.match(hint, /docs\/operations\.md/);
  t.match(html, /<input id="auth"[^\n]*aria-describedby="auth-hint"/, "read out with the Authorization field");
});

t.test("the style fits a phone: no fourth column, long paths and field values may break anywhere", async (t) => {
  const html = (await request((await docsApp()).app, "GET", "/")).body;
  const style = styleOf(html);
  t.equal((/<thead><tr>([\s\S]*?)<\/tr><\/thead>/.exec(html)![1]!.match(/<th\b/g) ?? []).length, 3, "method, path with summary, Try");
  t.match(style, /\.p\{overflow-wrap:anywhere\}/);
  t.match(style, /\.fields td code\{overflow-wrap:anywhere\}|\.fields td code[,{][^}]*overflow-wrap:anywhere/);
  t.match(style, /@media \(max-width:40rem\)\{/);
});

t.test("the app that serves this page points its 404 to it; an unknown version gets the versions", async (t) => {
  const { app } = await docsApp();
  const missing = await request(app, "GET", "/nowhere");
  t.equal(missing.status, 404);
  t.match(JSON.parse(missing.body).detail, /GET \/ lists every route/);
  t.match(JSON.parse((await request(app, "GET", "/api/v9/x")).body).type, "/problems/unknown-version");
});
