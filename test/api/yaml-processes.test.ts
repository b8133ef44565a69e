// Each post's YAML is stored beside its JSON text (src/store/yaml-entry.ts),
// and a YAML list or page joins the stored entries: after an update
// acknowledged by one process, another process on the same SQLite file never
// answers with the YAML from before it. Responses are not kept (KEPT_BYTES=0),
// so every read joins what the store holds now; over real sockets.

import t, { type Test } from "tap";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { dump } from "js-yaml";
import { startServer } from "../helpers/process.js";

const dir = mkdtempSync(path.join(tmpdir(), "startline-yaml-"));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

async function start(t: Test, dataDir: string): Promise<string> {
  const server = startServer({ DATA_DIR: dataDir, QUIET: "1", KEPT_BYTES: "0" });
  t.teardown(async () => {
    server.child.kill("SIGTERM");
    await server.exited();
  });
  return server.url();
}

const YAML_OPTIONS = { noRefs: true, lineWidth: -1 } as const;

async function get(base: string, target: string, accept: string): Promise<string> {
  const response = await fetch(`${base}${target}`, { headers: { Accept: accept } });
  if (response.status !== 200) throw new Error(`GET ${target}: ${response.status}`);
  return response.text();
}

/** A long body: its JSON is past OFF_LOOP_CHARS (escaped control characters), so its YAML is made on js-yaml's thread. */
const LONG = "\u0001 - a line\n".repeat(2_000);

t.test("two servers on one SQLite file: a YAML read on one after an update acknowledged by the other shows the update, as js-yaml writes it", async (t) => {
  const dataDir = path.join(dir, "shared");
  const [a, b] = await Promise.all([start(t, dataDir), start(t, dataDir)]);
  for (let i = 0; i < 6; i++) {
    const r = await fetch(`${b}/api/v1/post/p${i}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ title: `first ${i}`, body: i === 4 ? LONG : `body ${i}` }) });
    t.equal(r.status, 201);
  }
  const changes: readonly (readonly [string, Record<string, unknown>])[] = [
    ["p1", { title: "second: yes" }],
    ["p2", { body: LONG, title: "made long" }],
    ["p2", { body: "short again", title: "made short" }],
    ["p4", { title: "long, retitled" }],
    ["p1", { tags: ["- x", "#"], title: "tagged" }],
    ["p5", { author: "null", title: "last one" }],
  ];
  const targets = ["/api/v1/posts?limit=2", "/api/v1/posts?limit=3&after=", "/api/v1/posts"];
  for (const [round, [id, patch]] of changes.entries()) {
    // The reading process reads every list first, twice: the stored entries are what it joins.
    for (let i = 0; i < 2; i++) for (const target of targets) await get(a, target.replace(/&after=$/, ""), "application/yaml");
    const r = await fetch(`${b}/api/v1/post/${id}`, { method: "PATCH", headers: { "Content-Type": "application/merge-patch+json" }, body: JSON.stringify(patch) });
    t.equal(r.status, 200, `round ${round}: ${id} updated on the other process`);
    const posts = (JSON.parse(await get(a, "/api/v1/posts", "application/json")) as { posts: { id: string; title: string }[] }).posts;
    t.equal(posts.find((p) => p.id === id)!.title, patch.title, `round ${round}: the JSON list shows it`);
    t.equal(await get(a, "/api/v1/posts", "application/yaml"), dump({ posts }, YAML_OPTIONS), `round ${round}: the YAML list is js-yaml's dump of the posts as they are now`);
    t.equal(await get(a, "/api/v1/posts?limit=2", "application/yaml"), dump({ posts: posts.slice(0, 2) }, YAML_OPTIONS), `round ${round}: the first page`);
    t.equal(await get(a, "/api/v1/posts?limit=3&after=" + (await cursorAfter(a, 2)), "application/yaml"), dump({ posts: posts.slice(2, 5) }, YAML_OPTIONS), `round ${round}: a later page`);
  }
});

/** The cursor of the page after the first `limit` posts, from a JSON page's next link. */
async function cursorAfter(base: string, limit: number): Promise<string> {
  const response = await fetch(`${base}/api/v1/posts?limit=${limit}`);
  await response.text();
  return /after=([^>&]+)>/.exec(response.headers.get("link")!)![1]!;
}
