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

import Database from "better-sqlite3";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { clockFrom, isThenable, laterOf, makeArticle, makeFact, makePost, makeToken, parseSequentialId, pickIndex } from "./records.js";
import { MIGRATIONS } from "./schema.js";
import type { Article, ArticleStore, Fact, FactStore, Post, PostStore, Role, Store, StoreOptions, TokenHash, TokenRecord, TokenStore } from "./types.js";

export type Durability = "normal" | "full";

export interface SqliteOptions extends StoreOptions {
  readonly durability?: Durability;
  /** How long to wait for another process's lock before giving up (ms). */
  readonly busyTimeoutMs?: number;
}

/** Opening failed in a way the operator can fix; the message says how. */
export class StoreOpenError extends Error {
  override readonly name = "StoreOpenError";
}

interface PostRow {
  id: string;
  title: string;
  body: string;
  author: string | null;
  tags: string | null;
  published_at: string;
  updated_at: string;
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
  hash: TokenHash;
  created_at: string;
}

const toPost = (r: PostRow): Post =>
  makePost(
    r.id,
    { title: r.title, body: r.body, ...(r.author === null ? {} : { author: r.author }), ...(r.tags === null ? {} : { tags: JSON.parse(r.tags) as string[] }) },
    r.published_at,
    r.updated_at,
  );
const toArticle = (r: ArticleRow): Article => makeArticle(r.id, r, r.updated_at);
const toFact = (r: FactRow): Fact => makeFact(String(r.id), r.text, r.source, r.created_at);
const toToken = (r: TokenRow): TokenRecord => makeToken(String(r.id), r.role, r.hash, r.created_at);

/** Open (creating if needed) the database file `file`, or ":memory:". */
export function createSqliteStore(file: string, options: SqliteOptions = {}): Store {
  const db = openDatabase(file, options);
  const stamp = clockFrom(options);
  const random = options.random ?? Math.random;

  const q = {
    postList: db.prepare<[], PostRow>("SELECT id, title, body, author, tags, published_at, updated_at FROM posts ORDER BY seq"),
    postGet: db.prepare<[string], PostRow>("SELECT id, title, body, author, tags, published_at, updated_at FROM posts WHERE id = ?"),
    postInsert: db.prepare("INSERT INTO posts (id, title, body, author, tags, published_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING"),
    postUpdate: db.prepare("UPDATE posts SET title = ?, body = ?, author = ?, tags = ?, updated_at = ? WHERE id = ?"),
    postDelete: db.prepare("DELETE FROM posts WHERE id = ?"),
    articleList: db.prepare<[], ArticleRow>("SELECT id, title, body, author, updated_at FROM articles ORDER BY seq"),
    articleGet: db.prepare<[string], ArticleRow>("SELECT id, title, body, author, updated_at FROM articles WHERE id = ?"),
    articleInsert: db.prepare("INSERT INTO articles (id, title, body, author, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING"),
    articleUpdate: db.prepare("UPDATE articles SET title = ?, body = ?, author = ?, updated_at = ? WHERE id = ?"),
    factList: db.prepare<[], FactRow>("SELECT id, text, source, created_at FROM facts ORDER BY id"),
    factGet: db.prepare<[number], FactRow>("SELECT id, text, source, created_at FROM facts WHERE id = ?"),
    factCount: db.prepare<[], { n: number }>("SELECT count(*) AS n FROM facts"),
    factAt: db.prepare<[number], FactRow>("SELECT id, text, source, created_at FROM facts ORDER BY id LIMIT 1 OFFSET ?"),
    factInsert: db.prepare<[string, string, string], FactRow>("INSERT INTO facts (text, source, created_at) VALUES (?, ?, ?) RETURNING id, text, source, created_at"),
    tokenInsert: db.prepare<[Role, string, string], TokenRow>(
      "INSERT INTO tokens (role, hash, created_at) VALUES (?, ?, ?) ON CONFLICT (hash) DO NOTHING RETURNING id, role, hash, created_at",
    ),
    tokenByHash: db.prepare<[string], TokenRow>("SELECT id, role, hash, created_at FROM tokens WHERE hash = ?"),
    tokenHasAdmin: db.prepare<[], { one: number }>("SELECT 1 AS one FROM tokens WHERE role = 'admin' LIMIT 1"),
  };

  const posts: PostStore = {
    list: () => q.postList.all().map(toPost),
    get(id) {
      const row = q.postGet.get(id);
      return row === undefined ? undefined : toPost(row);
    },
    create(post) {
      const now = stamp();
      const info = q.postInsert.run(post.id, post.title, post.body, post.author ?? null, post.tags === undefined ? null : JSON.stringify(post.tags), now, now);
      if (info.changes === 0) return { kind: "exists", existing: posts.get(post.id)! };
      return { kind: "created", item: makePost(post.id, post, now, now) };
    },
    update: (id, fields) =>
      transaction(() => {
        const current = q.postGet.get(id);
        if (current === undefined) return { kind: "missing" } as const;
        const updatedAt = laterOf(stamp(), current.updated_at);
        q.postUpdate.run(fields.title, fields.body, fields.author ?? null, fields.tags === undefined ? null : JSON.stringify(fields.tags), updatedAt, id);
        return { kind: "updated", item: makePost(id, fields, current.published_at, updatedAt) } as const;
      }),
    delete: (id) => q.postDelete.run(id).changes > 0,
  };

  const articles: ArticleStore = {
    list: () => q.articleList.all().map(toArticle),
    get(id) {
      const row = q.articleGet.get(id);
      return row === undefined ? undefined : toArticle(row);
    },
    create(article) {
      const now = stamp();
      const info = q.articleInsert.run(article.id, article.title, article.body, article.author, now);
      if (info.changes === 0) return { kind: "exists", existing: articles.get(article.id)! };
      return { kind: "created", item: makeArticle(article.id, article, now) };
    },
    update: (id, fields) =>
      transaction(() => {
        const current = q.articleGet.get(id);
        if (current === undefined) return { kind: "missing" } as const;
        const updatedAt = laterOf(stamp(), current.updated_at);
        q.articleUpdate.run(fields.title, fields.body, fields.author, updatedAt, id);
        return { kind: "updated", item: makeArticle(id, fields, updatedAt) } as const;
      }),
  };

  const facts: FactStore = {
    list: () => q.factList.all().map(toFact),
    get(id) {
      const n = parseSequentialId(id);
      const row = n === undefined ? undefined : q.factGet.get(n);
      return row === undefined ? undefined : toFact(row);
    },
    random: () =>
      transaction(() => {
        const index = pickIndex(random(), q.factCount.get()!.n);
        if (index === undefined) return undefined;
        return toFact(q.factAt.get(index)!);
      }),
    create: (text, source) => toFact(q.factInsert.get(text, source, stamp())!),
  };

  const tokens: TokenStore = {
    add(hash, role) {
      const row = q.tokenInsert.get(role, hash, stamp());
      if (row === undefined) return { kind: "exists", existing: tokens.findByHash(hash)! };
      return { kind: "created", item: toToken(row) };
    },
    findByHash(hash) {
      const row = q.tokenByHash.get(hash);
      return row === undefined ? undefined : toToken(row);
    },
    hasAdmin: () => q.tokenHasAdmin.get() !== undefined,
  };

  function transaction<T>(fn: () => T): T {
    // better-sqlite3 nests these as savepoints; a throw rolls back this level only.
    return db.transaction(() => {
      const result = fn();
      if (isThenable(result)) throw new TypeError("store.transaction takes a synchronous function; an async one cannot be rolled back");
      return result;
    })();
  }

  return {
    posts,
    articles,
    facts,
    tokens,
    transaction,
    close() {
      if (db.open) db.close();
    },
  };
}

function openDatabase(file: string, options: SqliteOptions): Database.Database {
  let db: Database.Database;
  try {
    if (file !== ":memory:") mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    db = new Database(file, { timeout: options.busyTimeoutMs ?? 5000 });
  } catch (error) {
    throw new StoreOpenError(`cannot open the database ${file}: ${(error as Error).message}. Check that DATA_DIR exists and is writable by this user.`);
  }
  try {
    db.pragma("journal_mode = WAL");
    db.pragma(`synchronous = ${options.durability === "full" ? "FULL" : "NORMAL"}`);
    db.pragma("foreign_keys = ON");
    migrate(db, file);
    return db;
  } catch (error) {
    db.close();
    if (error instanceof StoreOpenError) throw error;
    const code = (error as { code?: string }).code ?? "";
    if (code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT") {
      throw new StoreOpenError(`${file} is not a startline database or is corrupt (${code}). Move it aside (or restore a backup) and start again.`);
    }
    if (code === "SQLITE_BUSY" || code === "SQLITE_LOCKED") {
      throw new StoreOpenError(`${file} is locked by another process (${code}). Stop the other process, or give this server its own DATA_DIR.`);
    }
    if (code === "SQLITE_READONLY" || code === "SQLITE_CANTOPEN" || code === "SQLITE_IOERR" || code.startsWith("SQLITE_READONLY")) {
      throw new StoreOpenError(`cannot write to ${file} (${code}). Check that DATA_DIR is writable by this user.`);
    }
    throw new StoreOpenError(`cannot prepare the database ${file}: ${(error as Error).message}`);
  }
}

/** Schema versions are counted in PRAGMA user_version; each migration moves it up by one. */
function migrate(db: Database.Database, file: string): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new StoreOpenError(
      `${file} has schema version ${current}, newer than this startline understands (${MIGRATIONS.length}). Run a newer startline, or use another DATA_DIR.`,
    );
  }
  for (let version = current; version < MIGRATIONS.length; version++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[version]!);
      db.pragma(`user_version = ${version + 1}`);
    }).immediate();
  }
}
