// The PostgreSQL schema as migrations: PG_MIGRATIONS[n] takes a database from
// version n to n + 1, recorded as a row in startline_migrations. Append; never
// edit a shipped one. The tables mirror schema.ts (SQLite) with PostgreSQL's
// own types: identity columns, timestamptz, text[] for tags. A migration is
// SQL, or SQL and then a step in JavaScript (for what SQL cannot compute),
// in the same transaction.

import type { PoolClient } from "pg";
import type { PostRow } from "./pg-rows.js";
import { postFromRow } from "./pg-rows.js";
import { representationOf } from "./representation.js";

export type PgMigration = string | { readonly sql: string; readonly then: (client: PoolClient) => Promise<void> };

/** Rows written per round of a backfill: a million posts never sit in memory at once. */
const BACKFILL_BATCH = 1000;

/**
 * Every post's representation, for a database whose posts were written
 * before representations were stored. It changes no post, so the revision
 * stays as it was (the trigger counts each row; the count is put back).
 */
async function backfillPostRepresentations(client: PoolClient): Promise<void> {
  const { rows: revision } = await client.query<{ n: string }>("SELECT n FROM revisions WHERE collection = 'posts'");
  for (let after = "0"; ; ) {
    const { rows } = await client.query<PostRow & { seq: string }>(
      "SELECT seq, id, title, body, author, tags, published_at, updated_at FROM posts WHERE seq > $1 ORDER BY seq LIMIT $2",
      [after, BACKFILL_BATCH],
    );
    if (rows.length === 0) break;
    for (const row of rows) {
      const { json, tag } = representationOf(postFromRow(row));
      await client.query("UPDATE posts SET json = $1, tag = $2 WHERE seq = $3", [json, tag, row.seq]);
    }
    after = rows.at(-1)!.seq;
  }
  await client.query("UPDATE revisions SET n = $1 WHERE collection = 'posts'", [revision[0]!.n]);
}

/** Where the applied versions are recorded (named for startline, so it can share a database). */
export const MIGRATIONS_TABLE = "startline_migrations";

/**
 * Advisory-lock keys, as pg_advisory_xact_lock(PG_LOCK_SPACE, key). The space
 * is "stln" in ASCII, so startline's locks do not collide with another
 * application's on the same database.
 */
export const PG_LOCK_SPACE = 0x73746c6e;
export const PG_LOCK = {
  /** Held while migrating: two instances starting at once migrate one after the other. */
  migrate: 1,
  /** Held while seeding or creating the first admin token: check-then-insert must not interleave. */
  setup: 2,
} as const;

export const PG_MIGRATIONS: readonly PgMigration[] = [
  `
  CREATE TABLE posts (
    id           text PRIMARY KEY,                 -- the key two instances publishing one id race for
    seq          bigint GENERATED ALWAYS AS IDENTITY UNIQUE, -- creation order, for list()
    title        text NOT NULL,
    body         text NOT NULL,
    author       text,
    tags         text[],                           -- NULL when absent, '{}' when empty
    published_at timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL
  );
  CREATE TABLE articles (
    id         text PRIMARY KEY,
    seq        bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    title      text NOT NULL,
    body       text NOT NULL,
    author     text NOT NULL,
    updated_at timestamptz NOT NULL
  );
  CREATE TABLE facts (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, -- a sequence: ids are never reused
    text       text NOT NULL,
    source     text NOT NULL,
    created_at timestamptz NOT NULL
  );
  CREATE TABLE tokens (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    role       text NOT NULL CHECK (role IN ('user', 'admin')),
    hash       text NOT NULL UNIQUE CHECK (hash ~ '^[0-9a-f]{64}$'), -- SHA-256 of the token; the token itself is never stored
    created_at timestamptz NOT NULL
  );
  `,
  // 2: where each token came from, so that a new ADMIN_TOKEN revokes what the
  // old one granted (at most one token is the setting's), and when it was last used.
  `
  ALTER TABLE tokens ADD COLUMN origin text NOT NULL DEFAULT 'unknown' CHECK (origin IN ('setting', 'command', 'first-start', 'unknown'));
  ALTER TABLE tokens ADD COLUMN last_used_at timestamptz;
  CREATE UNIQUE INDEX tokens_one_setting ON tokens (origin) WHERE origin = 'setting';
  `,
  // 3: a revision counter per listable collection, bumped by a row trigger in
  // the same transaction as every insert, update and delete of that
  // collection (a write that rolls back bumps nothing; an insert that ON
  // CONFLICT skips fires no row trigger), so list ETags agree across
  // instances. The counter's row is locked from a write until its commit:
  // writes to one collection commit one after the other, which is what makes
  // the counter exact. The epoch, drawn once per database, keeps two
  // databases from sharing a revision. Keyset pages use the existing unique
  // indexes on posts.seq and facts.id.
  `
  CREATE TABLE revisions (
    collection text PRIMARY KEY,
    n          bigint NOT NULL,
    epoch      text NOT NULL
  );
  INSERT INTO revisions (collection, n, epoch)
    SELECT c, 0, substr(md5(random()::text || clock_timestamp()::text || c), 1, 16) FROM unnest(ARRAY['posts', 'facts']) AS c;
  CREATE FUNCTION startline_bump_revision() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    UPDATE revisions SET n = n + 1 WHERE collection = TG_ARGV[0];
    RETURN NULL;
  END
  $$;
  CREATE TRIGGER posts_revision AFTER INSERT OR UPDATE OR DELETE ON posts FOR EACH ROW EXECUTE FUNCTION startline_bump_revision('posts');
  CREATE TRIGGER facts_revision AFTER INSERT OR UPDATE OR DELETE ON facts FOR EACH ROW EXECUTE FUNCTION startline_bump_revision('facts');
  `,
  // 4: each post's representation in its final form (JSON text and the tag
  // of its bytes, representation.ts), written with the post in the same
  // statement, so that a read sends bytes and computes nothing. Posts
  // written before get theirs here.
  {
    sql: "ALTER TABLE posts ADD COLUMN json text, ADD COLUMN tag text",
    then: backfillPostRepresentations,
  },
  // 5: a post is its representation: the row keeps the id (the key a publish
  // races for), the position and the JSON text with its tag, and drops the
  // fields it held a second time (schema.ts, migration 5, says why; no query
  // finds a post by anything but id and position). ALTER fires no row
  // trigger: the revision does not move. The identity sequence of seq stays
  // where it was, so no position comes back.
  `
  ALTER TABLE posts
    ALTER COLUMN json SET NOT NULL,
    ALTER COLUMN tag SET NOT NULL,
    DROP COLUMN title,
    DROP COLUMN body,
    DROP COLUMN author,
    DROP COLUMN tags,
    DROP COLUMN published_at,
    DROP COLUMN updated_at
  `,
  // 6: keys the server signs with (types.ts, Store.key), drawn here, once per
  // database, so that every instance on it holds the same ones without a
  // setting. gen_random_uuid() draws from the server's strong random source
  // (122 random bits each; two make 244, in 64 hex digits).
  `
  CREATE TABLE keys (
    name  text PRIMARY KEY,
    value text NOT NULL
  );
  INSERT INTO keys (name, value) VALUES ('lab-digest', replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''));
  `,
  // 7: each post's YAML entry beside its JSON text, written with it by every
  // write; NULL until made (schema.ts, migration 8, says why and when). The
  // rows written before get none here: js-yaml on every post would hold this
  // transaction, the migration lock and the starting instance's event loop
  // for seconds per 40,000 posts; the first YAML read of a post makes its
  // entry and stores it where the post still has the tag it was made from.
  // Adding a column without a default rewrites no row. The revision's
  // trigger is made again to fire on an UPDATE of the columns a post is, so
  // that storing an entry alone (keepYaml) moves no revision.
  `
  ALTER TABLE posts ADD COLUMN yaml text;
  DROP TRIGGER posts_revision ON posts;
  CREATE TRIGGER posts_revision AFTER INSERT OR UPDATE OF id, json, tag OR DELETE ON posts FOR EACH ROW EXECUTE FUNCTION startline_bump_revision('posts');
  `,
  // 8: an entry follows its text even when the writer knows nothing of
  // entries (an instance of a version before 7, still running while a newer
  // one starts): an UPDATE that changes json and leaves a stored entry as it
  // was clears it, before the row is written (schema.ts, migration 9).
  `
  CREATE FUNCTION startline_yaml_follows_json() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF NEW.json IS DISTINCT FROM OLD.json AND NEW.yaml IS NOT NULL AND NEW.yaml IS NOT DISTINCT FROM OLD.yaml THEN
      NEW.yaml := NULL;
    END IF;
    RETURN NEW;
  END $$;
  CREATE TRIGGER posts_yaml_follows_json BEFORE UPDATE OF json ON posts FOR EACH ROW EXECUTE FUNCTION startline_yaml_follows_json();
  `,
];
