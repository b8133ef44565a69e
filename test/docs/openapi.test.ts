// GET /api/openapi.json and .yaml: generated from the route table, every route
// in it, UPDATE under additionalOperations (OpenAPI 3.2), schemas that compile
// as JSON Schema 2020-12, and answers of the real server that match them.

import assert from "node:assert/strict";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { load } from "js-yaml";
import t from "tap";
import { documentedMethods, operationKey, pathParams, templatePath } from "../../src/docs/openapi.js";
import { ADMIN, docsApp, request } from "../helpers/app.js";
import { readFileSync } from "node:fs";
import path from "node:path";
import { ROOT } from "../helpers/root.js";

const FIXED = ["get", "put", "post", "delete", "options", "head", "patch", "trace", "query"];
const BASE = "urn:startline:openapi";

async function documentOf(app: Awaited<ReturnType<typeof docsApp>>["app"]): Promise<any> {
  const r = await request(app, "GET", "/api/openapi.json");
  return JSON.parse(r.body);
}

/** The document's schemas, with "#/components/schemas/X" references made absolute, loaded into one Ajv. */
function schemaChecker(doc: any) {
  const rewrite = (value: unknown): any => JSON.parse(JSON.stringify(value).replaceAll('"#/components/schemas/', `"${BASE}#/$defs/`));
  const ajv = new Ajv2020({
    strict: true,
    allErrors: true,
    formats: { "date-time": /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z$/, "uri-reference": true },
  });
  ajv.addSchema({ $id: BASE, $defs: rewrite(doc.components.schemas) });
  // The same schema is written at many places (a Problem under every operation's default answer): each
  // text is compiled once, and each place gets what that text compiled to, or its error again.
  const compiled = new Map<string, ValidateFunction>();
  const compile = (schema: unknown): ValidateFunction => {
    const text = JSON.stringify(rewrite(schema));
    let check = compiled.get(text);
    if (check === undefined) compiled.set(text, (check = ajv.compile(JSON.parse(text))));
    return check;
  };
  return { ajv, compile };
}

function operation(doc: any, method: string, template: string): any {
  const item = doc.paths[template];
  const [field, extra] = operationKey(method);
  return extra === undefined ? item?.[field!] : item?.[field!]?.[extra];
}

t.test("served as JSON and YAML, the same document, with ETags", async (t) => {
  const { app } = await docsApp();
  const json = await request(app, "GET", "/api/openapi.json");
  t.equal(json.status, 200);
  t.equal(json.headers["content-type"], "application/json");
  const yaml = await request(app, "GET", "/api/openapi.yaml");
  t.equal(yaml.status, 200);
  t.equal(yaml.headers["content-type"], "application/yaml");
  // Compared by node:assert, not t.same: tap's comparison formats both sides of this 860 KB document as it
  // goes (0.2 s of CPU, where deepStrictEqual takes 15 ms), and it is no less strict.
  t.doesNotThrow(() => assert.deepStrictEqual(load(yaml.body), JSON.parse(json.body)), "the YAML parses to the same document");
  t.notMatch(yaml.body, /(^|\s)[&*][A-Za-z0-9]/m, "no YAML anchors or aliases");
  const again = await request(app, "GET", "/api/openapi.json", { "If-None-Match": json.headers.etag! });
  t.equal(again.status, 304);
  t.equal(again.body, "");
  t.equal((await request(app, "HEAD", "/api/openapi.yaml")).headers["content-length"], yaml.headers["content-length"], "HEAD works like GET");
});

t.test("every route of the table is an operation, and nothing else is", async (t) => {
  const { app } = await docsApp();
  const doc = await documentOf(app);
  t.equal(doc.openapi, "3.2.0");
  t.equal(doc.info.title, "startline");
  t.equal(doc.info.version, (JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string }).version, "the server's version, from package.json");
  const routes = app.routes;
  t.ok(routes.length >= 19, `the table has ${routes.length} routes`);
  for (const route of routes) for (const method of documentedMethods(route)) {
    const op = operation(doc, method, templatePath(route));
    if (!t.ok(op, `${method} ${route.path} is documented`)) continue;
    t.equal(op.summary, route.summary);
    t.ok(op.responses.default, "default (problem+json) response");
    for (const [status, response] of Object.entries<any>(op.responses)) {
      t.type(response.description, "string", `${route.method} ${route.path} ${status} has a description`);
      if (Number(status) >= 400 || status === "default") t.ok(response.content["application/problem+json"], `${status} is problem+json`);
    }
    const names = pathParams(route);
    t.same(
      (op.parameters ?? []).map((p: any) => [p.name, p.in, p.required]),
      [...names.map((n) => [n, "path", true]), ...Object.entries(route.query ?? {}).map(([n, q]) => [n, "query", q.required === true])],
      `${route.path}: every path parameter declared, then the query parameters, required only where the route says so`,
    );
    if (route.request !== undefined) t.same(Object.keys(op.requestBody.content), route.request.mediaTypes, "request media types");
    if (route.auth === "admin") t.same(op.security, [{ bearer: [] }], "admin routes need the bearer scheme");
  }
  let operations = 0;
  const ids = new Set<string>();
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const field of Object.keys(item)) {
      t.ok(FIXED.includes(field) || field === "additionalOperations", `${path}: ${field} is a Path Item field`);
    }
    const ops = [...FIXED.filter((f) => item[f] !== undefined).map((f) => item[f]), ...Object.values<any>(item.additionalOperations ?? {})];
    for (const key of Object.keys(item.additionalOperations ?? {})) {
      t.notOk(FIXED.includes(key.toLowerCase()), `additionalOperations holds no standard method (${key})`);
    }
    for (const op of ops) {
      t.notOk(ids.has(op.operationId), `operationId ${op.operationId} is unique`);
      ids.add(op.operationId);
    }
    operations += ops.length;
  }
  t.equal(operations, routes.reduce((n, route) => n + documentedMethods(route).length, 0), "one operation per route (per advertised method for an any-method route), no more");
});

t.test("UPDATE is under additionalOperations, as OpenAPI 3.2 puts a method without a fixed field", async (t) => {
  const { app } = await docsApp();
  const doc = await documentOf(app);
  const item = doc.paths["/api/v1/artigo/{id}"];
  t.ok(item.get, "GET has its fixed field");
  t.notOk(item.update ?? item.UPDATE, "no made-up fixed field");
  const update = item.additionalOperations?.UPDATE;
  t.ok(update, "additionalOperations.UPDATE, keyed as the method is sent");
  t.same(Object.keys(update.requestBody.content), ["application/merge-patch+json", "application/json"]);
  t.ok(update.responses["401"], "401 documented");
  t.ok(update.responses["200"].content["application/json"].schema.$ref, "200 refers to the Article schema");
  t.same(update.security, [{ bearer: [] }]);
  t.ok(doc.components.securitySchemes.bearer);
});

t.test("the echo, which serves any method, is written under each common method and says any token works", async (t) => {
  const { app } = await docsApp();
  const doc = await documentOf(app);
  for (const template of ["/api/echo", "/api/echo/{rest}"]) {
    const item = doc.paths[template];
    t.same(Object.keys(item).sort(), ["delete", "get", "patch", "post", "put"], `${template}: the methods Allow advertises, but HEAD and OPTIONS`);
    t.notOk(item.additionalOperations, "no made-up method named *");
    t.match(item.get.description, /Any method token is served here/);
    t.ok(item.get.responses["200"].content["application/yaml"], "JSON or YAML");
  }
  const rest = doc.paths["/api/echo/{rest}"].post.parameters;
  t.match(rest, [{ name: "rest", in: "path", required: true, description: /any number of them/ }]);
});

t.test("WRITE_REQUIRES_TOKEN is reflected in the writes' security", async (t) => {
  const open = await documentOf((await docsApp()).app);
  const closed = await documentOf((await docsApp({ writeRequiresToken: true })).app);
  t.notOk(open.paths["/api/v1/post/{id}"].post.security, "open by default");
  t.same(closed.paths["/api/v1/post/{id}"].post.security, [{ bearer: [] }], "token required when configured");
  t.same(closed.paths["/api/v2/facts"].post.security, [{ bearer: [] }]);
  t.notOk(closed.paths["/api/v1/post/{id}"].get.security, "reads stay open");
});

t.test("every schema in the document compiles as JSON Schema 2020-12 (ajv, strict)", async (t) => {
  const { app } = await docsApp();
  const doc = await documentOf(app);
  const { ajv, compile } = schemaChecker(doc);
  const names = Object.keys(doc.components.schemas);
  t.ok(names.includes("Post") && names.includes("Problem") && names.includes("WireView"), names.join(", "));
  for (const name of names) t.doesNotThrow(() => ajv.getSchema(`${BASE}#/$defs/${name}`), `components.schemas.${name}`);
  let inline = 0;
  const visit = (value: unknown, where: string): void => {
    if (value === null || typeof value !== "object") return;
    for (const [key, v] of Object.entries(value)) {
      if (key === "schema") {
        inline++;
        t.doesNotThrow(() => compile(v), `${where}/schema`);
      } else visit(v, `${where}/${key}`);
    }
  };
  visit(doc.paths, "#/paths");
  t.ok(inline > 50, `${inline} schemas in operations compiled`);
});

t.test("the documented schemas describe what the server really sends", async (t) => {
  const { app } = await docsApp();
  const doc = await documentOf(app);
  const { compile } = schemaChecker(doc);
  const admin = { Authorization: `Bearer ${ADMIN}` };
  const json = { "Content-Type": "application/json" };
  const cases: [method: string, template: string, target: string, headers?: Record<string, string>, body?: string][] = [
    ["GET", "/api/v1/status", "/api/v1/status"],
    ["GET", "/api/v1-1/status", "/api/v1-1/status"],
    ["GET", "/api/v2/status", "/api/v2/status"],
    ["POST", "/api/v1/post/{id}", "/api/v1/post/hello", json, '{"title": "Hello", "body": "First.", "tags": ["a"]}'],
    ["POST", "/api/v1/post/{id}", "/api/v1/post/hello", json, '{"title": "Hello", "body": "First."}'],
    ["POST", "/api/v1/post/{id}", "/api/v1/post/other", json, '{"title": ""}'],
    ["GET", "/api/v1/post/{id}", "/api/v1/post/hello"],
    ["PATCH", "/api/v1/post/{id}", "/api/v1/post/hello", { "Content-Type": "application/merge-patch+json" }, '{"tags": null, "author": "Ana"}'],
    ["GET", "/api/v1/posts", "/api/v1/posts"],
    ["GET", "/api/v1/post", "/api/v1/post", { Accept: "application/yaml" }],
    ["GET", "/api/v1/posts", "/api/v1/posts", { Accept: "text/html" }],
    ["DELETE", "/api/v1/post/{id}", "/api/v1/post/hello"],
    ["DELETE", "/api/v1/post/{id}", "/api/v1/post/hello"],
    ["GET", "/api/v1/artigo/{id}", "/api/v1/artigo/1"],
    ["UPDATE", "/api/v1/artigo/{id}", "/api/v1/artigo/1", json, '{"title": "T"}'],
    ["UPDATE", "/api/v1/artigo/{id}", "/api/v1/artigo/1", { ...json, ...admin }, '{"title": "T"}'],
    ["GET", "/api/v2/facts/random", "/api/v2/facts/random"],
    ["GET", "/api/v2/facts", "/api/v2/facts"],
    ["GET", "/api/v2/facts", "/api/v2/facts?limit=2"],
    ["GET", "/api/v2/facts", "/api/v2/facts?limit=1001", { Accept: "application/yaml" }],
    ["GET", "/api/v2/facts/{id}", "/api/v2/facts/1"],
    ["POST", "/api/v2/facts", "/api/v2/facts", { "Content-Type": "text/plain" }, "Chunked framing is defined in RFC 9112 section 7.1."],
    ["POST", "/api/v2/facts", "/api/v2/facts", json, "{}"],
    ["GET", "/api/usage", "/api/usage"],
    ["GET", "/api/echo", "/api/echo?x=1"],
    ["POST", "/api/echo/{rest}", "/api/echo/a/b", { "Content-Type": "application/octet-stream" }, "\u00ff\u0000"],
    ["PUT", "/api/echo/{rest}", "/api/echo/a", { Accept: "application/yaml" }, "text"],
    ["DELETE", "/api/echo", "/api/echo", { Accept: "text/html" }],
    ["POST", "/api/wire", "/api/wire", { "Content-Type": "message/http" }, "GET /api/v2/status HTTP/1.1\r\nHost: x\r\n\r\n"],
    ["POST", "/api/wire", "/api/wire", { "Content-Type": "message/http" }, "GET /api/v2/status HTTP/1.1\r\nHost : x\r\n\r\n"],
    ["POST", "/api/wire", "/api/wire", { "Content-Type": "text/plain" }, "GET /api/v2/status HTTP/1.1\r\nHost: x\r\n\r\n"],
    ["POST", "/api/wire", "/api/wire", { "Content-Type": "message/http", Origin: "https://evil.example" }, "GET /api/v2/status HTTP/1.1\r\nHost: x\r\n\r\n"],
  ];
  for (const [method, template, target, headers, body] of cases) {
    const r = await request(app, method, target, headers, body);
    const op = operation(doc, method, template);
    const documented = op.responses[String(r.status)];
    if (!t.ok(documented, `${method} ${target} answered ${r.status}, which is documented`)) continue;
    const type = (r.headers["content-type"] ?? "").split(";")[0]!;
    const media = documented.content?.[type];
    if (!t.ok(media, `${method} ${target} ${r.status}: ${type} is documented`)) continue;
    if (media.schema === undefined) continue;
    const value = type.endsWith("yaml") ? load(r.body) : JSON.parse(r.body);
    const check = compile(media.schema);
    t.ok(check(value), `${method} ${target} ${r.status} matches its schema${check.errors ? `: ${JSON.stringify(check.errors)}` : ""}`);
    for (const name of Object.keys(documented.headers ?? {})) {
      if (name === "Sunset") continue; // only when V1_SUNSET is set
      if (name === "Link" && /^\/api\/v\d\/(?:post|posts|facts)$/.test(template) && !target.includes("limit=")) continue; // lists: only on a page with more after it
      if (name === "Transfer-Encoding" && /^\/api\/v\d\/(?:post|posts|facts)$/.test(template)) continue; // lists: only when streamed (see LIST_HEADERS)
      t.ok(r.headers[name.toLowerCase()] !== undefined, `${method} ${target} ${r.status} carries the documented ${name}`);
    }
  }
});
