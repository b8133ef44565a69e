// What a store must show after migrating a database of schema version 4
// (the posts' fields as columns beside their JSON) to the row that holds the
// JSON alone: the same posts, bytes and tags, cursors, revision, and no
// position reused. Shared by the SQLite and PostgreSQL tests, which each
// write VERSION_4_POSTS into their own old schema and delete the last one.

import type { Test } from "tap";
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
