// The durable store: one SQLite database file (better-sqlite3), the default
// behind `npm start`.
//
// WAL mode lets readers and a writer work side by side (and several processes
// share the file). Every statement is prepared once, when the store opens.
// Records leave through the same make* functions as the memory store's, so
// both stores return byte-identical JSON.
//
// Durability: with the default synchronous=NORMAL in WAL mode, a write that was
// acknowledged (its transaction committed) survives a crash of the process;
// after a power loss or OS crash the last transactions may be rolled back.
// `durability: "full"` (synchronous=FULL) makes every commit survive power loss
// too, at the cost of an fsync per commit.

import type Database from "better-sqlite3";
import { CHECKPOINT_FRAMES, checkpointer, type CheckpointResult } from "./sqlite-checkpoint.js";
import { commitWatch } from "./sqlite-commits.js";
import { openDatabase, type OpenOptions } from "./sqlite-open.js";
import { clockFrom, factChars, laterOf, makeArticle, makeFact, makePost, makeToken, parseSequentialId, pickIndex, postChars } from "./records.js";
import { jsonPageOf, postFromJson, representationOf, yamlPageOf } from "./representation.js";
import { entryNow, keepAfterWrite } from "./yaml-entry.js";
import { REVISION_N } from "./schema.js";
import type {
  Article,
  ArticleFields,
  ArticleStore,
  Change,
  Fact,
  FactStore,
  JsonPage,
  NewPost,
  Page,
  PageQuery,
  PageSpan,
  Post,
  PostCreateResult,
  PostFields,
  PostStore,
  PostUpdateResult,
  Precondition,
  Representation,
  Revision,
  Role,
  SeedData,
  SettingResult,
  Store,
  StoreOptions,
  TokenHash,
  TokenOrigin,
  TokenRecord,
  TokenStore,
  UpdateResult,
  WrittenPost,
  YamlEntry,
  YamlPage,
} from "./types.js";

export type { Durability } from "./sqlite-open.js";

/** A write's result with the YAML entry stored beside its text (null: none yet, see yaml-entry.ts). */
type Stored<R> = R extends { readonly kind: "created" | "updated" } ? R & { readonly yaml: string | null } : R;

export interface SqliteOptions extends StoreOptions, OpenOptions {
  /** Told of each checkpoint made on the checkpoints' thread (sqlite-checkpoint.ts): for tests and for watching. */
  readonly onCheckpoint?: (result: CheckpointResult) => void;
}

interface ArticleRow {
  id: string;
  title: string;
  body: string;
  author: string;
  updated_at: string;
}
interface FactRow {
  id: number;
  text: string;
  source: string;
  created_at: string;
}
interface TokenRow {
  id: number;
  role: Role;
  origin: TokenOrigin;
  hash: TokenHash;
  created_at: string;
  last_used_at: string | null;
}

/** A posts row as read (schema version 5: the post is its JSON text). */
interface PostRow {
  json: string;
}

const toPost = (r: PostRow): Post => postFromJson(r.json);
const toArticle = (r: ArticleRow): Article => makeArticle(r.id, r, r.updated_at);
/** Token ids are the store's "1", "2", ...: anything else names no token. */
const idOf = (id: string): number | undefined => parseSequentialId(id);
const toFact = (r: FactRow): Fact => makeFact(String(r.id), r.text, r.source, r.created_at);
const toToken = (r: TokenRow): TokenRecord => makeToken(String(r.id), r.role, r.origin, r.hash, r.created_at, r.last_used_at);

const TOKEN = "id, role, origin, hash, created_at, last_used_at";

interface JsonPageParameters {
  after: number;
  through: number;
  limit: number;
  maxChars: number;
}
interface JsonPageRow {
  members: Buffer | string | null;
  count: number;
  last: number | null;
  more: 0 | 1;
  n: number;
  epoch: string;
}

/** A page statement twice: its members as a BLOB (bytes) and as text (a string), see PageQuery.text. */
function pageStatements(db: Database.Database, sql: (members: string) => string, column: string, separator: string): Record<"bytes" | "text", Database.Statement<[JsonPageParameters], JsonPageRow>> {
  return {
    bytes: db.prepare<[JsonPageParameters], JsonPageRow>(sql(`CAST(group_concat(${column}, '${separator}') AS BLOB)`)),
    text: db.prepare<[JsonPageParameters], JsonPageRow>(sql(`group_concat(${column}, '${separator}')`)),
  };
}

/** A YAML page's row: a JSON page's, and how many of its posts have their entry stored (`made`; the first statement only). */
interface YamlPageRow extends JsonPageRow {
  made?: number;
}

/** A post as a YAML page reads it when some entry is missing: see yamlPageOf. */
interface YamlRow {
  pos: number;
  id: string;
  tag: string;
  yaml: string | null;
  /** Only where yaml is NULL. */
  json: string | null;
  bytes: number;
}


/** A page query's bounds as SQL parameters: (after, through], and one row more than the limit for a span. */
const bounds = (query: PageQuery): [number, number] => [query.after ?? 0, query.through ?? Number.MAX_SAFE_INTEGER];

/**
 * A page from its rows (each with its position), in order: read one at a
 * time, and no more once the items' sizes as maxChars counts them (`chars`)
 * reach maxChars (leaving the loop early resets the statement).
 */
function pageOf<R extends { pos: number }, T>(rows: IterableIterator<R>, maxChars: number | undefined, to: (row: R) => T, chars: (item: T) => number): Page<T> {
  const items: T[] = [];
  let last: number | undefined;
  let total = 0;
  for (const row of rows) {
    const item = to(row);
    items.push(item);
    last = row.pos;
    total += chars(item);
    if (maxChars !== undefined && total >= maxChars) break;
  }
  return last === undefined ? { items } : { items, last };
}

/** Where a page ends, from up to limit + 1 positions after its start. */
function spanOf(positions: number[], limit: number): PageSpan {
  const last = positions[Math.min(limit, positions.length) - 1];
  return last === undefined ? { more: false } : { last, more: positions.length > limit };
}

/**
 * Open (creating if needed) the database file `file`, or ":memory:".
 *
 * better-sqlite3 is synchronous, so each method does all its work before it
 * returns its (already settled) promise, and no other call of this process
 * can interleave with it. A method that reads and then writes runs both in
 * one BEGIN IMMEDIATE transaction: it takes the database's write lock before
 * the read, so another process sharing the file cannot write in between (it
 * waits for the lock, up to busyTimeoutMs), and the read sees the latest
 * commit of every process. A caller's Change runs inside that transaction.
 */
/**
 * The most new posts one transaction writes (see posts.create): at about 70
 * µs a small post, a group of them holds the event loop for 20 ms at most,
 * however many connections publish in one turn. (That was measured when a
 * post's JSON text and tag were made inside the transaction; they are made
 * before it now, with its YAML entry, so a group holds the loop for less.)
 */
export const MAX_INSERT_GROUP = 256;
/**
 * And the most JSON text it writes: a group takes no further post once its
 * posts' texts reach this (it always takes one). A post costs about what its
 * text does (its row and WAL frames written; its JSON text, tag and YAML
 * entry are made before, when it is asked for), and
 * one valid post can be 600,000 characters (100,000 control characters,
 * each written \u0001): 256 of those in one transaction, sent together by
 * 256 connections, held the event loop for 6.4 s, and another worker's
 * writes waited on the lock as long. Half a MiB is about the 20 ms above.
 */
export const MAX_INSERT_GROUP_CHARS = 512 * 1024;

export function createSqliteStore(file: string, options: SqliteOptions = {}): Store {
  const db = openDatabase(file, options);
  const stamp = clockFrom(options);
  const random = options.random ?? Math.random;

  // A LIMIT or OFFSET is never a bare parameter: SQLite's planner reads a bare one's value, so that every new
  // binding expires the statement and the next run parses and plans it again (about 15 µs, three times what a
  // short page costs); "? + 0" is an expression, computed when the statement runs.
  const q = {
    postList: db.prepare<[], PostRow>("SELECT json FROM posts ORDER BY seq"),
    // Keyset pages: a range of the rowid (seq), so a page costs the same at any depth. The size maxChars
    // counts (title and body) is the parsed post's: the row holds no fields of its own.
    postPage: db.prepare<[number, number, number], PostRow & { pos: number }>("SELECT seq AS pos, json FROM posts WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ? + 0"),
    postSpan: db.prepare<[number, number, number], number>("SELECT seq FROM posts WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ? + 0").pluck(),
    // A JSON page in one statement (one read snapshot, one trip into SQLite), with the revision and whether a
    // row follows (one probe of the rowid). The texts are joined by SQLite into one value (no object per row,
    // nothing parsed), in the order of the subquery that reads them: one with ORDER BY and LIMIT, which SQLite
    // runs as a coroutine and never flattens into the aggregate (the store contract suite holds the order).
    // octet_length reads a record's header, not its text, but only when given the table's column itself: given
    // a column of a subquery (the page as a CTE, say) it reads the whole text first, and a batch of 256 posts
    // of 30 KB read 7.5 MB to measure 128 KiB (4.6 ms against 0.07). The value comes over as a BLOB's Buffer (a copy of
    // the bytes), or as a string when the query asks for text (PageQuery.text: UTF-8 decoded, so slower, but
    // collected with V8's young generation).
    //
    // postJsonPage walks the page twice, for its size and then, when it stays under maxChars, for its texts;
    // members is NULL when it does not. postJsonPageCut then cuts it where its texts reach maxChars, with a
    // running sum of the sizes (a window over limit + 1 rows, which costs about what the texts do, so it is
    // the second choice): a batch of large posts, or a caller that asked for more than fits.
    postJsonPage: pageStatements(db, (members) => `
      WITH sized AS (SELECT sum(bytes) AS bytes, count(*) AS count, max(seq) AS last
                     FROM (SELECT seq, octet_length(json) AS bytes FROM posts WHERE seq > @after AND seq <= @through ORDER BY seq LIMIT @limit + 0))
      SELECT CASE WHEN sized.bytes < @maxChars THEN (SELECT ${members} FROM (SELECT json FROM posts WHERE seq > @after AND seq <= @through ORDER BY seq LIMIT @limit + 0)) END AS members,
             sized.count AS count, sized.last AS last, EXISTS (SELECT 1 FROM posts WHERE seq > sized.last AND seq <= @through) AS more,
             ${REVISION_N} AS n, r.epoch AS epoch
      FROM sized, revisions AS r WHERE r.collection = 'posts'`, "json", ","),
    postJsonPageCut: pageStatements(db, (members) => `
      WITH sized AS MATERIALIZED (
             SELECT seq, sum(bytes) OVER (ORDER BY seq ROWS UNBOUNDED PRECEDING) - bytes AS before
             FROM (SELECT seq, octet_length(json) AS bytes FROM posts WHERE seq > @after AND seq <= @through ORDER BY seq LIMIT @limit + 1)),
           cut AS MATERIALIZED (SELECT max(seq) AS last, count(*) AS count FROM (SELECT seq FROM sized WHERE before < @maxChars ORDER BY seq LIMIT @limit + 0))
      SELECT (SELECT ${members} FROM (SELECT json FROM posts WHERE seq > @after ORDER BY seq LIMIT (SELECT count FROM cut))) AS members,
             cut.count AS count, cut.last AS last, (SELECT count(*) FROM sized) > cut.count AS more, ${REVISION_N} AS n, r.epoch AS epoch
      FROM cut, revisions AS r WHERE r.collection = 'posts'`, "json", ","),
    // A YAML page as the JSON page is read, the stored entries joined (with nothing between them) instead of
    // the texts, cut by the same JSON sizes. group_concat skips a NULL, so the entries are joined only when every
    // post of the page has one: `made` counts them (octet_length reads a record's header, not its text), and
    // members is NULL when one is missing or the page is past maxChars. postYamlPageCut cuts a page that is; its
    // members is NULL when an entry is missing. A page with a missing entry is read again row by row (postYamlRows).
    postYamlPage: pageStatements(db, (members) => `
      WITH sized AS (SELECT sum(bytes) AS bytes, count(*) AS count, count(made) AS made, max(seq) AS last
                     FROM (SELECT seq, octet_length(json) AS bytes, octet_length(yaml) AS made FROM posts WHERE seq > @after AND seq <= @through ORDER BY seq LIMIT @limit + 0))
      SELECT CASE WHEN sized.bytes < @maxChars AND sized.made = sized.count THEN (SELECT ${members} FROM (SELECT yaml FROM posts WHERE seq > @after AND seq <= @through ORDER BY seq LIMIT @limit + 0)) END AS members,
             sized.count AS count, sized.made AS made, sized.last AS last, EXISTS (SELECT 1 FROM posts WHERE seq > sized.last AND seq <= @through) AS more,
             ${REVISION_N} AS n, r.epoch AS epoch
      FROM sized, revisions AS r WHERE r.collection = 'posts'`, "yaml", ""),
    postYamlPageCut: pageStatements(db, (members) => `
      WITH sized AS MATERIALIZED (
             SELECT seq, sum(bytes) OVER (ORDER BY seq ROWS UNBOUNDED PRECEDING) - bytes AS before
             FROM (SELECT seq, octet_length(json) AS bytes FROM posts WHERE seq > @after AND seq <= @through ORDER BY seq LIMIT @limit + 1)),
           cut AS MATERIALIZED (SELECT max(seq) AS last, count(*) AS count FROM (SELECT seq FROM sized WHERE before < @maxChars ORDER BY seq LIMIT @limit + 0))
      SELECT (SELECT CASE WHEN count(octet_length(yaml)) = count(*) THEN ${members} END FROM (SELECT yaml FROM posts WHERE seq > @after ORDER BY seq LIMIT (SELECT count FROM cut))) AS members,
             cut.count AS count, cut.last AS last, (SELECT count(*) FROM sized) > cut.count AS more, ${REVISION_N} AS n, r.epoch AS epoch
      FROM cut, revisions AS r WHERE r.collection = 'posts'`, "yaml", ""),
    // Up to limit + 1 rows, cut by cutPage (representation.ts) as they are read: the size is read from the record's header.
    postYamlRows: db.prepare<[number, number, number], YamlRow>(
      "SELECT seq AS pos, id, tag, yaml, CASE WHEN yaml IS NULL THEN json END AS json, octet_length(json) AS bytes FROM posts WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ? + 0",
    ),
    // Only where the entry was made from the text the row holds (its tag), and only a missing one. It sets no
    // column the revision's trigger watches (schema.ts, migration 8): no post changes, no revision moves.
    postKeepYaml: db.prepare<[string, string, string]>("UPDATE posts SET yaml = ? WHERE id = ? AND tag = ? AND yaml IS NULL"),
    postRepresentation: db.prepare<[string], Representation>("SELECT json, tag FROM posts WHERE id = ?"),
    dataVersion: db.prepare<[], number>("PRAGMA data_version").pluck(),
    revision: db.prepare<[string], { n: number; epoch: string }>(`SELECT ${REVISION_N} AS n, r.epoch AS epoch FROM revisions AS r WHERE r.collection = ?`),
    postGet: db.prepare<[string], PostRow>("SELECT json FROM posts WHERE id = ?"),
    // Not ON CONFLICT DO NOTHING: that takes a number from AUTOINCREMENT before it finds the id taken, and the
    // number counts in the revision (schema.ts, migration 6). The check and the insert are one statement, so one
    // write transaction: no other process can publish the id in between.
    // The id goes in twice (positional parameters bind faster than named ones).
    postInsert: db.prepare<[string, string, string, string | null, string]>(
      "INSERT INTO posts (id, json, tag, yaml) SELECT ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM posts WHERE id = ?)",
    ),
    // The entry goes with the text, in the same statement: a new text never sits beside the old text's entry.
    postUpdate: db.prepare<[string, string, string | null, string]>("UPDATE posts SET json = ?, tag = ?, yaml = ? WHERE id = ?"),
    postDelete: db.prepare("DELETE FROM posts WHERE id = ?"),
    articleList: db.prepare<[], ArticleRow>("SELECT id, title, body, author, updated_at FROM articles ORDER BY seq"),
    articleGet: db.prepare<[string], ArticleRow>("SELECT id, title, body, author, updated_at FROM articles WHERE id = ?"),
    // No ON CONFLICT: a repeated id in the seed data must fail the whole seed.
    articleInsert: db.prepare("INSERT INTO articles (id, title, body, author, updated_at) VALUES (?, ?, ?, ?, ?)"),
    articleUpdate: db.prepare("UPDATE articles SET title = ?, body = ?, author = ?, updated_at = ? WHERE id = ?"),
    factList: db.prepare<[], FactRow>("SELECT id, text, source, created_at FROM facts ORDER BY id"),
    factGet: db.prepare<[number], FactRow>("SELECT id, text, source, created_at FROM facts WHERE id = ?"),
    factPage: db.prepare<[number, number, number], FactRow & { pos: number }>(
      "SELECT id AS pos, id, text, source, created_at FROM facts WHERE id > ? AND id <= ? ORDER BY id LIMIT ? + 0",
    ),
    factSpan: db.prepare<[number, number, number], number>("SELECT id FROM facts WHERE id > ? AND id <= ? ORDER BY id LIMIT ? + 0").pluck(),
    // The first and last ids, each from one end of the id's B-tree (min() and max() in one SELECT would scan).
    factIdRange: db.prepare<[], { first: number | null; last: number | null }>("SELECT (SELECT min(id) FROM facts) AS first, (SELECT max(id) FROM facts) AS last"),
    factFrom: db.prepare<[number], FactRow>("SELECT id, text, source, created_at FROM facts WHERE id >= ? ORDER BY id LIMIT 1"),
    factInsert: db.prepare<[string, string, string], FactRow>("INSERT INTO facts (text, source, created_at) VALUES (?, ?, ?) RETURNING id, text, source, created_at"),
    key: db.prepare<[string], { value: string }>("SELECT value FROM keys WHERE name = ?"),
    anyFactOrArticle: db.prepare<[], { one: number }>("SELECT 1 AS one FROM facts UNION ALL SELECT 1 FROM articles LIMIT 1"),
    tokenInsert: db.prepare<[Role, TokenOrigin, string, string], TokenRow>(
      `INSERT INTO tokens (role, origin, hash, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (hash) DO NOTHING RETURNING ${TOKEN}`,
    ),
    tokenByHash: db.prepare<[string], TokenRow>(`SELECT ${TOKEN} FROM tokens WHERE hash = ?`),
    tokenList: db.prepare<[], TokenRow>(`SELECT ${TOKEN} FROM tokens ORDER BY id`),
    tokenDeleteById: db.prepare<[number], TokenRow>(`DELETE FROM tokens WHERE id = ? RETURNING ${TOKEN}`),
    tokenDeleteByHash: db.prepare<[string], TokenRow>(`DELETE FROM tokens WHERE hash = ? RETURNING ${TOKEN}`),
    tokenRevokeSetting: db.prepare<[string | null], TokenRow>(`DELETE FROM tokens WHERE origin = 'setting' AND hash IS NOT ? RETURNING ${TOKEN}`),
    tokenClaim: db.prepare<[number], TokenRow>(`UPDATE tokens SET origin = 'setting' WHERE id = ? RETURNING ${TOKEN}`),
    tokenMarkUsed: db.prepare("UPDATE tokens SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)"),
    tokenHasAdmin: db.prepare<[], { one: number }>("SELECT 1 AS one FROM tokens WHERE role = 'admin' LIMIT 1"),
  };

  // A collection's revision is read on every read that serves kept bytes (src/api/kept-reads.ts), so it is
  // kept too, and read again only when the database may have changed since: when another connection, in this
  // process or another, may have committed to the file (sqlite-commits.ts: the WAL-index header changed, or
  // PRAGMA data_version moved) or when this connection wrote (which neither counts for it: ownWrites does,
  // bumped by every write below once its transaction is over). The look comes before the revision's read, so
  // a commit between the two only makes the next read look again.
  let ownWrites = 0;
  const wal = db.pragma("journal_mode", { simple: true }) === "wal";
  const commits = commitWatch(file, wal, () => q.dataVersion.get()!);
  // Checkpoints run on a thread of their own (sqlite-checkpoint.ts), asked for after writes: never in a commit on the loop.
  const checkpoints =
    wal && file !== ":memory:" && file !== ""
      ? checkpointer(file, options.durability === "full" ? "FULL" : "NORMAL", (on) => db.pragma(`wal_autocheckpoint = ${on ? CHECKPOINT_FRAMES : 0}`), options.onCheckpoint)
      : undefined;
  const seen = new Map<string, { commits: number; ownWrites: number; revision: Revision }>();
  const revision = (collection: "posts" | "facts"): Revision => {
    if (!db.open) throw new TypeError("The database connection is not open");
    const looked = commits.seen();
    const known = seen.get(collection);
    if (known !== undefined && known.commits === looked && known.ownWrites === ownWrites && !db.inTransaction) return known.revision;
    const row = q.revision.get(collection)!;
    const read = { epoch: row.epoch, n: row.n };
    if (!db.inTransaction) seen.set(collection, { commits: looked, ownWrites, revision: read });
    return read;
  };
  /** `result`, after a write that moves no revision (tokens, articles): only a checkpoint may be due. */
  const wrote = <R>(result: R): R => {
    checkpoints?.afterWrite();
    return result;
  };
  /** `write`'s result, after counting it as this connection's write (whether it committed or threw). */
  const counted = <R>(write: () => R): R => {
    try {
      return write();
    } finally {
      ownWrites++;
      checkpoints?.afterWrite();
    }
  };

  /**
   * A write's result once its YAML entry is stored: made in its transaction, or (a long text) now, off the
   * loop, by keepAfterWrite. The result as the store's callers see it, without the entry.
   */
  const written = async <R extends PostCreateResult | PostUpdateResult>(result: Stored<R>): Promise<R> => {
    if (result.kind !== "created" && result.kind !== "updated") return result as R;
    const { yaml, ...rest } = result as WrittenPost & { readonly kind: "created" | "updated"; readonly yaml: string | null };
    await keepAfterWrite(posts, rest.item.id, rest.representation, yaml);
    return rest as R;
  };

  const getPost = (id: string): Post | undefined => {
    const row = q.postGet.get(id);
    return row === undefined ? undefined : toPost(row);
  };

  // The read-decide-write steps, as transaction functions; called with .immediate() (see above).
  // If a Change or Precondition throws, better-sqlite3 rolls the transaction back and rethrows.
  const updatePost = db.transaction((id: string, change: Change<Post, PostFields>): Stored<PostUpdateResult> => {
    const row = q.postGet.get(id);
    if (row === undefined) return { kind: "missing" };
    const current = toPost(row); // a fresh parse: change may do what it likes with it
    const { publishedAt, updatedAt } = current;
    const fields = change(current);
    const item = makePost(id, fields, publishedAt, laterOf(stamp(), updatedAt));
    const representation = representationOf(item);
    const yaml = entryNow(item, representation.json);
    q.postUpdate.run(representation.json, representation.tag, yaml, id);
    return { kind: "updated", item, representation, yaml };
  });
  const pageParameters = (query: PageQuery): JsonPageParameters => {
    const [after, through] = bounds(query);
    return { after, through, limit: query.limit, maxChars: query.maxChars ?? Number.MAX_SAFE_INTEGER };
  };
  const postJsonPageRow = (query: PageQuery, as: "bytes" | "text"): JsonPageRow => {
    const parameters = pageParameters(query);
    const row = q.postJsonPage[as].get(parameters)!;
    return row.last !== null && row.members === null ? q.postJsonPageCut[as].get(parameters)! : row;
  };
  // A read transaction when a page is read row by row: the revision and the rows from one snapshot.
  const postYamlRows = db.transaction((query: PageQuery) => yamlPageOf(q.postYamlRows.iterate(...bounds(query), query.limit + 1), query, (row) => row.bytes, revision("posts")));
  const postYamlPage = (query: PageQuery): YamlPage => {
    const as = query.text === true ? "text" : "bytes";
    const parameters = pageParameters(query);
    let row: YamlPageRow = q.postYamlPage[as].get(parameters)!;
    // Past maxChars with every entry made: cut where the JSON page is cut. A missing entry: the rows.
    if (row.last !== null && row.members === null && row.made === row.count) row = q.postYamlPageCut[as].get(parameters)!;
    if (row.last !== null && row.members === null) return postYamlRows(query);
    const revision = { epoch: row.epoch, n: row.n };
    if (row.last === null) return { entries: as === "text" ? "" : Buffer.alloc(0), count: 0, more: false, revision };
    return { entries: row.members!, count: row.count, last: row.last, more: row.more === 1, revision };
  };
  const keepYamlNow = db.transaction((entries: readonly YamlEntry[]) => {
    for (const { id, tag, yaml } of entries) q.postKeepYaml.run(yaml, id, tag);
  });
  // Entries are kept from reads (a YAML list that made missing ones): such a read must not wait on the event loop
  // for another connection's write lock (the busy timeout sleeps the whole process), so it does not wait at all.
  // An entry not kept now is made again by the next read that needs it: nothing is lost.
  const waitMs = db.pragma("busy_timeout", { simple: true }) as number;
  const keepYaml = (entries: readonly YamlEntry[]): void => {
    db.pragma("busy_timeout = 0");
    try {
      keepYamlNow.immediate(entries);
    } catch (error) {
      if ((error as { code?: string }).code !== "SQLITE_BUSY") throw error;
    } finally {
      db.pragma(`busy_timeout = ${waitMs}`);
    }
  };
  const postJsonPage = (query: PageQuery): JsonPage => {
    const as = query.text === true ? "text" : "bytes";
    const row = postJsonPageRow(query, as);
    const revision = { epoch: row.epoch, n: row.n };
    const none = as === "text" ? "" : Buffer.alloc(0);
    if (row.last === null) return { members: none, count: 0, more: false, revision };
    return { members: row.members ?? none, count: row.count, last: row.last, more: row.more === 1, revision };
  };
  const factJsonPage = db.transaction((query: PageQuery): JsonPage =>
    jsonPageOf(q.factPage.iterate(...bounds(query), query.limit + 1), query, (row) => Buffer.from(JSON.stringify(toFact(row))), revision("facts")),
  );
  const deletePost = db.transaction((id: string, precondition: Precondition<Post> | undefined): boolean => {
    if (precondition !== undefined) {
      const row = q.postGet.get(id);
      if (row === undefined) return false;
      precondition(toPost(row));
    }
    return q.postDelete.run(id).changes > 0;
  });
  const updateArticle = db.transaction((id: string, change: Change<Article, ArticleFields>): UpdateResult<Article> => {
    const row = q.articleGet.get(id);
    if (row === undefined) return { kind: "missing" };
    const fields = change(toArticle(row));
    const updatedAt = laterOf(stamp(), row.updated_at);
    q.articleUpdate.run(fields.title, fields.body, fields.author, updatedAt, id);
    return { kind: "updated", item: makeArticle(id, fields, updatedAt) };
  });

  // New posts are written in groups: the posts asked for in one turn of the event loop (by every
  // connection whose request arrived in it) go into one transaction, committed before any of them is
  // answered. Each commit appends the pages it changed to the WAL, and one post's commit changes the same
  // few pages as the next one's (the table's last leaf, the id index's, AUTOINCREMENT's mark), so a group
  // writes them once instead of once per post. A post is still acknowledged only once its transaction has
  // committed; if the group's transaction fails, every post in it fails, and none was written.
  // Each post's record, JSON text, tag and YAML entry are made when it is asked for, by its own request's
  // turn, so that the group's transaction holds the loop for the rows alone (js-yaml takes tens of µs for a
  // post of 700 bytes: a group of 256 would hold the loop that much longer again).
  type Made = { readonly item: Post; readonly representation: Representation; readonly yaml: string | null };
  type Insert = { readonly made: Made; readonly resolve: (result: Stored<PostCreateResult>) => void; readonly reject: (error: unknown) => void };
  let inserts: Insert[] = [];
  const makeNew = (post: NewPost): Made => {
    const now = stamp();
    const item = makePost(post.id, post, now, now);
    const representation = representationOf(item);
    return { item, representation, yaml: entryNow(item, representation.json) };
  };
  const insertPost = ({ item, representation, yaml }: Made): Stored<PostCreateResult> => {
    const info = q.postInsert.run(item.id, representation.json, representation.tag, yaml, item.id);
    if (info.changes === 0) return { kind: "exists", existing: getPost(item.id)! };
    return { kind: "created", item, representation, yaml };
  };
  // The posts of the group in order, until their JSON reaches MAX_INSERT_GROUP_CHARS: the results of those written.
  const insertGroup = db.transaction((group: readonly Insert[]) => {
    const results: Stored<PostCreateResult>[] = [];
    let chars = 0;
    for (const insert of group) {
      if (chars >= MAX_INSERT_GROUP_CHARS) break;
      const result = insertPost(insert.made);
      results.push(result);
      if (result.kind === "created") chars += result.representation.json.length;
    }
    return results;
  });
  const commitInserts = (): void => {
    if (inserts.length === 0) return;
    // At most MAX_INSERT_GROUP posts and about MAX_INSERT_GROUP_CHARS of text a transaction: the rest wait for
    // the next turn, after the others' reads.
    const group = inserts.slice(0, MAX_INSERT_GROUP);
    let results: Stored<PostCreateResult>[];
    try {
      results = counted(() => insertGroup.immediate(group));
    } catch (error) {
      inserts = inserts.slice(group.length);
      if (inserts.length > 0) setImmediate(commitInserts);
      for (const insert of group) insert.reject(error);
      return;
    }
    inserts = inserts.slice(results.length);
    if (inserts.length > 0) setImmediate(commitInserts);
    results.forEach((result, i) => group[i]!.resolve(result));
  };

  const posts: PostStore = {
    list: async () => q.postList.all().map(toPost),
    get: async (id) => getPost(id),
    representation(id) {
      const row = q.postRepresentation.get(id);
      return row === undefined ? undefined : { json: row.json, tag: row.tag };
    },
    async create(post) {
      const made = makeNew(post);
      return written(
        await new Promise<Stored<PostCreateResult>>((resolve, reject) => {
          // The first of a turn's posts asks for the commit, after the turn's reads (setImmediate).
          if (inserts.push({ made, resolve, reject }) === 1) setImmediate(commitInserts);
        }),
      );
    },
    update: async (id, change) => written(counted(() => updatePost.immediate(id, change))),
    delete: async (id, precondition) => counted(() => deletePost.immediate(id, precondition)),
    page: async (query) => pageOf(q.postPage.iterate(...bounds(query), query.limit), query.maxChars, toPost, postChars),
    pageJson: async (query) => postJsonPage(query),
    pageYaml: async (query) => postYamlPage(query),
    keepYaml: async (entries) => counted(() => keepYaml(entries)),
    span: async (query) => spanOf(q.postSpan.all(...bounds(query), query.limit + 1), query.limit),
    revision: () => revision("posts"),
  };

  const articles: ArticleStore = {
    list: async () => q.articleList.all().map(toArticle),
    async get(id) {
      const row = q.articleGet.get(id);
      return row === undefined ? undefined : toArticle(row);
    },
    update: async (id, change) => wrote(updateArticle.immediate(id, change)),
  };

  const facts: FactStore = {
    list: async () => q.factList.all().map(toFact),
    async get(id) {
      const n = parseSequentialId(id);
      const row = n === undefined ? undefined : q.factGet.get(n);
      return row === undefined ? undefined : toFact(row);
    },
    // A read transaction: the ids and the row come from one snapshot. Found by id, not counted and
    // skipped to (count(*) and OFFSET walk the table: with a million facts, hundreds of milliseconds
    // of the one thread per request). Facts are never deleted and AUTOINCREMENT skips no id, so
    // first..last holds every fact and the pick is list()[floor(r * length)] (see FactStore.random).
    random: async () =>
      db.transaction(() => {
        const { first, last } = q.factIdRange.get()!;
        const index = first === null || last === null ? undefined : pickIndex(random(), last - first + 1);
        return index === undefined ? undefined : toFact(q.factFrom.get(first! + index)!);
      })(),
    create: async (text, source) => toFact(counted(() => q.factInsert.get(text, source, stamp())!)),
    page: async (query) => pageOf(q.factPage.iterate(...bounds(query), query.limit), query.maxChars, toFact, factChars),
    pageJson: async (query) => factJsonPage(query),
    span: async (query) => spanOf(q.factSpan.all(...bounds(query), query.limit + 1), query.limit),
    revision: () => revision("facts"),
  };

  const findToken = (hash: TokenHash): TokenRecord | undefined => {
    const row = q.tokenByHash.get(hash);
    return row === undefined ? undefined : toToken(row);
  };

  const setSettingToken = db.transaction((hash: TokenHash | undefined): SettingResult => {
    const existing = hash === undefined ? undefined : q.tokenByHash.get(hash);
    if (existing !== undefined && existing.role !== "admin") return { kind: "conflict", existing: toToken(existing) };
    // First revoke, then claim: at most one token may have the origin "setting" (a unique index).
    const revoked = q.tokenRevokeSetting.all(hash ?? null).map(toToken);
    if (hash === undefined) return { kind: "none", revoked };
    if (existing === undefined) return { kind: "granted", token: toToken(q.tokenInsert.get("admin", "setting", hash, stamp())!), revoked };
    return { kind: "kept", token: toToken(q.tokenClaim.get(existing.id)!), revoked };
  });

  const tokens: TokenStore = {
    async add(hash, role, origin = "command") {
      const row = wrote(q.tokenInsert.get(role, origin, hash, stamp()));
      if (row === undefined) return { kind: "exists", existing: findToken(hash)! };
      return { kind: "created", item: toToken(row) };
    },
    findByHash: async (hash) => findToken(hash),
    list: async () => q.tokenList.all().map(toToken),
    async revoke(ref) {
      const row = wrote("hash" in ref ? q.tokenDeleteByHash.get(ref.hash) : idOf(ref.id) === undefined ? undefined : q.tokenDeleteById.get(idOf(ref.id)!));
      return row === undefined ? undefined : toToken(row);
    },
    async markUsed(id, olderThan) {
      const n = idOf(id);
      if (n !== undefined) wrote(q.tokenMarkUsed.run(stamp(), n, olderThan));
    },
    // IMMEDIATE takes the write lock before the check, so two processes cannot both see "no admin".
    addFirstAdmin: async (hash) =>
      wrote(db.transaction(() => q.tokenHasAdmin.get() === undefined && q.tokenInsert.get("admin", "first-start", hash, stamp()) !== undefined).immediate()),
    setSettingToken: async (hash) => wrote(setSettingToken.immediate(hash)),
  };

  const seedIfEmpty = (data: SeedData): boolean =>
    db.transaction(() => {
      if (q.anyFactOrArticle.get() !== undefined) return false;
      const now = stamp();
      for (const fact of data.facts) q.factInsert.get(fact.text, fact.source, now);
      for (const a of data.articles) q.articleInsert.run(a.id, a.title, a.body, a.author, now);
      return true;
    }).immediate();

  return {
    posts,
    articles,
    facts,
    tokens,
    seedIfEmpty: async (data) => counted(() => seedIfEmpty(data)),
    key: async (name) => q.key.get(name)!.value,
    async close() {
      // Posts asked for and not yet written are written (or fail) before the database closes.
      while (inserts.length > 0) commitInserts();
      commits.close();
      await checkpoints?.close();
      if (db.open) db.close();
    },
  };
}
