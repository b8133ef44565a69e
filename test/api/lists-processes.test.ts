// List ETags and cursors across processes: two servers on one SQLite file
// (as two instances, or two WORKERS, are) give the same tag for the same
// collection, see each other's writes in it, and follow each other's links.

import t, { type Test } from "tap";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { startServer, type ServerProcess } from "../helpers/process.js";

const dir = mkdtempSync(path.join(tmpdir(), "startline-lists-"));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const ADMIN_TOKEN = "lists-admin-token-000001";

async function start(t: Test, dataDir: string): Promise<{ server: ServerProcess; base: string }> {
  const server = startServer({ DATA_DIR: dataDir, QUIET: "1", ADMIN_TOKEN });
  t.teardown(async () => {
    server.child.kill("SIGTERM");
    await server.exited();
  });
  return { server, base: await server.url() };
}

const publish = (base: string, id: string) =>
  fetch(`${base}/api/v1/post/${id}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ title: id, body: `from ${base}` }) });

async function list(base: string, query = "", headers: Record<string, string> = {}): Promise<{ status: number; etag: string | null; link: string | null; body: string }> {
  const r = await fetch(`${base}/api/v1/posts${query}`, { headers });
  return { status: r.status, etag: r.headers.get("etag"), link: r.headers.get("link"), body: await r.text() };
}

// Both checks on the same two servers: starting them is most of this file's work. The link check runs
// first, on the posts it publishes; the tag check then counts those as already there.
t.test("two servers on one SQLite file", async (t) => {
  const dataDir = path.join(dir, "shared");
  const a = await start(t, dataDir);
  const b = await start(t, dataDir);

  await t.test("a next link from one process is followed on the other", async (t) => {
    for (let i = 0; i < 11; i++) t.equal((await publish(i % 2 === 0 ? a.base : b.base, `p${String(i).padStart(2, "0")}`)).status, 201);
    const seen: string[] = [];
    let query: string | undefined = "?limit=3";
    for (let page = 0; query !== undefined; page++) {
      const r = await list(page % 2 === 0 ? a.base : b.base, query);
      seen.push(...JSON.parse(r.body).posts.map((p: { id: string }) => p.id));
      query = r.link === null ? undefined : /^<\/api\/v1\/posts(\?[^>]+)>; rel="next"$/.exec(r.link)![1];
    }
    t.strictSame(seen, Array.from({ length: 11 }, (_, i) => `p${String(i).padStart(2, "0")}`));
  });

  await t.test("two processes on one database: one ETag per collection state, moved by either's writes", async (t) => {
    const already = JSON.parse((await list(a.base)).body).posts.length;
    for (let i = 0; i < 5; i++) t.equal((await publish(a.base, `first-${i}`)).status, 201);
    const fromA = await list(a.base);
    const fromB = await list(b.base);
    t.ok(fromA.etag);
    t.equal(fromB.etag, fromA.etag, "the same tag from either process");
    t.equal(fromB.body, fromA.body);
    t.equal((await list(b.base, "", { "If-None-Match": fromA.etag! })).status, 304, "a tag from one process validates on the other");

    const tags = new Set([fromA.etag]);
    for (let round = 0; round < 20; round++) {
      // Both publish at the same moment; then each reads the list.
      const [ra, rb] = await Promise.all([publish(a.base, `a-${round}`), publish(b.base, `b-${round}`)]);
      t.strictSame([ra.status, rb.status], [201, 201]);
      const [la, lb] = await Promise.all([list(a.base), list(b.base)]);
      t.equal(la.etag, lb.etag, `round ${round}: both processes give the same tag`);
      t.notOk(tags.has(la.etag), `round ${round}: a new tag`);
      tags.add(la.etag);
      t.equal(JSON.parse(la.body).posts.length, already + 5 + 2 * (round + 1), `round ${round}: both posts listed`);
    }
    const last = await list(a.base);
    t.equal((await list(b.base, "", { "If-None-Match": fromA.etag! })).status, 200, "an old tag gets the list again");
    t.equal((await list(b.base, "", { "If-None-Match": last.etag! })).status, 304);
    const deleted = await fetch(`${b.base}/api/v1/post/first-0`, { method: "DELETE" });
    t.equal(deleted.status, 200);
    t.equal((await list(a.base, "", { "If-None-Match": last.etag! })).status, 200, "a delete through the other process changes it");
  });
});
