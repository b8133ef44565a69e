// Building records in their one canonical shape, shared by every store
// implementation so that the memory, SQLite and PostgreSQL stores return identical
// objects: only the known fields, keys in the order the types declare them
// (so JSON.stringify, and anything hashed from it, is the same whichever store
// is behind the API), absent optional fields as absent keys, arrays copied.

import type {
  Article,
  ArticleFields,
  Fact,
  Post,
  PostFields,
  Role,
  StoreOptions,
  Timestamp,
  TokenHash,
  TokenOrigin,
  TokenRecord,
} from "./types.js";

export function makePost(id: string, fields: PostFields, publishedAt: Timestamp, updatedAt: Timestamp): Post {
  return {
    id,
    title: fields.title,
    body: fields.body,
    ...(fields.author === undefined ? {} : { author: fields.author }),
    ...(fields.tags === undefined ? {} : { tags: [...fields.tags] }),
    publishedAt,
    updatedAt,
  };
}

export function copyPost(post: Post): Post {
  return makePost(post.id, post, post.publishedAt, post.updatedAt);
}

export function makeArticle(id: string, fields: ArticleFields, updatedAt: Timestamp): Article {
  return { id, title: fields.title, body: fields.body, author: fields.author, updatedAt };
}

export function copyArticle(article: Article): Article {
  return makeArticle(article.id, article, article.updatedAt);
}

export function makeFact(id: string, text: string, source: string, createdAt: Timestamp): Fact {
  return { id, text, source, createdAt };
}

export function copyFact(fact: Fact): Fact {
  return makeFact(fact.id, fact.text, fact.source, fact.createdAt);
}

export function makeToken(id: string, role: Role, origin: TokenOrigin, hash: TokenHash, createdAt: Timestamp, lastUsedAt?: Timestamp | null): TokenRecord {
  return { id, role, origin, hash, createdAt, ...(lastUsedAt === undefined || lastUsedAt === null ? {} : { lastUsedAt }) };
}

export function copyToken(token: TokenRecord): TokenRecord {
  return makeToken(token.id, token.role, token.origin, token.hash, token.createdAt, token.lastUsedAt);
}

/** A post's size as PageQuery.maxChars counts it: its title and body, in UTF-16 code units. */
export const postChars = (post: Post): number => post.title.length + post.body.length;
/** A fact's size as PageQuery.maxChars counts it: its text and source. */
export const factChars = (fact: Fact): number => fact.text.length + fact.source.length;

/** The store's clock as a Timestamp-making function. */
export function clockFrom(options: StoreOptions): () => Timestamp {
  const now = options.now ?? (() => new Date());
  return () => now().toISOString();
}

/** An update's `updatedAt`: now, unless the clock stepped back behind `previous`. */
export function laterOf(now: Timestamp, previous: Timestamp): Timestamp {
  return now > previous ? now : previous;
}

/**
 * The index `facts.random()` picks among `count` items for a random number
 * `r` in [0, 1): `Math.floor(r * count)`, kept inside [0, count - 1] even for
 * a random source that strays outside [0, 1). Undefined when `count` is 0.
 */
export function pickIndex(r: number, count: number): number | undefined {
  if (count <= 0) return undefined;
  const i = Math.floor(r * count);
  if (!(i >= 0)) return 0; // negative or NaN
  return Math.min(i, count - 1);
}

/** Ids the store assigns ("1", "2", ...): the canonical decimal form only. */
export function parseSequentialId(id: string): number | undefined {
  return /^[1-9][0-9]{0,14}$/.test(id) ? Number(id) : undefined;
}
