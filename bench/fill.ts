// Filling a startline SQLite database with many posts directly, not through
// HTTP (which would take longer than the runs): the schema by the store's own
// migrations, the rows (each post's representation, as the server writes it)
// through one INSERT in one transaction, so the store's triggers move the
// revision counter as the server's own writes do.

import Database from "better-sqlite3";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { DATABASE_FILE } from "../src/store/open.js";
import { makePost } from "../src/store/records.js";
import { representationOf } from "../src/store/representation.js";
import { yamlEntry } from "../src/representation/yaml.js";
import { createSqliteStore } from "../src/store/sqlite.js";

export interface FillOptions {
  /** How many posts. */
  readonly posts: number;
  /** Characters of each post's body (0: a short sentence of about 100). */
  readonly bodyChars?: number;
}

/** The n-th post's row (1-based): varied a little, as real posts are; a row is the post's id, JSON text, tag and YAML entry, as the store writes it. */
function row(n: number, bodyChars: number, at: string): [string, string, string, string] {
  const sentence = `Post ${n}: a request line, header fields, an empty line, then the body; framing decides where it ends. `;
  const body = bodyChars > 0 ? sentence.repeat(Math.ceil(bodyChars / sentence.length)).slice(0, bodyChars) : sentence;
  const id = `post-${String(n).padStart(7, "0")}`;
  const post = makePost(
    id,
    { title: `Notes on HTTP/1.1, part ${n}`, body, ...(n % 2 === 0 ? { author: "ana" } : {}), ...(n % 3 === 0 ? { tags: ["http", `tag-${n % 100}`] } : {}) },
    at,
    at,
  );
  // The post's representation and YAML entry, as the store holds them once a write is answered (src/store/representation.ts,
  // yaml-entry.ts): a long post's entry is made on js-yaml's thread right after its write, before the write is answered.
  const { json, tag } = representationOf(post);
  return [id, json, tag, yamlEntry(post)];
}

/**
 * Creates (or extends) the database in `dataDir` with `posts` more posts, in
 * one transaction. Resolves with how long the insert took, in seconds.
 */
export async function fillPosts(dataDir: string, options: FillOptions): Promise<number> {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, DATABASE_FILE);
  await createSqliteStore(file).close(); // the schema, by the store's own migrations
  const db = new Database(file);
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = OFF"); // a throwaway benchmark file: no fsync per page
    const insert = db.prepare("INSERT INTO posts (id, json, tag, yaml) VALUES (?, ?, ?, ?)");
    const start = (db.prepare("SELECT count(*) AS n FROM posts").get() as { n: number }).n;
    const at = new Date().toISOString();
    const began = performance.now();
    db.transaction(() => {
      for (let n = start + 1; n <= start + options.posts; n++) {
        insert.run(...row(n, options.bodyChars ?? 0, at));
      }
    })();
    db.pragma("wal_checkpoint(TRUNCATE)");
    return (performance.now() - began) / 1000;
  } finally {
    db.close();
  }
}
