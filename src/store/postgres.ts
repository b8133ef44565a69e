// The shared store: a PostgreSQL database (node-postgres, a pool of
// connections), for several startline instances on several machines. Chosen
// by DATABASE_URL=postgres://...
//
// Most methods are one statement, atomic by itself. The read-decide-write
// steps (an update, whose Change merges into the stored record and checks
// If-Match; a delete with a Precondition) run in a transaction that reads the row
// with SELECT ... FOR UPDATE: the row stays locked until COMMIT, so an
// instance changing it at the same moment waits, and then reads the row as
// this one left it. The start-time steps that must check and then write
// (seedIfEmpty, and the tokens' addFirstAdmin and setSettingToken) run in a
// transaction that first takes an advisory lock, so that instances starting
// together queue instead of both deciding "empty". Publishing one post id
// from two instances at once is settled by the key: INSERT ... ON CONFLICT
// DO NOTHING on the primary key, so exactly one of them inserts.
//
// Statements are named, so each pooled connection prepares each one once.
// Records leave through the same make* functions as the other stores', so
// every store returns byte-identical JSON.
//
// When the server cannot be reached, calls reject with StoreUnavailableError
// (the API answers 503); the pool opens new connections on later calls, so
// service resumes by itself when the server is back.

import pg from "pg";
import type { PoolClient, QueryConfig, QueryResult, QueryResultRow } from "pg";
import { StoreOpenError, StoreUnavailableError } from "./errors.js";
import { describeOpenFailure, isUnavailable, redactUrl } from "./pg-errors.js";
import { migrate } from "./pg-migrate.js";
import { PG_LOCK, PG_LOCK_SPACE } from "./pg-schema.js";
import { SESSION_SETUP, TYPES } from "./pg-types.js";
import { clockFrom, laterOf, makeArticle, makeFact, makePost, makeToken, parseSequentialId } from "./records.js";
import { jsonPageOf, postFromJson, representationOf, yamlPageOf } from "./representation.js";
import { entryNow, keepAfterWrite } from "./yaml-entry.js";
import type {
  Article,
  ArticleStore,
  Fact,
  FactStore,
  JsonPage,
  Page,
  PageQuery,
  PageSpan,
  Post,
  PostStore,
  PostUpdateResult,
  Representation,
  Revision,
  Role,
  SettingResult,
  Store,
  StoreOptions,
  Timestamp,
  TokenHash,
  TokenOrigin,
  TokenRecord,
  TokenStore,
  UpdateResult,
  YamlPage,
} from "./types.js";
import { DEFAULT_POOL_SIZE } from "./pg-pool-size.js";

export const DEFAULT_QUERY_TIMEOUT_MS = 10_000;
/**
 * How much longer than the server's statement_timeout the client waits. Only
 * the server's timeout cancels a statement: when node-postgres alone gave up
 * (its query_timeout), the statement stayed queued on the server and ran
 * once whatever held it up let go (a row or table lock, a migration), after
 * the API had answered 503 "nothing was changed". A delete was done, a fact
 * added, and added twice when the client retried as told.
 */
export const QUERY_TIMEOUT_MARGIN_MS = 5_000;

export interface PostgresOptions extends StoreOptions {
  /** Connections this process keeps at most (DATABASE_POOL_SIZE). */
  readonly poolSize?: number;
  /** How long to wait for a connection, new or from a busy pool, before answering "unavailable" (ms). */
  readonly connectTimeoutMs?: number;
  /**
   * How long one statement may take (ms): the server cancels it then
   * (statement_timeout), so the call fails having changed nothing, and the
   * API's 503 says so truly. The client waits QUERY_TIMEOUT_MARGIN_MS more
   * before it gives up on a server that does not answer at all.
   */
  readonly queryTimeoutMs?: number;
  /** Where to say that the database went away, and that it came back; default stderr. */
  readonly log?: (line: string) => void;
}

// Rows as the SELECT lists below shape them. Timestamps arrive as Timestamp
// strings (pg-types.ts). A post is its stored JSON text (schema version 5).
interface PostRow {
  json: string;
}
/** A post as a YAML page reads it (Q.postYamlPage). */
interface YamlRow {
  id: string;
  tag: string;
  yaml: string | null;
  /** Only where yaml is NULL. */
  json: string | null;
  /** The JSON text's size in UTF-8, as maxChars counts it. */
  bytes: number;
}
interface ArticleRow {
  id: string;
  title: string;
  body: string;
  author: string;
  updated_at: Timestamp;
}
interface FactRow {
  /** bigint: node-postgres hands int8 over as a string, which is what a fact id is anyway. */
  id: string;
  text: string;
  source: string;
  created_at: Timestamp;
}
interface TokenRow {
  id: string;
  role: Role;
  origin: TokenOrigin;
  hash: TokenHash;
  created_at: Timestamp;
  last_used_at: Timestamp | null;
}

const toPost = (r: PostRow): Post => postFromJson(r.json);
const toArticle = (r: ArticleRow): Article => makeArticle(r.id, r, r.updated_at);
const toFact = (r: FactRow): Fact => makeFact(r.id, r.text, r.source, r.created_at);
const toToken = (r: TokenRow): TokenRecord => makeToken(r.id, r.role, r.origin, r.hash, r.created_at, r.last_used_at);

/**
 * Whether `id` can name a row. PostgreSQL's text cannot hold U+0000: a
 * parameter holding it is refused (22021, "invalid byte sequence") before
 * any row is read, which the API answered as a 500. No post or article has
 * such an id (the API refuses it where ids are made), so it names nothing,
 * as it does in the other stores: a read finds no row, and an update or a
 * delete has none to change. (`GET /api/v1/post/a%00b` is a 404.)
 */
const storable = (id: string): boolean => !id.includes("\u0000");

const ARTICLE = "id, title, body, author, updated_at";
const FACT = "id, text, source, created_at";
const TOKEN = "id, role, origin, hash, created_at, last_used_at";

/** A named statement: prepared once per connection, then only executed. */
function statement(name: string, text: string) {
  return (...values: unknown[]): QueryConfig => ({ name, text, values });
}

/** A page query's bounds as statement values: (after, through]. */
const bounds = (query: PageQuery): [number, number] => [query.after ?? 0, query.through ?? Number.MAX_SAFE_INTEGER];

/** bigint columns arrive as strings; positions and counters stay far below 2^53. */
interface Positioned {
  pos: string;
}

function pageOf<R extends Positioned, T>(rows: R[], to: (row: R) => T): Page<T> {
  const last = rows.at(-1)?.pos;
  return last === undefined ? { items: rows.map(to) } : { items: rows.map(to), last: Number(last) };
}

/** Rows of a JSON page statement: the revision on every row, and no item (pos NULL) on the one row of an empty page. */
type JsonPageRow<R> = { n: string; epoch: string } & ({ pos: string } & R | { pos: null });

/** A JsonPage from the rows of a JSON page statement (see Q.postJsonPage). */
function jsonPageFrom<R>(rows: JsonPageRow<R>[], query: PageQuery, json: (row: { pos: string } & R) => Uint8Array): JsonPage {
  const revision = { epoch: rows[0]!.epoch, n: Number(rows[0]!.n) };
  const items = rows.filter((row): row is { n: string; epoch: string } & { pos: string } & R => row.pos !== null);
  return jsonPageOf(items, query, json, revision);
}

/** Where a page ends, from up to limit + 1 positions after its start. */
function spanOf(rows: Positioned[], limit: number): PageSpan {
  const last = rows[Math.min(limit, rows.length) - 1];
  return last === undefined ? { more: false } : { last: Number(last.pos), more: rows.length > limit };
}

const Q = {
  // Keyset pages: a range scan of the unique index on seq (facts: the primary key), the same cost at any depth.
  // At most $3 rows are read (the inner LIMIT); a running sum of their sizes then cuts the page after the row
  // that reaches maxChars ($4), in the database, so that the rows past it are not sent at all. A post's size
  // (title and body) is read from its JSON text, the only place the row holds them.
  postPage: statement(
    "post-page",
    `SELECT pos, json FROM (
       SELECT pos, json, sum(chars) OVER (ORDER BY pos) - chars AS before FROM (
         SELECT pos, json, length(fields->>'title') + length(fields->>'body') AS chars
         FROM (SELECT seq AS pos, json, json::json AS fields FROM posts WHERE seq > $1 AND seq <= $2 ORDER BY seq LIMIT $3) AS head
       ) AS sized
     ) AS page WHERE before < $4 ORDER BY pos`,
  ),
  postSpan: statement("post-span", "SELECT seq AS pos FROM posts WHERE seq > $1 AND seq <= $2 ORDER BY seq LIMIT $3"),
  // A page as JSON texts with the revision, in one statement (one snapshot). $3 is the limit + 1, and the
  // size cut ($4) keeps one row past the page as well (the first row whose predecessors' sizes reach it),
  // so that whether more follow is known from these rows alone.
  postJsonPage: statement(
    "post-json-page",
    `SELECT r.n, r.epoch, p.pos, p.json FROM revisions AS r LEFT JOIN LATERAL (
       SELECT pos, json FROM (
         SELECT pos, json, lag(before) OVER (ORDER BY pos) AS before_previous FROM (
           SELECT seq AS pos, json, sum(octet_length(json)) OVER (ORDER BY seq) - octet_length(json) AS before
           FROM (SELECT seq, json FROM posts WHERE seq > $1 AND seq <= $2 ORDER BY seq LIMIT $3) AS head
         ) AS sized
       ) AS peeked WHERE coalesce(before_previous, 0) < $4
     ) AS p ON true WHERE r.collection = 'posts' ORDER BY p.pos`,
  ),
  // postJsonPage's rows as YAML: each post's stored entry (yaml-entry.ts) instead of its text, cut the same way
  // (then by yamlPageOf), with the text's size; the text itself only where no entry is stored yet, to make one.
  postYamlPage: statement(
    "post-yaml-page",
    `SELECT r.n, r.epoch, p.pos, p.id, p.tag, p.yaml, p.json, p.bytes FROM revisions AS r LEFT JOIN LATERAL (
       SELECT pos, id, tag, yaml, json, bytes FROM (
         SELECT pos, id, tag, yaml, json, bytes, lag(before) OVER (ORDER BY pos) AS before_previous FROM (
           SELECT seq AS pos, id, tag, yaml, CASE WHEN yaml IS NULL THEN json END AS json, octet_length(json) AS bytes,
                  sum(octet_length(json)) OVER (ORDER BY seq) - octet_length(json) AS before
           FROM (SELECT seq, id, json, tag, yaml FROM posts WHERE seq > $1 AND seq <= $2 ORDER BY seq LIMIT $3) AS head
         ) AS sized
       ) AS peeked WHERE coalesce(before_previous, 0) < $4
     ) AS p ON true WHERE r.collection = 'posts' ORDER BY p.pos`,
  ),
  // Only where the entry was made from the text the row holds (its tag), and only a missing one. It sets no
  // column the revision's trigger watches (pg-schema.ts, migration 7): no post changes, no revision moves. A row
  // locked by a write is waited for, then checked again as that write left it.
  postKeepYaml: statement(
    "post-keep-yaml",
    `UPDATE posts AS p SET yaml = k.yaml FROM unnest($1::text[], $2::text[], $3::text[]) AS k (id, tag, yaml)
     WHERE p.id = k.id AND p.tag = k.tag AND p.yaml IS NULL`,
  ),
  // Facts are small: their page is cut by size after reading (jsonPageOf), up to limit + 1 rows ($3).
  factJsonPage: statement(
    "fact-json-page",
    `SELECT r.n, r.epoch, f.pos, f.id, f.text, f.source, f.created_at FROM revisions AS r LEFT JOIN LATERAL (
       SELECT id AS pos, ${FACT} FROM facts WHERE id > $1 AND id <= $2 ORDER BY id LIMIT $3
     ) AS f ON true WHERE r.collection = 'facts' ORDER BY f.pos`,
  ),
  postRepresentation: statement("post-representation", "SELECT json, tag FROM posts WHERE id = $1"),
  factPage: statement(
    "fact-page",
    `SELECT pos, ${FACT} FROM (
       SELECT *, sum(length(text) + length(source)) OVER (ORDER BY pos) - (length(text) + length(source)) AS before
       FROM (SELECT id AS pos, ${FACT} FROM facts WHERE id > $1 AND id <= $2 ORDER BY id LIMIT $3) AS head
     ) AS page WHERE before < $4 ORDER BY pos`,
  ),
  factSpan: statement("fact-span", "SELECT id AS pos FROM facts WHERE id > $1 AND id <= $2 ORDER BY id LIMIT $3"),
  revision: statement("revision", "SELECT n, epoch FROM revisions WHERE collection = $1"),
  postList: statement("post-list", "SELECT json FROM posts ORDER BY seq"),
  postGet: statement("post-get", "SELECT json FROM posts WHERE id = $1"),
  // In a transaction: the row is locked until COMMIT, and a writer that got there first is waited for, then read as it left it.
  postLock: statement("post-lock", "SELECT json FROM posts WHERE id = $1 FOR UPDATE"),
  postInsert: statement("post-insert", "INSERT INTO posts (id, json, tag, yaml) VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING"),
  // Only on a row locked by postLock: the representation's updatedAt is computed from the locked row's, never
  // backwards (laterOf). The entry goes with the text: a new text never sits beside the old text's entry.
  postUpdate: statement("post-update", "UPDATE posts SET json = $2, tag = $3, yaml = $4 WHERE id = $1"),
  postDelete: statement("post-delete", "DELETE FROM posts WHERE id = $1"),
  articleList: statement("article-list", `SELECT ${ARTICLE} FROM articles ORDER BY seq`),
  articleGet: statement("article-get", `SELECT ${ARTICLE} FROM articles WHERE id = $1`),
  articleLock: statement("article-lock", `SELECT ${ARTICLE} FROM articles WHERE id = $1 FOR UPDATE`),
  articleUpdate: statement(
    "article-update",
    `UPDATE articles SET title = $2, body = $3, author = $4, updated_at = GREATEST($5::timestamptz, updated_at) WHERE id = $1 RETURNING ${ARTICLE}`,
  ),
  factList: statement("fact-list", `SELECT ${FACT} FROM facts ORDER BY id`),
  factGet: statement("fact-get", `SELECT ${FACT} FROM facts WHERE id = $1`),
  // pickIndex (records.ts) in SQL over the ids first..last, in one statement so the ids and the row agree:
  // the first fact from first + floor(r * n), kept in [first, last]. Each step goes down the id's index; a
  // count(*) and an OFFSET walked the table, hundreds of milliseconds per request with a million facts,
  // holding a pooled connection all along. Facts are never deleted, so first..last holds them all; an id
  // the sequence gave to an insert that then failed is skipped, and the fact after it is picked.
  factRandom: statement(
    "fact-random",
    `SELECT ${FACT} FROM facts WHERE id >= (SELECT lo + GREATEST(LEAST(floor($1::float8 * (hi - lo + 1)), hi - lo), 0) FROM (SELECT min(id) AS lo, max(id) AS hi FROM facts) AS ids)::bigint ORDER BY id LIMIT 1`,
  ),
  factInsert: statement("fact-insert", `INSERT INTO facts (text, source, created_at) VALUES ($1, $2, $3) RETURNING ${FACT}`),
  tokenInsert: statement(
    "token-insert",
    `INSERT INTO tokens (role, origin, hash, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (hash) DO NOTHING RETURNING ${TOKEN}`,
  ),
  tokenByHash: statement("token-by-hash", `SELECT ${TOKEN} FROM tokens WHERE hash = $1`),
  tokenList: statement("token-list", `SELECT ${TOKEN} FROM tokens ORDER BY id`),
  tokenDeleteById: statement("token-delete-by-id", `DELETE FROM tokens WHERE id = $1 RETURNING ${TOKEN}`),
  tokenDeleteByHash: statement("token-delete-by-hash", `DELETE FROM tokens WHERE hash = $1 RETURNING ${TOKEN}`),
  // $1 may be NULL (ADMIN_TOKEN unset): IS DISTINCT FROM then revokes every token of the setting.
  tokenRevokeSetting: statement("token-revoke-setting", `DELETE FROM tokens WHERE origin = 'setting' AND hash IS DISTINCT FROM $1 RETURNING ${TOKEN}`),
  tokenClaim: statement("token-claim", `UPDATE tokens SET origin = 'setting' WHERE id = $1 RETURNING ${TOKEN}`),
  tokenMarkUsed: statement("token-mark-used", "UPDATE tokens SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $3)"),
  // Only under the setup lock (see addFirstAdmin): NOT EXISTS alone does not stop two transactions at once.
  tokenFirstAdmin: statement(
    "token-first-admin",
    `INSERT INTO tokens (role, origin, hash, created_at) SELECT 'admin', 'first-start', $1, $2 WHERE NOT EXISTS (SELECT 1 FROM tokens WHERE role = 'admin') ON CONFLICT (hash) DO NOTHING`,
  ),
  setupLock: statement("setup-lock", "SELECT pg_advisory_xact_lock($1, $2)"),
  key: statement("key", "SELECT value FROM keys WHERE name = $1"),
  seeded: statement("seeded", "SELECT EXISTS (SELECT 1 FROM facts) OR EXISTS (SELECT 1 FROM articles) AS seeded"),
  articleInsert: statement("article-insert", "INSERT INTO articles (id, title, body, author, updated_at) VALUES ($1, $2, $3, $4, $5)"),
};

/**
 * Connects to `url`, brings the schema up to date, and returns the store.
 * Rejects with a StoreOpenError (one line: what failed and what to check)
 * when the server cannot be reached or the database cannot be used.
 */
export async function createPostgresStore(url: string, options: PostgresOptions = {}): Promise<Store> {
  const where = redactUrl(url);
  const log = options.log ?? ((line: string) => console.error(line));
  const stamp = clockFrom(options);
  const random = options.random ?? Math.random;
  const statementTimeoutMs = Math.max(1, Math.round(options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS));
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? DEFAULT_POOL_SIZE,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
    query_timeout: statementTimeoutMs + QUERY_TIMEOUT_MARGIN_MS,
    keepAlive: true,
    application_name: "startline",
    types: TYPES,
    // Before a new connection serves any call: UTC and ISO, the text TYPES reads timestamps from; and the
    // server's own limit on a statement, so that one that takes too long is cancelled, not left to run.
    onConnect: async (client) => {
      await client.query(`${SESSION_SETUP}; SET statement_timeout = ${statementTimeoutMs}`);
    },
  });

  // Whether the last call reached the server: an operator is told once when
  // it goes away and once when it is back, not once per failed request.
  let reachable = true;
  let closed = false;
  const lost = (error: Error) => {
    if (!reachable) return;
    reachable = false;
    log(`startline: lost the database at ${where} (${error.message || "no answer"}); requests that need it get 503 until it is back`);
  };
  const reached = () => {
    if (reachable) return;
    reachable = true;
    log(`startline: the database at ${where} is reachable again`);
  };
  // An idle pooled connection whose server goes away emits "error" on the
  // pool; unheard, that would crash the process. The pool drops the
  // connection itself, and the next call finds out whether the server is back.
  pool.on("error", lost);

  /** A failure as the caller should see it: a lost server becomes StoreUnavailableError. */
  const translate = (error: unknown): unknown => {
    if (!isUnavailable(error)) return error;
    lost(error as Error);
    return new StoreUnavailableError(`the database is unreachable: ${(error as Error).message}`, { cause: error });
  };

  async function query<R extends QueryResultRow>(config: QueryConfig): Promise<QueryResult<R>> {
    if (closed) throw new Error("the store is closed");
    try {
      const result = await pool.query<R>(config);
      reached();
      return result;
    } catch (error) {
      throw translate(error);
    }
  }

  /**
   * Runs `fn` in a transaction on one pooled connection: COMMIT if it
   * resolves, ROLLBACK if it rejects (and the call rejects with the same
   * error, so a caller's Change that throws passes through unchanged).
   */
  async function transaction<T>(fn: (client: PoolClient) => Promise<T>): Promise<T> {
    if (closed) throw new Error("the store is closed");
    let client: PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      throw translate(error);
    }
    let broken: Error | undefined;
    try {
      await client.query("BEGIN");
      const result = await fn(client);
      await client.query("COMMIT");
      reached();
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch((rollbackError: Error) => {
        broken = rollbackError; // a connection that cannot even roll back is not given to the next caller
      });
      throw translate(error);
    } finally {
      client.release(broken);
    }
  }

  /** A transaction holding the setup lock: the check-then-write steps of a start. */
  const underSetupLock = <T>(fn: (client: PoolClient) => Promise<T>): Promise<T> =>
    transaction(async (client) => {
      await client.query(Q.setupLock(PG_LOCK_SPACE, PG_LOCK.setup));
      return fn(client);
    });

  let client: PoolClient | undefined;
  try {
    client = await pool.connect();
    await migrate(client, where);
    client.release();
  } catch (error) {
    client?.release(true);
    await pool.end().catch(() => undefined);
    throw error instanceof StoreOpenError ? error : new StoreOpenError(describeOpenFailure(error, url));
  }

  const revision = async (collection: "posts" | "facts"): Promise<Revision> => {
    const row = (await query<{ n: string; epoch: string }>(Q.revision(collection))).rows[0]!;
    return { epoch: row.epoch, n: Number(row.n) };
  };

  const getPost = async (id: string): Promise<Post | undefined> => {
    if (!storable(id)) return undefined;
    const row = (await query<PostRow>(Q.postGet(id))).rows[0];
    return row === undefined ? undefined : toPost(row);
  };

  const yamlPage = async (q: PageQuery): Promise<YamlPage> => {
    const rows = (await query<JsonPageRow<YamlRow>>(Q.postYamlPage(...bounds(q), q.limit + 1, q.maxChars ?? Number.MAX_SAFE_INTEGER))).rows;
    const revision = { epoch: rows[0]!.epoch, n: Number(rows[0]!.n) };
    const items = rows.filter((row): row is { n: string; epoch: string } & { pos: string } & YamlRow => row.pos !== null);
    return yamlPageOf(items, q, (row) => row.bytes, revision);
  };

  const posts: PostStore = {
    list: async () => (await query<PostRow>(Q.postList())).rows.map(toPost),
    get: getPost,
    async representation(id) {
      if (!storable(id)) return undefined;
      const row = (await query<Representation>(Q.postRepresentation(id))).rows[0];
      return row === undefined ? undefined : { json: row.json, tag: row.tag };
    },
    async create(post) {
      const now = stamp();
      const item = makePost(post.id, post, now, now);
      const representation = representationOf(item);
      const yaml = entryNow(item, representation.json);
      // Usually one pass. A second only if the post that blocked the insert was deleted before we could read it.
      for (let attempt = 0; attempt < 3; attempt++) {
        const inserted = await query(Q.postInsert(post.id, representation.json, representation.tag, yaml));
        if (inserted.rowCount === 1) {
          await keepAfterWrite(posts, post.id, representation, yaml);
          return { kind: "created", item, representation };
        }
        const existing = await getPost(post.id);
        if (existing !== undefined) return { kind: "exists", existing };
      }
      throw new Error(`publishing post ${JSON.stringify(post.id)} kept conflicting with a post that was deleted at once`);
    },
    async update(id, change) {
      if (!storable(id)) return { kind: "missing" };
      let yaml: string | null = null;
      const result = await transaction(async (c): Promise<PostUpdateResult> => {
        const row = (await c.query<PostRow>(Q.postLock(id))).rows[0];
        if (row === undefined) return { kind: "missing" };
        const current = toPost(row); // a fresh parse: change may do what it likes with it
        const { publishedAt, updatedAt } = current;
        const fields = change(current);
        // updatedAt never moves backwards, even when this machine's clock does (or lags another's).
        const item = makePost(id, fields, publishedAt, laterOf(stamp(), updatedAt));
        const representation = representationOf(item);
        yaml = entryNow(item, representation.json);
        await c.query(Q.postUpdate(id, representation.json, representation.tag, yaml));
        return { kind: "updated", item, representation };
      });
      if (result.kind === "updated") await keepAfterWrite(posts, id, result.representation, yaml);
      return result;
    },
    async delete(id, precondition) {
      if (!storable(id)) return false;
      if (precondition === undefined) return (await query(Q.postDelete(id))).rowCount === 1;
      return transaction(async (c) => {
        const row = (await c.query<PostRow>(Q.postLock(id))).rows[0];
        if (row === undefined) return false;
        precondition(toPost(row));
        return (await c.query(Q.postDelete(id))).rowCount === 1;
      });
    },
    page: async (q) => pageOf((await query<PostRow & Positioned>(Q.postPage(...bounds(q), q.limit, q.maxChars ?? Number.MAX_SAFE_INTEGER))).rows, toPost),
    pageJson: async (q) =>
      jsonPageFrom((await query<JsonPageRow<{ json: string }>>(Q.postJsonPage(...bounds(q), q.limit + 1, q.maxChars ?? Number.MAX_SAFE_INTEGER))).rows, q, (row) => Buffer.from(row.json)),
    pageYaml: (q) => yamlPage(q),
    async keepYaml(entries) {
      const kept = entries.filter((entry) => storable(entry.id));
      if (kept.length > 0) await query(Q.postKeepYaml(kept.map((e) => e.id), kept.map((e) => e.tag), kept.map((e) => e.yaml)));
    },
    span: async (q) => spanOf((await query<Positioned>(Q.postSpan(...bounds(q), q.limit + 1))).rows, q.limit),
    revision: () => revision("posts"),
  };

  const articles: ArticleStore = {
    list: async () => (await query<ArticleRow>(Q.articleList())).rows.map(toArticle),
    async get(id) {
      if (!storable(id)) return undefined;
      const row = (await query<ArticleRow>(Q.articleGet(id))).rows[0];
      return row === undefined ? undefined : toArticle(row);
    },
    update: (id, change) => {
      if (!storable(id)) return Promise.resolve({ kind: "missing" });
      return transaction(async (c): Promise<UpdateResult<Article>> => {
        const row = (await c.query<ArticleRow>(Q.articleLock(id))).rows[0];
        if (row === undefined) return { kind: "missing" };
        const fields = change(toArticle(row));
        const updated = (await c.query<ArticleRow>(Q.articleUpdate(id, fields.title, fields.body, fields.author, stamp()))).rows[0]!;
        return { kind: "updated", item: toArticle(updated) };
      });
    },
  };

  const facts: FactStore = {
    list: async () => (await query<FactRow>(Q.factList())).rows.map(toFact),
    async get(id) {
      const n = parseSequentialId(id);
      const row = n === undefined ? undefined : (await query<FactRow>(Q.factGet(n))).rows[0];
      return row === undefined ? undefined : toFact(row);
    },
    async random() {
      const r = random();
      // PostgreSQL orders NaN above every number; pickIndex sends it to the first fact, and so does this.
      const row = (await query<FactRow>(Q.factRandom(Number.isNaN(r) ? 0 : r))).rows[0];
      return row === undefined ? undefined : toFact(row);
    },
    create: async (text, source) => toFact((await query<FactRow>(Q.factInsert(text, source, stamp()))).rows[0]!),
    page: async (q) => pageOf((await query<FactRow & Positioned>(Q.factPage(...bounds(q), q.limit, q.maxChars ?? Number.MAX_SAFE_INTEGER))).rows, toFact),
    pageJson: async (q) => jsonPageFrom((await query<JsonPageRow<FactRow>>(Q.factJsonPage(...bounds(q), q.limit + 1))).rows, q, (row) => Buffer.from(JSON.stringify(toFact(row)))),
    span: async (q) => spanOf((await query<Positioned>(Q.factSpan(...bounds(q), q.limit + 1))).rows, q.limit),
    revision: () => revision("facts"),
  };

  const findToken = async (hash: TokenHash): Promise<TokenRecord | undefined> => {
    const row = (await query<TokenRow>(Q.tokenByHash(hash))).rows[0];
    return row === undefined ? undefined : toToken(row);
  };

  const tokens: TokenStore = {
    async add(hash, role, origin = "command") {
      // Usually one pass. A second only if the token that blocked the insert was revoked before we could read it.
      for (let attempt = 0; attempt < 3; attempt++) {
        const row = (await query<TokenRow>(Q.tokenInsert(role, origin, hash, stamp()))).rows[0];
        if (row !== undefined) return { kind: "created", item: toToken(row) };
        const existing = await findToken(hash);
        if (existing !== undefined) return { kind: "exists", existing };
      }
      throw new Error("adding a token kept conflicting with a token that was revoked at once");
    },
    findByHash: findToken,
    list: async () => (await query<TokenRow>(Q.tokenList())).rows.map(toToken),
    async revoke(ref) {
      let row: TokenRow | undefined;
      if ("hash" in ref) row = (await query<TokenRow>(Q.tokenDeleteByHash(ref.hash))).rows[0];
      else if (parseSequentialId(ref.id) !== undefined) row = (await query<TokenRow>(Q.tokenDeleteById(ref.id))).rows[0];
      return row === undefined ? undefined : toToken(row);
    },
    async markUsed(id, olderThan) {
      if (parseSequentialId(id) !== undefined) await query(Q.tokenMarkUsed(id, stamp(), olderThan));
    },
    addFirstAdmin: (hash) => underSetupLock(async (c) => (await c.query(Q.tokenFirstAdmin(hash, stamp()))).rowCount === 1),
    setSettingToken: (hash) =>
      underSetupLock(async (c): Promise<SettingResult> => {
        const existing = hash === undefined ? undefined : (await c.query<TokenRow>(Q.tokenByHash(hash))).rows[0];
        if (existing !== undefined && existing.role !== "admin") return { kind: "conflict", existing: toToken(existing) };
        // First revoke, then claim: at most one token may have the origin "setting" (a unique index).
        const revoked = (await c.query<TokenRow>(Q.tokenRevokeSetting(hash ?? null))).rows.map(toToken);
        if (hash === undefined) return { kind: "none", revoked };
        if (existing === undefined) {
          return { kind: "granted", token: toToken((await c.query<TokenRow>(Q.tokenInsert("admin", "setting", hash, stamp()))).rows[0]!), revoked };
        }
        return { kind: "kept", token: toToken((await c.query<TokenRow>(Q.tokenClaim(existing.id))).rows[0]!), revoked };
      }),
  };

  return {
    posts,
    articles,
    facts,
    tokens,
    seedIfEmpty: (data) =>
      underSetupLock(async (c) => {
        if ((await c.query<{ seeded: boolean }>(Q.seeded())).rows[0]!.seeded) return false;
        const now = stamp();
        for (const fact of data.facts) await c.query(Q.factInsert(fact.text, fact.source, now));
        for (const a of data.articles) await c.query(Q.articleInsert(a.id, a.title, a.body, a.author, now));
        return true;
      }),
    key: async (name) => (await query<{ value: string }>(Q.key(name))).rows[0]!.value,
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
}
