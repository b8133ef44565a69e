// What a store must show after migrating a database of schema version 4
// (the posts' fields as columns beside their JSON) to the row that holds the
// JSON alone: the same posts, bytes and tags, cursors, revision, and no
// position reused. Shared by the SQLite and PostgreSQL tests, which each
// write VERSION_4_POSTS into their own old schema and delete the last one.
// And what it must show after migrating one from before each post's YAML
// entry was stored beside its JSON text (checkYamlAfterMigration).

import type { Test } from "tap";
import { dump } from "js-yaml";
import { createApp } from "../../src/app.js";
import { yamlEntry } from "../../src/representation/yaml.js";
import { request } from "./app.js";
import { makePost } from "../../src/store/records.js";
import { representationOf } from "../../src/store/representation.js";
import type { Revision, Store } from "../../src/store/types.js";

/** Written in this order (positions 1, 2, 3); the third is deleted before the migration. */
export const VERSION_4_POSTS = [
  makePost("one", { title: "T\u{1F600}", body: 'line\nbreak "quoted"', author: "ann", tags: ["a", "b"] }, "2025-01-01T00:00:00.000Z", "2025-01-02T00:00:00.000Z"),
  makePost("two", { title: "t", body: "b" }, "2025-01-03T00:00:00.000Z", "2025-01-03T00:00:00.000Z"),
  makePost("three", { title: "gone", body: "deleted before the migration", tags: [] }, "2025-01-04T00:00:00.000Z", "2025-01-04T00:00:00.000Z"),
];

/** `revision`: the old database's, read before the migration. Leaves "one" updated and "two" deleted. */
export async function checkMigratedPosts(t: Test, store: Store, revision: Revision): Promise<void> {
  const kept = VERSION_4_POSTS.slice(0, 2);
  t.strictSame(await store.posts.revision(), revision, "the revision did not move: no post changed");
  for (const post of kept) {
    t.strictSame(await store.posts.get(post.id), post, `${post.id}'s fields, read from its stored JSON`);
    t.strictSame(await store.posts.representation(post.id), representationOf(post), `${post.id}'s bytes and tag as they were`);
  }
  t.equal(await store.posts.get("three"), undefined);
  const first = await store.posts.page({ limit: 1 });
  t.strictSame(first.items.map((p) => p.id), ["one"]);
  t.strictSame((await store.posts.page({ after: first.last!, limit: 10 })).items.map((p) => p.id), ["two"], "a cursor handed out before still works");
  t.equal(Buffer.from((await store.posts.pageJson({ limit: 10 })).members).toString(), JSON.stringify(kept).slice(1, -1));
  await store.posts.create({ id: "four", title: "t", body: "b" });
  t.equal((await store.posts.page({ after: 2, limit: 10 })).last, 4, "a new post comes after the deleted one's position, not in it");
  t.equal((await store.posts.revision()).n, revision.n + 1, "writes are counted again");
  await store.posts.update("one", (p) => ({ title: p.title, body: "changed" }));
  await store.posts.delete("two");
  t.equal((await store.posts.revision()).n, revision.n + 3);
}

/**
 * Posts as a database from before each post's YAML was stored holds them
 * (SQLite's schema version 7, PostgreSQL's 6): written in this order, one too
 * long for its YAML to be made on the event loop, and awkward for YAML.
 */
export const BEFORE_YAML_POSTS = [
  makePost("yes", { title: "yes", body: "- x\n\n  # not a comment", author: "null", tags: ["", "a: b"] }, "2025-01-01T00:00:00.000Z", "2025-01-02T00:00:00.000Z"),
  makePost("long", { title: "~", body: "\u0001 line\n".repeat(3000) }, "2025-01-03T00:00:00.000Z", "2025-01-03T00:00:00.000Z"),
  makePost("plain", { title: "t", body: "b", tags: [] }, "2025-01-04T00:00:00.000Z", "2025-01-04T00:00:00.000Z"),
];

/**
 * What a store must show after migrating a database whose posts have no YAML
 * entry stored (BEFORE_YAML_POSTS, written with their JSON text and tag as
 * the old schema held them): the migration made none, and the revision did
 * not move; the first YAML list is js-yaml's dump all the same, and stores
 * each entry it made (`storedYaml`: the yaml column of each post, in order,
 * read beside the store), moving no revision; the next page is joined by the
 * store. `revision`: the old database's, read before the migration.
 */
export async function checkYamlAfterMigration(t: Test, store: Store, revision: Revision, storedYaml: () => Promise<(string | null)[]>): Promise<void> {
  t.strictSame(await store.posts.revision(), revision, "the revision did not move: no post changed");
  t.strictSame(await storedYaml(), [null, null, null], "the migration made no entry: each is made when first read");
  const { tag } = representationOf(BEFORE_YAML_POSTS[1]!);
  await store.posts.keepYaml([{ id: "yes", tag, yaml: "  - another post's: entry\n" }]);
  t.strictSame(await storedYaml(), [null, null, null], "keepYaml stores no entry under a tag the post does not have");
  const before = await store.posts.pageYaml({ limit: 10 });
  t.strictSame(
    before.items,
    BEFORE_YAML_POSTS.map((post) => ({ id: post.id, ...representationOf(post), yaml: null })),
    "a page of posts without entries: each post's text and tag, to make them from",
  );
  const app = createApp({ store, kept: { responseBytes: 0 } });
  const expected = dump({ posts: BEFORE_YAML_POSTS }, { noRefs: true, lineWidth: -1 });
  for (const target of ["/api/v1/posts?limit=10", "/api/v1/posts"]) {
    t.equal((await request(app, "GET", target, { Accept: "application/yaml" })).body, expected, `${target}: js-yaml's dump of the posts`);
  }
  t.strictSame(await storedYaml(), BEFORE_YAML_POSTS.map(yamlEntry), "the first read stored each entry it made, the long one's too");
  t.strictSame(await store.posts.revision(), revision, "and that moved no revision");
  const after = await store.posts.pageYaml({ limit: 10 });
  t.equal(Buffer.from(after.entries ?? "(not joined)").toString(), BEFORE_YAML_POSTS.map(yamlEntry).join(""), "the next page: the stored entries, joined by the store");
  await store.posts.update("plain", (p) => ({ title: "changed", body: p.body }));
  t.equal((await storedYaml())[2], yamlEntry((await store.posts.get("plain"))!), "an update stores its new entry");
  t.equal((await store.posts.revision()).n, revision.n + 1, "and moves the revision");
}
