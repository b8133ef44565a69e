// The SQLite schema as migrations: MIGRATIONS[n] takes a database from
// version n to n + 1 (PRAGMA user_version). Append; never edit a shipped one.
// A migration is SQL, or SQL and then a step in JavaScript (for what SQL
// cannot compute), run in the same transaction.

import type Database from "better-sqlite3";
import { makePost } from "./records.js";
import { representationOf } from "./representation.js";
import type { Post } from "./types.js";

export type Migration = string | { readonly sql: string; readonly then: (db: Database.Database) => void };

/**
 * A row of posts as schema versions 1 to 4 held it, the fields as columns:
 * what migration 4's backfill reads (and what the bench's comparators store,
 * bench/servers/post-table.ts). From version 5 a row holds the post's JSON
 * text only (see migration 5).
 */
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
  // 5: a post is its representation: the row keeps the position, the id (the
  // key a publish races for) and the JSON text with its tag, and drops the
  // fields it held a second time. A write then stores each post once (about
  // half the bytes, one page less of WAL per insert), and a read of the
  // fields parses the stored text (records.ts, postFromJson). No query looks
  // a post up by anything but id and position, so no field needs a column.
  // SQLite cannot drop several columns in one step, so the table is built
  // anew: copied in one pass, the old one dropped (DROP fires no trigger, and
  // the copy goes in before the triggers exist: the revision does not move),
  // the new one renamed, the triggers made again. Positions are never
  // reused: the AUTOINCREMENT high-water mark (sqlite_sequence) is carried
  // over, so a post deleted last before the migration keeps its number.
  {
    sql: `
    CREATE TABLE posts_by_json (
      seq  INTEGER PRIMARY KEY AUTOINCREMENT, -- creation order, for list() and cursors
      id   TEXT NOT NULL UNIQUE,
      json TEXT NOT NULL,                     -- the post as representation.ts writes it
      tag  TEXT NOT NULL                      -- the entity tag of those bytes
    );
    INSERT INTO posts_by_json (seq, id, json, tag) SELECT seq, id, json, tag FROM posts ORDER BY seq;
    `,
    then: replacePostsTable,
  },
  // 6: an insert no longer bumps the revision counter by a trigger: it moves
  // AUTOINCREMENT's mark (sqlite_sequence), which every insert writes anyway,
  // by exactly one, in the same transaction. A collection's revision is now
  // that mark plus the counter, which the update and delete triggers still
  // move; the counter is lowered by the mark here so that no revision moves.
  // Each insert then writes one page fewer (the counter's), and runs no
  // trigger: about a fifth of what SQLite spends on a new post. An insert
  // must take a number only when it writes a row: see postInsert.
  `
  UPDATE revisions SET n = n - coalesce((SELECT seq FROM sqlite_sequence WHERE name = revisions.collection), 0);
  DROP TRIGGER posts_revision_insert;
  DROP TRIGGER facts_revision_insert;
  `,
  // 7: keys the server signs with (types.ts, Store.key), drawn here, once per
  // database, so that every process and instance on the file holds the same
  // ones without a setting. randomblob() is SQLite's own CSPRNG (seeded from
  // the operating system).
  `
  CREATE TABLE keys (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );
  INSERT INTO keys (name, value) VALUES ('lab-digest', lower(hex(randomblob(32))));
  `,
  // 8: each post's YAML entry (yaml-entry.ts: js-yaml's text for the post in
  // a YAML list) beside its JSON text, written by every write in the same
  // statement as the text, so that a YAML list or page is one statement
  // joining stored bytes, as a JSON one is. NULL means "not made yet": a
  // text too long to make YAML for on the event loop gets its entry off the
  // loop once its write has committed.
  // The rows written before get none here: making them would be js-yaml on
  // every post, in this transaction, before the server listens (some 30 µs a
  // post of 700 bytes, far more for long or escaped ones: seconds for 40,000
  // posts, all of it holding the one thread). Instead the first YAML read of
  // a post makes its entry (off the loop past OFF_LOOP_CHARS) and stores it
  // where the post still has the tag it was made from (keepYaml), so a YAML
  // list is slower only the first time it walks the old posts.
  // Storing an entry changes no post, so the revision's update trigger is
  // made again to count only the columns a post is: an UPDATE that sets
  // yaml alone (keepYaml) moves no revision; one that sets json still does.
  `
  ALTER TABLE posts ADD COLUMN yaml TEXT;
  DROP TRIGGER posts_revision_update;
  CREATE TRIGGER posts_revision_update AFTER UPDATE OF id, json, tag ON posts BEGIN UPDATE revisions SET n = n + 1 WHERE collection = 'posts'; END;
  `,
  // 9: an entry follows its text even when the writer knows nothing of
  // entries: a server of a version before 8, still running on the file
  // while a newer one starts, updates a post's json and tag and leaves the
  // old text's entry beside the new text. An UPDATE that changes json and
  // leaves a stored entry as it was clears that entry, so the next YAML read
  // makes it from the text as it is. (This version's writes set the entry
  // with the text, or clear it themselves.) Clearing sets yaml alone: it
  // moves no revision, and fires neither trigger again.
  `
  CREATE TRIGGER posts_yaml_follows_json AFTER UPDATE OF json ON posts
    WHEN NEW.json IS NOT OLD.json AND NEW.yaml IS NOT NULL AND NEW.yaml IS OLD.yaml
  BEGIN UPDATE posts SET yaml = NULL WHERE seq = NEW.seq; END;
  `,
];

/**
 * A collection's revision as SQL (schema version 6): its counter plus its
 * table's AUTOINCREMENT mark (collections are named for their tables), read in
 * one statement, so from one snapshot.
 */
export const REVISION_N = "r.n + coalesce((SELECT seq FROM sqlite_sequence WHERE name = r.collection), 0)";

/** The rest of migration 5, once the rows are copied: the high-water mark, the swap, the triggers. */
function replacePostsTable(db: Database.Database): void {
  const highest = db.prepare<[], { seq: number }>("SELECT seq FROM sqlite_sequence WHERE name = 'posts'").get()?.seq ?? 0;
  db.exec(`
    DROP TABLE posts;
    ALTER TABLE posts_by_json RENAME TO posts;
    CREATE TRIGGER posts_revision_insert AFTER INSERT ON posts BEGIN UPDATE revisions SET n = n + 1 WHERE collection = 'posts'; END;
    CREATE TRIGGER posts_revision_update AFTER UPDATE ON posts BEGIN UPDATE revisions SET n = n + 1 WHERE collection = 'posts'; END;
    CREATE TRIGGER posts_revision_delete AFTER DELETE ON posts BEGIN UPDATE revisions SET n = n + 1 WHERE collection = 'posts'; END;
  `);
  const copied = db.prepare("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'posts'").run(highest);
  if (copied.changes === 0 && highest > 0) db.prepare("INSERT INTO sqlite_sequence (name, seq) VALUES ('posts', ?)").run(highest);
}
