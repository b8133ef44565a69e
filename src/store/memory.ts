// The in-memory store: everything lives in Maps and is gone when the process
// ends. Used for DATA_DIR=:memory: and in tests.
//
// Stored records are private objects that no caller ever holds: records come
// in through make* (which copies) and go out through copy*. So a snapshot of
// the state is a shallow copy of its collections, which is how transactions
// roll back.

import {
  clockFrom,
  copyArticle,
  copyFact,
  copyPost,
  copyToken,
  isThenable,
  laterOf,
  makeArticle,
  makeFact,
  makePost,
  makeToken,
  parseSequentialId,
  pickIndex,
} from "./records.js";
import type {
  Article,
  ArticleStore,
  Fact,
  FactStore,
  Post,
  PostStore,
  Store,
  StoreOptions,
  TokenRecord,
  TokenStore,
} from "./types.js";

interface State {
  /** Map order is insertion order: creation order, as `list()` promises. */
  readonly posts: Map<string, Post>;
  readonly articles: Map<string, Article>;
  /** Append-only; the fact with id "n" is at index n - 1. */
  readonly facts: Fact[];
  /** Keyed by hash. */
  readonly tokens: Map<string, TokenRecord>;
  /** Token ids are never reused, even if revoking tokens is added later. */
  nextTokenId: number;
}

function emptyState(): State {
  return { posts: new Map(), articles: new Map(), facts: [], tokens: new Map(), nextTokenId: 1 };
}

function snapshot(state: State): State {
  return {
    posts: new Map(state.posts),
    articles: new Map(state.articles),
    facts: [...state.facts],
    tokens: new Map(state.tokens),
    nextTokenId: state.nextTokenId,
  };
}

export function createMemoryStore(options: StoreOptions = {}): Store {
  const stamp = clockFrom(options);
  const random = options.random ?? Math.random;
  let state = emptyState();
  let closed = false;

  function open(): void {
    if (closed) throw new Error("the store is closed");
  }

  const posts: PostStore = {
    list() {
      open();
      return [...state.posts.values()].map(copyPost);
    },
    get(id) {
      open();
      const post = state.posts.get(id);
      return post === undefined ? undefined : copyPost(post);
    },
    create(input) {
      open();
      const existing = state.posts.get(input.id);
      if (existing !== undefined) return { kind: "exists", existing: copyPost(existing) };
      const now = stamp();
      const post = makePost(input.id, input, now, now);
      state.posts.set(post.id, post);
      return { kind: "created", item: copyPost(post) };
    },
    update(id, fields) {
      open();
      const current = state.posts.get(id);
      if (current === undefined) return { kind: "missing" };
      const post = makePost(id, fields, current.publishedAt, laterOf(stamp(), current.updatedAt));
      state.posts.set(id, post); // replacing a key keeps its place in the Map
      return { kind: "updated", item: copyPost(post) };
    },
    delete(id) {
      open();
      return state.posts.delete(id);
    },
  };

  const articles: ArticleStore = {
    list() {
      open();
      return [...state.articles.values()].map(copyArticle);
    },
    get(id) {
      open();
      const article = state.articles.get(id);
      return article === undefined ? undefined : copyArticle(article);
    },
    create(input) {
      open();
      const existing = state.articles.get(input.id);
      if (existing !== undefined) return { kind: "exists", existing: copyArticle(existing) };
      const article = makeArticle(input.id, input, stamp());
      state.articles.set(article.id, article);
      return { kind: "created", item: copyArticle(article) };
    },
    update(id, fields) {
      open();
      const current = state.articles.get(id);
      if (current === undefined) return { kind: "missing" };
      const article = makeArticle(id, fields, laterOf(stamp(), current.updatedAt));
      state.articles.set(id, article);
      return { kind: "updated", item: copyArticle(article) };
    },
  };

  const facts: FactStore = {
    list() {
      open();
      return state.facts.map(copyFact);
    },
    get(id) {
      open();
      const n = parseSequentialId(id);
      const fact = n === undefined ? undefined : state.facts[n - 1];
      return fact === undefined ? undefined : copyFact(fact);
    },
    random() {
      open();
      const i = pickIndex(random(), state.facts.length);
      const fact = i === undefined ? undefined : state.facts[i];
      return fact === undefined ? undefined : copyFact(fact);
    },
    create(text, source) {
      open();
      const fact = makeFact(String(state.facts.length + 1), text, source, stamp());
      state.facts.push(fact);
      return copyFact(fact);
    },
  };

  const tokens: TokenStore = {
    add(hash, role) {
      open();
      const existing = state.tokens.get(hash);
      if (existing !== undefined) return { kind: "exists", existing: copyToken(existing) };
      const token = makeToken(String(state.nextTokenId), role, hash, stamp());
      state.nextTokenId += 1;
      state.tokens.set(hash, token);
      return { kind: "created", item: copyToken(token) };
    },
    findByHash(hash) {
      open();
      const token = state.tokens.get(hash);
      return token === undefined ? undefined : copyToken(token);
    },
    hasAdmin() {
      open();
      for (const token of state.tokens.values()) if (token.role === "admin") return true;
      return false;
    },
  };

  return {
    posts,
    articles,
    facts,
    tokens,
    transaction<T>(fn: () => T): T {
      open();
      const saved = snapshot(state);
      let result: T;
      try {
        result = fn();
      } catch (error) {
        state = saved;
        throw error;
      }
      if (isThenable(result)) {
        state = saved;
        throw new TypeError("a transaction function must be synchronous, and this one returned a promise");
      }
      return result;
    },
    close() {
      closed = true;
      state = emptyState();
    },
  };
}
