// What every route declares about its callers is what it does. The test walks
// the table as served (the API's routes, the docs' and the echo's alike) and
// knocks on each door with no token, a user's token and an administrator's:
// a route declared admin-only answers 401 to the first two, one that needs a
// token (WRITE_REQUIRES_TOKEN) to the first, and an open one to none. The
// OpenAPI document's security and 401 come from the same declaration.

import t from "tap";
import type { App } from "../../src/app.js";
import { hashToken } from "../../src/policies/auth.js";
import { docsRoutes } from "../../src/docs/routes.js";
import { inject } from "../../src/http/connection/inject.js";
import { accessPolicy, type AccessDeclared } from "../../src/policies/access.js";
import { declaredBody } from "../../src/router/body-policy.js";
import type { Route } from "../../src/router/route.js";
import { ANY_METHOD } from "../../src/router/route.js";
import { createRouter } from "../../src/router/router.js";
import { createMemoryStore } from "../../src/store/memory.js";
import { ADMIN, docsApp, request, USER, wire } from "../helpers/app.js";

/**
 * A concrete target for a route path: parameters filled with a seeded id, but no wait (the lab's delay
 * of :seconds, and its drip's default two seconds): who may call is decided before any of it, and a test
 * that knocks on every door twice over waited out six seconds a time.
 */
const concrete = (path: string) =>
  path === "/api/lab/drip" ? `${path}?duration=0` : path.replace(/:seconds\b/, "0").replace(/:[^/]+/g, "1").replace(/\*[^/]+$/, "x");

type Expect = "admin" | "token" | "open";

function expected(route: Route & AccessDeclared, writeRequiresToken: boolean): Expect {
  if (route.auth === "admin") return "admin";
  if (route.auth === "token-if-configured" && writeRequiresToken) return "token";
  return "open";
}

async function knock(app: App, route: Route, method: string, token?: string) {
  const headers: Record<string, string> = token === undefined ? {} : { Authorization: `Bearer ${token}` };
  if (route.request !== undefined) headers["Content-Type"] = route.request.mediaTypes[0]!;
  return request(app, method, concrete(route.path), headers, route.request === undefined ? undefined : (route.request.example ?? "{}"));
}

for (const writeRequiresToken of [false, true]) {
  t.test(`every route does what it declares about its callers (WRITE_REQUIRES_TOKEN=${writeRequiresToken})`, async (t) => {
    const { app } = await docsApp({ writeRequiresToken });
    const doc = JSON.parse((await request(app, "GET", "/api/openapi.json")).body);
    const seen: Record<Expect, number> = { admin: 0, token: 0, open: 0 };
    t.ok(app.routes.some((r) => r.path === "/"), "the docs' routes are in the table walked");
    t.ok(app.routes.some((r) => r.path === "/api/echo"), "the echo's too");
    for (const route of app.routes) {
      const want = expected(route, writeRequiresToken);
      seen[want]++;
      for (const method of route.method === ANY_METHOD ? ["PURGE", "GET"] : [route.method]) {
        const name = `${method} ${route.path} (${want})`;
        const anonymous = await knock(app, route, method);
        if (want === "open") {
          // The lab's authentication resources answer 401 as their subject (their own challenge, in their own realm), never the server's.
          const own = route.responses?.[401] !== undefined && route.path.startsWith("/api/lab/");
          if (own) t.notMatch(anonymous.headers["www-authenticate"] ?? "", /realm="startline"/, `${name}: the resource's own challenge, not the server's`);
          else t.not(anonymous.status, 401, `${name}: open without a token`);
          continue;
        }
        t.equal(anonymous.status, 401, `${name}: 401 without a token`);
        t.match(anonymous.headers["www-authenticate"], /^Bearer realm="startline"$/, `${name}: the challenge`);
        const user = await knock(app, route, method, USER);
        if (want === "admin") {
          t.equal(user.status, 401, `${name}: 401 with a user's token`);
          t.match(user.headers["www-authenticate"], /error="insufficient_scope"/);
        } else t.not(user.status, 401, `${name}: a user's token will do`);
        t.not((await knock(app, route, method, ADMIN)).status, 401, `${name}: an administrator's token will do`);
      }
      // The document says the same, from the same declaration.
      const template = route.path.replace(/\/[:*]([^/]+)/g, "/{$1}");
      const item = doc.paths[template];
      const ops = route.method === ANY_METHOD ? [item.get] : [item[route.method.toLowerCase()] ?? item.additionalOperations?.[route.method]];
      for (const op of ops) {
        t.same(op.security, want === "open" ? undefined : [{ bearer: [] }], `${route.method} ${route.path}: security in the document`);
        const ownChallenge = route.responses?.[401] !== undefined && route.path.startsWith("/api/lab/");
        t.equal(op.responses["401"] !== undefined, want !== "open" || ownChallenge, `${route.method} ${route.path}: a 401 documented exactly when one is sent`);
      }
    }
    t.ok(seen.admin >= 1, `${seen.admin} admin-only routes`);
    t.equal(seen.token, writeRequiresToken ? 4 : 0, `${seen.token} routes that need a token`);
  });
}

t.test("a request run through the wire view meets the same policy", async (t) => {
  const { app } = await docsApp();
  const { status, body } = await wire(app, 'UPDATE /api/v1/artigo/1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/merge-patch+json\r\nContent-Length: 2\r\n\r\n{}');
  t.equal(status, 200);
  t.match(JSON.stringify(body), /401/, "the inner request is refused without a token");
});

t.test("a route added after the API's (the docs' page) declared admin-only is enforced like any other", async (t) => {
  const store = createMemoryStore();
  await store.tokens.add(hashToken(ADMIN), "admin");
  const docs = docsRoutes({});
  const routes: (Route & AccessDeclared)[] = docs.routes.map((r) => ({ ...r, auth: "admin" as const }));
  const router = createRouter(routes, { policies: [declaredBody, accessPolicy({ tokens: store.tokens, writeRequiresToken: false })] });
  docs.publish(router.routes);
  const get = async (auth?: string) =>
    (await inject(router, `GET /api/openapi.json HTTP/1.1\r\nHost: x\r\n${auth === undefined ? "" : `Authorization: Bearer ${auth}\r\n`}Connection: close\r\n\r\n`)).output.toString("latin1");
  t.match(await get(), /^HTTP\/1\.1 401 /);
  t.match(await get(ADMIN), /^HTTP\/1\.1 200 /);
  const doc = JSON.parse((await get(ADMIN)).split("\r\n\r\n")[1]!);
  t.same(doc.paths["/"].get.security, [{ bearer: [] }], "and documented as such");
});
