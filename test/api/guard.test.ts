// Authorization comes from the route table's declarations, for every route
// that declares it: walk the table and knock on each door without a token.

import t from "tap";
import { docsApp, request } from "../helpers/app.js";

/** A concrete target for a route path: parameters filled with a seeded id. */
const concrete = (path: string) => path.replace(/:[^/]+/g, "1").replace(/\*[^/]+$/, "x");

for (const writeRequiresToken of [false, true]) {
  t.test(`every route that declares auth answers 401 without a token (WRITE_REQUIRES_TOKEN=${writeRequiresToken})`, async (t) => {
    const { app } = await docsApp({ writeRequiresToken });
    const declared = app.routes.filter((r) => r.auth === "admin" || (r.auth === "token-if-configured" && writeRequiresToken));
    t.ok(declared.length >= (writeRequiresToken ? 5 : 1), `${declared.length} guarded routes`);
    for (const route of declared) {
      const r = await request(app, route.method, concrete(route.path), { "Content-Type": route.request?.mediaTypes[0] ?? "application/json" }, route.request === undefined ? undefined : "{}");
      t.equal(r.status, 401, `${route.method} ${route.path}`);
      t.match(r.headers["www-authenticate"], /^Bearer/);
    }
    // Open routes stay open.
    const open = app.routes.filter((r) => r.auth === "token-if-configured" && !writeRequiresToken);
    for (const route of open) {
      const r = await request(app, route.method, concrete(route.path), { "Content-Type": route.request?.mediaTypes[0] ?? "application/json" }, route.request === undefined ? undefined : "{}");
      t.not(r.status, 401, `${route.method} ${route.path} needs no token by default`);
    }
  });
}
