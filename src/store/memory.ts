// The in-memory store: everything lives in Maps and is gone when the process
// ends. Used for DATA_DIR=:memory: and in tests.
//
// Stored records are private objects that no caller ever holds: records come
// in through make* (which copies) and go out through copy*.
//
// The methods are `async` only to honour the Store interface: each one does
// its work synchronously before its first return, so no other call can
// interleave with it, and every method is atomic by construction (a caller's
// Change or Precondition runs synchronously inside that work, too). The one
// wait: a write of a post too long to make its YAML on the loop waits, once
// it is done, for js-yaml's thread to make it (yaml-entry.ts, keepAfterWrite),
// which then is stored in a second step of its own.

import { randomBytes } from "node:crypto";
import {
  clockFrom,
  copyArticle,
  copyFact,
  copyToken,
  laterOf,
  makeArticle,
  makeFact,
  makePost,
  makeToken,
  parseSequentialId,
  pickIndex,
  postChars,
  factChars,
} from "./records.js";
import { createPostOrder, type PostOrder } from "./post-order.js";
import { jsonPageOf, postFromJson, representationOf, yamlPageOf } from "./representation.js";
import { entryNow, keepAfterWrite } from "./yaml-entry.js";
import type {
  Article,
  ArticleStore,
  Fact,
  FactStore,
  KeyName,
  Page,
  PageQuery,
  PageSpan,
  Position,
  Post,
  PostStore,
  Representation,
  Store,
  StoreOptions,
  TokenOrigin,
  TokenRecord,
  TokenStore,
} from "./types.js";

/**
 * A post as stored: its representation (and that JSON in UTF-8, for pages)
 * and its YAML entry (yaml-entry.ts; null until made, when the text is too
 * long to make it on the loop), made when it was written, and nothing else,
 * as in the other stores: a read of the record parses the text
 * (postFromJson), which also makes the copy no caller may share.
 */
interface StoredPost {
  readonly representation: Representation;
  readonly bytes: Buffer;
  yaml: string | null;
}

function storedPost(post: Post): StoredPost {
  const representation = representationOf(post);
  return { representation, bytes: Buffer.from(representation.json), yaml: entryNow(post, representation.json) };
}

const postOf = (stored: StoredPost): Post => postFromJson(stored.representation.json);

interface State {
  /** Map order is insertion order: creation order, as `list()` promises. */
  readonly posts: Map<string, StoredPost>;
  /** Every post's id by position, in position order: pages are cut here (see post-order.ts for what each read costs). */
  readonly postOrder: PostOrder;
  readonly postPositions: Map<string, Position>;
  /** Positions are never reused, not even a deleted post's. */
  nextPostPosition: Position;
  /** Writes per collection (Revision.n). */
  readonly revisions: { posts: number; facts: number };
  readonly articles: Map<string, Article>;
  /** Append-only; the fact with id "n" is at index n - 1. */
  readonly facts: Fact[];
  /** Keyed by hash. */
  readonly tokens: Map<string, TokenRecord>;
  /** Token ids are never reused, not even the id of a revoked token. */
  nextTokenId: number;
}

function emptyState(): State {
  return {
    posts: new Map(),
    postOrder: createPostOrder(),
    postPositions: new Map(),
    nextPostPosition: 1,
    revisions: { posts: 0, facts: 0 },
    articles: new Map(),
    facts: [],
    tokens: new Map(),
    nextTokenId: 1,
  };
}

/**
 * Where a page is read from: the indices from `start`, each followed by
 * `next(i)`, up to `end`, the i-th item at position `positionAt(i)`
 * (ascending). Facts are every index in turn; posts skip deleted ones.
 */
interface Walk {
  readonly start: number;
  readonly end: number;
  next(i: number): number;
  positionAt(i: number): Position;
}

/**
 * A page of the items along `walk`, read with `itemAt(i)`.
 * `chars` is an item's size as PageQuery.maxChars counts it.
 */
function cut<T>(query: PageQuery, walk: Walk, itemAt: (i: number) => T, chars: (item: T) => number): Page<T> {
  const through = query.through ?? Number.MAX_SAFE_INTEGER;
  const maxChars = query.maxChars ?? Infinity;
  const items: T[] = [];
  let last: Position | undefined;
  let total = 0;
  for (let i = walk.start; i < walk.end && items.length < query.limit && walk.positionAt(i) <= through && total < maxChars; i = walk.next(i)) {
    const item = itemAt(i);
    items.push(item);
    total += chars(item);
    last = walk.positionAt(i);
  }
  return last === undefined ? { items } : { items, last };
}

function spanOf(query: PageQuery, walk: Walk): PageSpan {
  const through = query.through ?? Number.MAX_SAFE_INTEGER;
  let last: Position | undefined;
  let i = walk.start;
  for (let taken = 0; i < walk.end && taken < query.limit && walk.positionAt(i) <= through; taken++, i = walk.next(i)) last = walk.positionAt(i);
  const more = i < walk.end && walk.positionAt(i) <= through;
  return last === undefined ? { more } : { last, more };
}

/** The entries along `walk` up to the query's `through`, as rows for jsonPageOf: read only as far as it asks. */
function* rowsFrom(query: PageQuery, walk: Walk, jsonAt: (i: number) => Uint8Array) {
  const through = query.through ?? Number.MAX_SAFE_INTEGER;
  for (let i = walk.start; i < walk.end && walk.positionAt(i) <= through; i = walk.next(i)) yield { pos: walk.positionAt(i), json: jsonAt(i) };
}

/** The posts along `walk` up to the query's `through`, as rows for yamlPageOf: read only as far as it asks. */
function* rowsOf(query: PageQuery, walk: Walk, idAt: (i: number) => string, storedAt: (id: string) => StoredPost) {
  const through = query.through ?? Number.MAX_SAFE_INTEGER;
  for (let i = walk.start; i < walk.end && walk.positionAt(i) <= through; i = walk.next(i)) {
    const id = idAt(i);
    const stored = storedAt(id);
    yield { pos: walk.positionAt(i), id, json: stored.representation.json, tag: stored.representation.tag, yaml: stored.yaml, stored };
  }
}

/** The posts after the query's `after`, skipping deleted ones. */
function postWalk(order: PostOrder, query: PageQuery): Walk {
  return { start: order.firstAfter(query.after ?? 0), end: order.end(), next: order.next, positionAt: order.positionAt };
}

/** The fact with id n is at index n - 1, so its position is its index + 1. */
function factWalk(facts: readonly Fact[], query: PageQuery): Walk {
  return { start: factIndexAfter(query, facts.length), end: facts.length, next: (i) => i + 1, positionAt: (i) => i + 1 };
}

function factIndexAfter(query: PageQuery, count: number): number {
  return Math.min(Math.max(Math.floor(query.after ?? 0), 0), count);
}

export function createMemoryStore(options: StoreOptions = {}): Store {
  const stamp = clockFrom(options);
  const random = options.random ?? Math.random;
  let state = emptyState();
  let closed = false;
  /** Drawn once per store: a new memory store never repeats an old one's revisions. */
  const epoch = randomBytes(8).toString("hex");

  function open(): void {
    if (closed) throw new Error("the store is closed");
  }


  const posts: PostStore = {
    async list() {
      open();
      return [...state.posts.values()].map(postOf);
    },
    async get(id) {
      open();
      const stored = state.posts.get(id);
      return stored === undefined ? undefined : postOf(stored);
    },
    representation(id) {
      open();
      return state.posts.get(id)?.representation;
    },
    async create(input) {
      open();
      const existing = state.posts.get(input.id);
      if (existing !== undefined) return { kind: "exists", existing: postOf(existing) };
      const now = stamp();
      const post = makePost(input.id, input, now, now);
      const stored = storedPost(post);
      state.posts.set(post.id, stored);
      const position = state.nextPostPosition++;
      state.postOrder.append(position, post.id);
      state.postPositions.set(post.id, position);
      state.revisions.posts++;
      await keepAfterWrite(posts, post.id, stored.representation, stored.yaml);
      return { kind: "created", item: post, representation: stored.representation }; // the store keeps no reference to post
    },
    async update(id, change) {
      open();
      const stored = state.posts.get(id);
      if (stored === undefined) return { kind: "missing" };
      const current = postOf(stored); // a fresh parse: change may do what it likes with it
      const { publishedAt, updatedAt } = current;
      const fields = change(current); // throws to change nothing
      const post = makePost(id, fields, publishedAt, laterOf(stamp(), updatedAt));
      const next = storedPost(post);
      state.posts.set(id, next); // replacing a key keeps its place in the Map
      state.revisions.posts++;
      await keepAfterWrite(posts, id, next.representation, next.yaml);
      return { kind: "updated", item: post, representation: next.representation };
    },
    async delete(id, precondition) {
      open();
      const current = state.posts.get(id);
      if (current === undefined) return false;
      precondition?.(postOf(current)); // throws to keep the post
      state.postOrder.remove(state.postPositions.get(id)!);
      state.postPositions.delete(id);
      state.revisions.posts++;
      return state.posts.delete(id);
    },
    async page(query) {
      open();
      const order = state.postOrder;
      return cut(query, postWalk(order, query), (i) => postOf(state.posts.get(order.idAt(i))!), postChars);
    },
    async pageJson(query) {
      open();
      const order = state.postOrder;
      const rows = rowsFrom(query, postWalk(order, query), (i) => state.posts.get(order.idAt(i))!.bytes);
      return jsonPageOf(rows, query, (row) => row.json, { epoch, n: state.revisions.posts });
    },
    async pageYaml(query) {
      open();
      const order = state.postOrder;
      const rows = rowsOf(query, postWalk(order, query), order.idAt, (id) => state.posts.get(id)!);
      return yamlPageOf(rows, query, (row) => row.stored.bytes.length, { epoch, n: state.revisions.posts });
    },
    async keepYaml(entries) {
      open();
      for (const { id, tag, yaml } of entries) {
        const stored = state.posts.get(id);
        if (stored !== undefined && stored.representation.tag === tag && stored.yaml === null) stored.yaml = yaml;
      }
    },
    async span(query) {
      open();
      return spanOf(query, postWalk(state.postOrder, query));
    },
    revision() {
      open();
      return { epoch, n: state.revisions.posts };
    },
  };

  const articles: ArticleStore = {
    async list() {
      open();
      return [...state.articles.values()].map(copyArticle);
    },
    async get(id) {
      open();
      const article = state.articles.get(id);
      return article === undefined ? undefined : copyArticle(article);
    },
    async update(id, change) {
      open();
      const current = state.articles.get(id);
      if (current === undefined) return { kind: "missing" };
      const fields = change(copyArticle(current)); // throws to change nothing
      const article = makeArticle(id, fields, laterOf(stamp(), current.updatedAt));
      state.articles.set(id, article);
      return { kind: "updated", item: copyArticle(article) };
    },
  };

  const facts: FactStore = {
    async list() {
      open();
      return state.facts.map(copyFact);
    },
    async get(id) {
      open();
      const n = parseSequentialId(id);
      const fact = n === undefined ? undefined : state.facts[n - 1];
      return fact === undefined ? undefined : copyFact(fact);
    },
    async random() {
      open();
      const i = pickIndex(random(), state.facts.length);
      const fact = i === undefined ? undefined : state.facts[i];
      return fact === undefined ? undefined : copyFact(fact);
    },
    async create(text, source) {
      open();
      const fact = makeFact(String(state.facts.length + 1), text, source, stamp());
      state.facts.push(fact);
      state.revisions.facts++;
      return copyFact(fact);
    },
    async page(query) {
      open();
      const facts = state.facts;
      return cut(query, factWalk(facts, query), (i) => copyFact(facts[i]!), factChars);
    },
    // Facts are small and few: their JSON is made as they are read.
    async pageJson(query) {
      open();
      const facts = state.facts;
      const rows = rowsFrom(query, factWalk(facts, query), (i) => Buffer.from(JSON.stringify(facts[i]!)));
      return jsonPageOf(rows, query, (row) => row.json, { epoch, n: state.revisions.facts });
    },
    async span(query) {
      open();
      return spanOf(query, factWalk(state.facts, query));
    },
    revision() {
      open();
      return { epoch, n: state.revisions.facts };
    },
  };

  function addToken(hash: TokenRecord["hash"], role: TokenRecord["role"], origin: TokenOrigin): TokenRecord {
    const token = makeToken(String(state.nextTokenId), role, origin, hash, stamp());
    state.nextTokenId += 1;
    state.tokens.set(hash, token);
    return token;
  }

  const tokensOf = (origin: TokenOrigin) => [...state.tokens.values()].filter((token) => token.origin === origin);

  const tokens: TokenStore = {
    async add(hash, role, origin = "command") {
      open();
      const existing = state.tokens.get(hash);
      if (existing !== undefined) return { kind: "exists", existing: copyToken(existing) };
      return { kind: "created", item: copyToken(addToken(hash, role, origin)) };
    },
    async findByHash(hash) {
      open();
      const token = state.tokens.get(hash);
      return token === undefined ? undefined : copyToken(token);
    },
    async list() {
      open();
      // Map order is insertion order, and ids grow with insertion.
      return [...state.tokens.values()].map(copyToken);
    },
    async revoke(ref) {
      open();
      const token = "hash" in ref ? state.tokens.get(ref.hash) : [...state.tokens.values()].find((t) => t.id === ref.id);
      if (token === undefined) return undefined;
      state.tokens.delete(token.hash);
      return copyToken(token);
    },
    async markUsed(id, olderThan) {
      open();
      const token = [...state.tokens.values()].find((t) => t.id === id);
      if (token === undefined || (token.lastUsedAt !== undefined && token.lastUsedAt >= olderThan)) return;
      state.tokens.set(token.hash, makeToken(token.id, token.role, token.origin, token.hash, token.createdAt, stamp()));
    },
    async addFirstAdmin(hash) {
      open();
      for (const token of state.tokens.values()) if (token.role === "admin") return false;
      if (state.tokens.has(hash)) return false; // a user token under this hash: never promote it
      addToken(hash, "admin", "first-start");
      return true;
    },
    async setSettingToken(hash) {
      open();
      const existing = hash === undefined ? undefined : state.tokens.get(hash);
      if (existing !== undefined && existing.role !== "admin") return { kind: "conflict", existing: copyToken(existing) };
      const revoked = tokensOf("setting").filter((token) => token.hash !== hash);
      for (const token of revoked) state.tokens.delete(token.hash);
      const result = { revoked: revoked.map(copyToken) };
      if (hash === undefined) return { kind: "none", ...result };
      if (existing === undefined) return { kind: "granted", token: copyToken(addToken(hash, "admin", "setting")), ...result };
      const claimed = makeToken(existing.id, existing.role, "setting", existing.hash, existing.createdAt, existing.lastUsedAt);
      state.tokens.set(hash, claimed);
      return { kind: "kept", token: copyToken(claimed), ...result };
    },
  };

  // Drawn once per store, as a database draws its own (types.ts, Store.key).
  const keys: Record<KeyName, string> = { "lab-digest": randomBytes(32).toString("hex") };

  return {
    posts,
    articles,
    facts,
    tokens,
    async seedIfEmpty(data) {
      open();
      if (state.facts.length > 0 || state.articles.size > 0) return false;
      // Build everything aside first, so a bad article leaves the store as it was.
      const now = stamp();
      const seededFacts = data.facts.map((f, i) => makeFact(String(i + 1), f.text, f.source, now));
      const seededArticles = new Map<string, Article>();
      for (const a of data.articles) {
        if (seededArticles.has(a.id)) throw new Error(`the seed data has two articles with id ${JSON.stringify(a.id)}`);
        seededArticles.set(a.id, makeArticle(a.id, a, now));
      }
      state.facts.push(...seededFacts);
      state.revisions.facts += seededFacts.length;
      for (const [id, article] of seededArticles) state.articles.set(id, article);
      return true;
    },
    async key(name) {
      open();
      return keys[name];
    },
    async close() {
      closed = true;
      state = emptyState();
    },
  };
}
