// The SQLite schema as migrations: MIGRATIONS[n] takes a database from
// version n to n + 1 (PRAGMA user_version). Append; never edit a shipped one.

export const MIGRATIONS: readonly string[] = [
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
];
