// The SQLite schema as migrations: MIGRATIONS[n] takes a database from
// version n to n + 1 (PRAGMA user_version). Append; never edit a shipped one.
// A migration is SQL, or SQL and then a step in JavaScript (for what SQL
// cannot compute), run in the same transaction.

import type Database from "better-sqlite3";
import { makePost } from "./records.js";
import { representationOf } from "./representation.js";
import type { Post } from "./types.js";

export type Migration = string | { readonly sql: string; readonly then: (db: Database.Database) => void };

/** A row of posts as the store reads it. */
export interface PostRow {
  id: string;
  title: string;
  body: string;
  author: string | null;
  tags: string | null;
  published_at: string;
  updated_at: string;
}

export const POST_COLUMNS = "id, title, body, author, tags, published_at, updated_at";

export const postFromRow = (r: PostRow): Post =>
  makePost(
    r.id,
    { title: r.title, body: r.body, ...(r.author === null ? {} : { author: r.author }), ...(r.tags === null ? {} : { tags: JSON.parse(r.tags) as string[] }) },
    r.published_at,
    r.updated_at,
  );

/** Rows written per statement of a backfill: a million posts never sit in memory at once. */
const BACKFILL_BATCH = 1000;

/**
 * Every post's representation, for a database whose posts were written
 * before representations were stored. It changes no post, so the revision
 * stays as it was (the triggers count each row; the count is put back).
 */
function backfillPostRepresentations(db: Database.Database): void {
  const revision = db.prepare<[], { n: number }>("SELECT n FROM revisions WHERE collection = 'posts'").get()!.n;
  const batch = db.prepare<[number, number], PostRow & { seq: number }>(`SELECT seq, ${POST_COLUMNS} FROM posts WHERE seq > ? ORDER BY seq LIMIT ?`);
  const write = db.prepare<[string, string, number]>("UPDATE posts SET json = ?, tag = ? WHERE seq = ?");
  for (let after = 0; ; ) {
    const rows = batch.all(after, BACKFILL_BATCH);
    if (rows.length === 0) break;
    for (const row of rows) {
      const { json, tag } = representationOf(postFromRow(row));
      write.run(json, tag, row.seq);
    }
    after = rows.at(-1)!.seq;
  }
  db.prepare("UPDATE revisions SET n = ? WHERE collection = 'posts'").run(revision);
}

export const MIGRATIONS: readonly Migration[] = [
  `
  CREATE TABLE posts (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT, -- creation order, for list()
    id           TEXT NOT NULL UNIQUE,
    title        TEXT NOT NULL,
    body         TEXT NOT NULL,
    author       TEXT,
    tags         TEXT,                              -- JSON array, or NULL when absent
    published_at TEXT NOT NULL,
    updated_at   TEXT NOT NULL
  );
  CREATE TABLE articles (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    id         TEXT NOT NULL UNIQUE,
    title      TEXT NOT NULL,
    body       TEXT NOT NULL,
    author     TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE TABLE facts (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,   -- AUTOINCREMENT: ids are never reused
    text       TEXT NOT NULL,
    source     TEXT NOT NULL,
    created_at TEXT NOT NULL
  );
  CREATE TABLE tokens (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    role       TEXT NOT NULL CHECK (role IN ('user', 'admin')),
    hash       TEXT NOT NULL UNIQUE,                -- SHA-256 of the token; the token itself is never stored
    created_at TEXT NOT NULL
  );
  `,
  // 2: where each token came from, so that a new ADMIN_TOKEN revokes what the
  // old one granted (at most one token is the setting's), and when it was last used.
  `
  ALTER TABLE tokens ADD COLUMN origin TEXT NOT NULL DEFAULT 'unknown' CHECK (origin IN ('setting', 'command', 'first-start', 'unknown'));
  ALTER TABLE tokens ADD COLUMN last_used_at TEXT;
  CREATE UNIQUE INDEX tokens_one_setting ON tokens (origin) WHERE origin = 'setting';
  `,
  // 3: a revision counter per listable collection, bumped by triggers in the
  // same transaction as every insert, update and delete of that collection
  // (so no write path can forget it, and a rolled-back write bumps nothing),
  // for list ETags that every process on the file agrees on. The epoch, drawn
  // once per database, keeps two databases from sharing a revision. Keyset
  // pages need no new index: posts.seq and facts.id are the rowid.
  `
  CREATE TABLE revisions (
    collection TEXT PRIMARY KEY,
    n          INTEGER NOT NULL,
    epoch      TEXT NOT NULL
  );
  INSERT INTO revisions (collection, n, epoch) VALUES ('posts', 0, lower(hex(randomblob(8)))), ('facts', 0, lower(hex(randomblob(8))));
  CREATE TRIGGER posts_revision_insert AFTER INSERT ON posts BEGIN UPDATE revisions SET n = n + 1 WHERE collection = 'posts'; END;
  CREATE TRIGGER posts_revision_update AFTER UPDATE ON posts BEGIN UPDATE revisions SET n = n + 1 WHERE collection = 'posts'; END;
  CREATE TRIGGER posts_revision_delete AFTER DELETE ON posts BEGIN UPDATE revisions SET n = n + 1 WHERE collection = 'posts'; END;
  CREATE TRIGGER facts_revision_insert AFTER INSERT ON facts BEGIN UPDATE revisions SET n = n + 1 WHERE collection = 'facts'; END;
  CREATE TRIGGER facts_revision_update AFTER UPDATE ON facts BEGIN UPDATE revisions SET n = n + 1 WHERE collection = 'facts'; END;
  CREATE TRIGGER facts_revision_delete AFTER DELETE ON facts BEGIN UPDATE revisions SET n = n + 1 WHERE collection = 'facts'; END;
  `,
  // 4: each post's representation in its final form (JSON text and the tag
  // of its bytes, representation.ts), written with the post in the same
  // statement, so that a read sends bytes and computes nothing. Posts
  // written before get theirs here.
  {
    sql: `
    ALTER TABLE posts ADD COLUMN json TEXT;
    ALTER TABLE posts ADD COLUMN tag TEXT;
    `,
    then: backfillPostRepresentations,
  },
];
