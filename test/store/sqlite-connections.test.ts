// Two connections to one SQLite file, in one process, each behind an app of
// its own: what two workers share, checked without starting any (the
// two-worker race tests in test/scaling/ check it across processes). A token
// revoked through one is refused through the other at once; merge patches
// through both, each changing its own field, lose neither field; a write
// through one is what the other reads next, its ETag included.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import t, { type Test } from "tap";
import { createApp } from "../../src/app.js";
import { hashToken } from "../../src/policies/auth.js";
import { seed } from "../../src/store/seed.js";
import { createSqliteStore } from "../../src/store/sqlite.js";
import { request } from "../helpers/app.js";

const dir = mkdtempSync(path.join(tmpdir(), "startline-connections-"));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

async function twoApps(t: Test) {
  const file = path.join(dir, `db-${++n}.sqlite`);
  const a = createSqliteStore(file);
  await seed(a);
  const b = createSqliteStore(file);
  t.teardown(async () => {
    await a.close();
    await b.close();
  });
  return { a, b, appA: createApp({ store: a }), appB: createApp({ store: b }) };
}

const PATCH = { "Content-Type": "application/merge-patch+json" };

t.test("a token revoked through one connection is refused through the other, at once", async (t) => {
  const { a, appB } = await twoApps(t);
  const token = "revoked-in-process-0123456789";
  const added = await a.tokens.add(hashToken(token), "admin");
  t.equal(added.kind, "created");
  const update = () => request(appB, "UPDATE", "/api/v1/artigo/1", { ...PATCH, Authorization: `Bearer ${token}` }, '{"title":"By the admin"}');
  t.equal((await update()).status, 200, "granted through the other connection");
  const record = (await a.tokens.list()).find((r) => r.hash === hashToken(token))!;
  t.ok(await a.tokens.revoke({ id: record.id }), "revoked through the first");
  const refused = await update();
  t.equal(refused.status, 401, "the very next request through the second is refused");
  t.match(refused.headers["www-authenticate"], /error="invalid_token"/);
});

t.test("merge patches through both connections, each to its own field, lose neither", async (t) => {
  const { a, appA, appB } = await twoApps(t);
  await a.posts.create({ id: "shared", title: "t0", body: "b0" });
  for (let i = 1; i <= 20; i++) {
    // Both at once: each is a read, a merge and a write in one transaction, so neither writes back a stale copy of the other's field.
    const [ra, rb] = await Promise.all([
      request(appA, "PATCH", "/api/v1/post/shared", PATCH, JSON.stringify({ title: `t${i}` })),
      request(appB, "PATCH", "/api/v1/post/shared", PATCH, JSON.stringify({ body: `b${i}` })),
    ]);
    t.equal(ra.status, 200);
    t.equal(rb.status, 200);
    for (const [name, app] of [["first", appA], ["second", appB]] as const) {
      const now = JSON.parse((await request(app, "GET", "/api/v1/post/shared")).body) as { title: string; body: string };
      if (now.title !== `t${i}` || now.body !== `b${i}`) {
        t.fail(`round ${i}, read through the ${name}: ${now.title}, ${now.body}`);
        return;
      }
    }
  }
  t.pass("after 20 rounds, every read through either connection shows both fields' latest values");
});

t.test("a write through one connection is what the other reads next, and its old ETag no longer validates there", async (t) => {
  const { a, appA, appB } = await twoApps(t);
  await a.posts.create({ id: "fresh", title: "Old", body: "B" });
  const before = await request(appB, "GET", "/api/v1/post/fresh");
  t.equal(before.status, 200);
  const changed = await request(appA, "PATCH", "/api/v1/post/fresh", PATCH, '{"title":"New"}');
  t.equal(changed.status, 200);
  const after = await request(appB, "GET", "/api/v1/post/fresh");
  t.match(after.body, /"title":"New"/, "the new bytes");
  t.equal(after.headers.etag, changed.headers.etag, "with the writer's ETag");
  const revalidated = await request(appB, "GET", "/api/v1/post/fresh", { "If-None-Match": before.headers.etag! });
  t.equal(revalidated.status, 200, "the old ETag gets the new post, not a 304");
});
