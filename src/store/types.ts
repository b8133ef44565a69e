// The storage layer's domain types and the Store interface.
//
// The store knows nothing of HTTP: no status codes, no requests, no input
// validation. The API layer checks lengths, allowed fields and id syntax; the
// store stores what it is given and sets the timestamps and generated ids.
//
// The interface is asynchronous: every method returns a promise, because one
// implementation (PostgreSQL) has to wait for a database server; the memory and
// SQLite stores answer at once and resolve right away. Expected outcomes ("that
// id exists", "that id is missing") are resolved values, discriminated by
// `kind`, never rejections. A rejection means a bug or a broken store (a closed
// store, a full disk), or, as a StoreUnavailableError (errors.ts), a database
// server that cannot be reached right now.
//
// There is no general transaction: better-sqlite3 cannot keep one open across
// an `await`. Instead every method is atomic by itself, including the one
// multi-record write, `seedIfEmpty`, and the read-decide-write steps a
// handler needs: `update` and `delete` take a function that sees the record
// as stored inside the store's write transaction and decides there (a
// precondition such as If-Match, a merge patch), so that no other process can
// change the record between the decision and the write.
//
// Every object a store returns is a fresh copy: mutating it (or an array in
// it) never changes what is stored, and mutating an object after passing it in
// never changes what was stored either.

/**
 * An RFC 3339 date-time in UTC with millisecond precision, exactly as
 * `Date.prototype.toISOString()` writes it: "2025-11-22T19:53:00.000Z".
 * Strings of this one shape sort chronologically.
 */
export type Timestamp = string;

// ---------------------------------------------------------------------------
// Outcomes

/** The outcome of inserting a record under a key the caller chose. */
export type CreateResult<T> =
  | { readonly kind: "created"; readonly item: T }
  /** Nothing was written; `existing` is the record already under that key. */
  | { readonly kind: "exists"; readonly existing: T };

/** The outcome of changing a record by id. */
export type UpdateResult<T> =
  | { readonly kind: "updated"; readonly item: T }
  | { readonly kind: "missing" };

/**
 * How a caller changes a stored record: called with the record exactly as
 * stored at that moment, read inside the store's write transaction (with the
 * record locked against every other process), it returns the record's new
 * client-written fields. To change nothing it throws; the store then writes
 * nothing and the call rejects with what it threw (a failed precondition, an
 * invalid result: the caller's outcome, which the store passes through).
 *
 * It runs synchronously and must not keep what it is given: it may be called
 * while a database lock is held, so it does only the caller's arithmetic.
 */
export type Change<T, F> = (current: T) => F;

/**
 * What must hold of a stored record for it to be deleted (a client's If-Match,
 * say), checked like a Change runs (inside the transaction, on the record as
 * stored); it throws to keep the record.
 */
export type Precondition<T> = (current: T) => void;

// ---------------------------------------------------------------------------
// Collections: pages and revisions

/**
 * Where an item sits in its collection's order: a whole number that only
 * grows with creation (a post's creation sequence, a fact's id), never reused
 * and never moved by an update. Pages are cut by position (keyset paging),
 * so a page costs the same wherever it starts, and an item added or deleted
 * between two pages neither shifts nor repeats any other item: new items
 * have higher positions than every item that existed before them.
 * (PostgreSQL draws positions from a sequence when an insert starts, so an
 * insert still in flight while a page is read may commit below that page's
 * end; one that starts after a page was read lands after it.)
 */
export type Position = number;

export interface PageQuery {
  /** Start after this position; absent or 0: from the first item. */
  readonly after?: Position;
  /** At most this many items (a whole number of at least 1). */
  readonly limit: number;
  /** Leave out the items past this position. */
  readonly through?: Position;
  /**
   * Stop once the items' text (a post's title and body, a fact's text and
   * source, in UTF-16 code units) reaches this many characters: the item
   * that crosses it is the last one. At least one item comes whatever its
   * size, so a reader walking by `last` still moves on. A count alone cannot
   * bound a page's memory when item sizes vary (256 posts can be 25 KB or
   * 25 MB).
   */
  readonly maxChars?: number;
  /**
   * For pageJson and pageYaml: the members (the entries) as a string, where
   * the store reads them as text (SQLite; every store for pageYaml's joined
   * entries); bytes otherwise. A string costs more to make (SQLite's
   * UTF-8 is decoded, and encoded again when sent: up to twice the time of a
   * page of bytes), but V8 collects it with its young generation, where a
   * dropped Buffer waits until V8 counts tens of MiB of external memory. A
   * long list asks for it after its first batch: 50 clients that stopped
   * reading one grew the server by ~45 MiB with bytes, ~15 with text
   * (docs/reliability.md).
   */
  readonly text?: boolean;
}

/** Where a page ends, without its items. */
export interface PageSpan {
  /** The position of the page's last item; absent when the page is empty. */
  readonly last?: Position;
  /** Whether items follow `last` (up to `through`, when given). */
  readonly more: boolean;
}

/** Up to `limit` items after `after`, in the collection's order; a fresh array. Read in one statement: a consistent snapshot. */
export interface Page<T> {
  readonly items: T[];
  /** The position of the last item of `items`; absent when there are none. */
  readonly last?: Position;
}

/**
 * The version of a collection as a whole. `n` grows by one with every write
 * to the collection (each item created, changed or deleted), in the same
 * transaction as the write, and never otherwise; every process on one
 * database reads the same value. `epoch` is drawn at random when the
 * database (or memory store) is created, so two databases never share a
 * revision even when their counters agree.
 */
export interface Revision {
  readonly epoch: string;
  readonly n: number;
}

/**
 * A page of items in their JSON form, with the collection's revision read
 * no later than the items (so the items are at least as new as it): what a
 * list sends, with nothing left to parse, serialize or encode. `maxChars`
 * counts the bytes of the JSON text here.
 */
export interface JsonPage {
  /**
   * The items' JSON texts joined by ",": the members of a JSON array, byte for
   * byte (in UTF-8) what JSON.stringify(items) holds between its brackets. As
   * bytes, or as a string when the query asked for text and the store reads
   * text (PageQuery.text).
   */
  readonly members: Uint8Array | string;
  readonly count: number;
  /** The position of the last item; absent when there are none. */
  readonly last?: Position;
  /** Whether items follow `last` (up to `through`, when given); false for an empty page. */
  readonly more: boolean;
  /** The collection's revision, read before the items or in the same snapshot. */
  readonly revision: Revision;
}

/**
 * A page of posts in YAML, as a YAML list joins them: each post's entry
 * (src/representation/yaml.ts, yamlEntry) as the store keeps it beside the
 * post's JSON text, read with whether more follow and the revision, in one
 * snapshot. `maxChars` counts the bytes of the JSON texts, as in JsonPage, so
 * a YAML page is cut where the JSON one is.
 *
 * When every post of the page has its entry stored, `entries` holds them
 * joined (UTF-8 bytes, or a string when the query asked for text, as
 * JsonPage.members): what the list sends, with nothing to make. A post
 * written before the store kept YAML, or one whose entry is still being made
 * off the event loop (see PostStore.keepYaml), has none yet: then `items`
 * holds every post of the page instead, each with its id and tag, and its
 * entry where one is stored or else its JSON text, so the caller can make the
 * missing ones (and give them to keepYaml).
 */
export type YamlPage = {
  readonly count: number;
  /** The position of the last post; absent when there are none. */
  readonly last?: Position;
  /** Whether posts follow `last` (up to `through`, when given); false for an empty page. */
  readonly more: boolean;
  readonly revision: Revision;
} & ({ readonly entries: Uint8Array | string; readonly items?: undefined } | { readonly entries?: undefined; readonly items: readonly YamlItem[] });

/** A post of a YamlPage whose entries are not all stored: its entry, or its JSON text to make one from. */
export type YamlItem = { readonly id: string; readonly tag: string } & ({ readonly yaml: string } | { readonly yaml: null; readonly json: string });

/**
 * A post's YAML entry made from its JSON text, for PostStore.keepYaml: it is
 * stored only while the post's tag is still `tag` (the JSON text it was made
 * from).
 */
export interface YamlEntry {
  readonly id: string;
  readonly tag: string;
  readonly yaml: string;
}

/** The cursor-style reads every listable collection offers. */
export interface PagedCollection<T> {
  page(query: PageQuery): Promise<Page<T>>;
  /** The page `page(query)` would give, as JSON text, with whether more follow and the revision it was read at. */
  pageJson(query: PageQuery): Promise<JsonPage>;
  /** Where `page(query)` would end, and whether more items follow it, from the index alone (no item is read). */
  span(query: PageQuery): Promise<PageSpan>;
  /**
   * The collection's revision. A store that has it at hand (SQLite, memory)
   * gives it at once rather than as a promise, so that a read served from
   * kept bytes (src/api/kept-reads.ts) is answered in the turn that read its
   * request, with no wait for the microtask queue; PostgreSQL's is a promise.
   */
  revision(): Revision | Promise<Revision>;
}

// ---------------------------------------------------------------------------
// Posts

/**
 * The fields of a post that a client writes. An update's Change returns the
 * complete set (the API layer applies the JSON merge patch to the stored post
 * in it), so an absent `author` or `tags` after the merge removes it. An empty `tags` array
 * is kept as an empty array, distinct from no `tags`.
 */
export interface PostFields {
  readonly title: string;
  readonly body: string;
  readonly author?: string;
  readonly tags?: readonly string[];
}

/** A post to publish: the client's fields under the id from the path. */
export interface NewPost extends PostFields {
  readonly id: string;
}

/**
 * A stored post. `publishedAt` is set once, on creation; `updatedAt` equals it
 * on creation and moves on every update, never backwards (so it is never
 * earlier than `publishedAt`, even if the clock steps back). Optional fields
 * that are absent are absent keys, never keys holding `undefined`.
 */
export interface Post extends NewPost {
  readonly publishedAt: Timestamp;
  readonly updatedAt: Timestamp;
}

/**
 * A stored record's representation in its final form, computed when it was
 * written, in the same transaction as the write: `json` is exactly
 * JSON.stringify of the record as the store returns it, and `tag` the first
 * 27 base64url characters of the SHA-256 of that text in UTF-8 (the opaque
 * part of its strong entity tag). A read that serves it parses and hashes
 * nothing. See representation.ts.
 */
export interface Representation {
  readonly json: string;
  readonly tag: string;
}

/** A post as written, with its representation. */
export interface WrittenPost {
  readonly item: Post;
  readonly representation: Representation;
}

export type PostCreateResult = ({ readonly kind: "created" } & WrittenPost) | { readonly kind: "exists"; readonly existing: Post };
export type PostUpdateResult = ({ readonly kind: "updated" } & WrittenPost) | { readonly kind: "missing" };

export interface PostStore extends PagedCollection<Post> {
  /** All posts, oldest first (in the order they were created); a fresh array. */
  list(): Promise<Post[]>;
  get(id: string): Promise<Post | undefined>;
  /** Post `id`'s representation as stored (no parsing, no hashing), or undefined when there is none; at once where the store has it at hand, as revision(). */
  representation(id: string): Representation | undefined | Promise<Representation | undefined>;
  /** The page `page(query)` would give, as the posts' YAML entries, read in one snapshot with the revision (YamlPage). */
  pageYaml(query: PageQuery): Promise<YamlPage>;
  /**
   * Stores YAML entries made for posts that had none (YamlPage.items), each
   * only where the post is still there with the tag it was made from and
   * still has none: an entry is a function of the JSON text alone, so no
   * entry is ever stored beside a text it was not made from. It changes no
   * post: the revision does not move. Entries whose post changed meanwhile
   * are dropped, and so may all be when the database is busy with another
   * writer (SQLite does not wait for it: the caller is a read): a post
   * without its entry has it made again by the next read that needs it.
   */
  keepYaml(entries: readonly YamlEntry[]): Promise<void>;
  /**
   * Publishes a post; "exists" (and nothing written) if the id is taken. Of
   * several processes publishing the same id at once, exactly one gets
   * "created".
   */
  create(post: NewPost): Promise<PostCreateResult>;
  /**
   * Replaces the client-written fields of post `id` with what `change`
   * returns for the stored post, keeps `id`, `publishedAt` and the post's
   * place in `list()`, and sets `updatedAt`; "missing" (and `change` not
   * called) if there is no such post. Read, change and write are one atomic
   * step: of several updates at once, in any processes, each one's `change`
   * sees the result of the ones before it, so none is lost.
   */
  update(id: string, change: Change<Post, PostFields>): Promise<PostUpdateResult>;
  /**
   * True if a post was deleted, false if there was none with that id. With a
   * `precondition`, it is called on the stored post in the same atomic step,
   * and the post is deleted only if it returns (if it throws, the call rejects).
   */
  delete(id: string, precondition?: Precondition<Post>): Promise<boolean>;
}

// ---------------------------------------------------------------------------
// Articles

/** The fields of an article an administrator writes. All are required. */
export interface ArticleFields {
  readonly title: string;
  readonly body: string;
  readonly author: string;
}

export interface NewArticle extends ArticleFields {
  readonly id: string;
}

/** A stored article; `updatedAt` is set by the store on create and update. */
export interface Article extends NewArticle {
  readonly updatedAt: Timestamp;
}

/** Articles arrive with the seed data (`Store.seedIfEmpty`); the API only reads and changes them. */
export interface ArticleStore {
  /** All articles in the order they were created; a fresh array. */
  list(): Promise<Article[]>;
  get(id: string): Promise<Article | undefined>;
  /**
   * Replaces the fields of article `id` with what `change` returns for the
   * stored article, and sets `updatedAt` (never backwards); atomic like
   * `PostStore.update`.
   */
  update(id: string, change: Change<Article, ArticleFields>): Promise<UpdateResult<Article>>;
}

// ---------------------------------------------------------------------------
// Facts

/**
 * A fact about HTTP. Ids are assigned by the store: the decimal strings
 * "1", "2", "3", ... in creation order, never reused. `get` matches ids
 * exactly as strings ("01" and " 1" are not "1"). (PostgreSQL may skip a
 * number that a failed write had drawn from its sequence; ids still only grow.)
 */
export interface Fact {
  readonly id: string;
  readonly text: string;
  /** Where the fact can be checked ("RFC 9110 §15.5.14"), or "api". */
  readonly source: string;
  readonly createdAt: Timestamp;
}

export interface FactStore extends PagedCollection<Fact> {
  /** All facts in id order (creation order); a fresh array. */
  list(): Promise<Fact[]>;
  get(id: string): Promise<Fact | undefined>;
  /**
   * A fact chosen with the store's random source: with facts `list()` and
   * `r = random()` in [0, 1), the fact `list()[Math.floor(r * length)]`.
   * Undefined when there are no facts. Found by id, never by walking the
   * facts: where ids have a gap (a PostgreSQL sequence skips the id of an
   * insert that failed), a pick that falls in it takes the fact after it.
   */
  random(): Promise<Fact | undefined>;
  /** Adds a fact with the next id; a fact has no natural key, so no "exists". */
  create(text: string, source: string): Promise<Fact>;
}

// ---------------------------------------------------------------------------
// Tokens

export const ROLES = ["user", "admin"] as const;
export type Role = (typeof ROLES)[number];

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

declare const tokenHashBrand: unique symbol;

/**
 * The SHA-256 digest of a bearer token, as 64 lowercase hex digits. A branded
 * string: the only way to get one is `asTokenHash`, so a plaintext token
 * cannot be handed to the store by mistake. The store never sees plaintext.
 */
export type TokenHash = string & { readonly [tokenHashBrand]: true };

const TOKEN_HASH = /^[0-9a-f]{64}$/;

/**
 * Brands a digest, e.g. `asTokenHash(createHash("sha256").update(token).digest("hex"))`.
 * Throws (a bug, not an expected outcome) if it is not 64 lowercase hex digits.
 */
export function asTokenHash(hex: string): TokenHash {
  if (!TOKEN_HASH.test(hex)) throw new TypeError("a token hash is a SHA-256 digest as 64 lowercase hex digits");
  return hex as TokenHash;
}

/**
 * How a token came to be: from the ADMIN_TOKEN setting ("setting"), made by
 * `npm run token -- add` ("command"), or made and printed at a first start
 * without ADMIN_TOKEN ("first-start"). Tokens stored before origins were
 * recorded are "unknown".
 */
export const TOKEN_ORIGINS = ["setting", "command", "first-start", "unknown"] as const;
export type TokenOrigin = (typeof TOKEN_ORIGINS)[number];

/**
 * A token as stored. Ids are assigned by the store, "1", "2", ... in creation
 * order and never reused, so logs and `npm run token -- list` can name a
 * token without its hash. `lastUsedAt` is absent until the token is first
 * used, and recorded to within a minute (see `markUsed`).
 */
export interface TokenRecord {
  readonly id: string;
  readonly role: Role;
  readonly origin: TokenOrigin;
  readonly hash: TokenHash;
  readonly createdAt: Timestamp;
  readonly lastUsedAt?: Timestamp;
}

/** Which token to revoke: by its id, or by its hash (for an operator who holds the token itself). */
export type TokenRef = { readonly id: string } | { readonly hash: TokenHash };

/** The outcome of making ADMIN_TOKEN's value the one token the setting grants. */
export type SettingResult =
  /** Stored as a new admin token ("granted"), or already stored as an admin token ("kept"); `revoked` lists what earlier values had granted. */
  | { readonly kind: "granted" | "kept"; readonly token: TokenRecord; readonly revoked: readonly TokenRecord[] }
  /** No value: nothing is granted, and what earlier values had granted is revoked. */
  | { readonly kind: "none"; readonly revoked: readonly TokenRecord[] }
  /** The value is a standard user's token: nothing was changed (the role of a token never changes). */
  | { readonly kind: "conflict"; readonly existing: TokenRecord };

export interface TokenStore {
  /** Stores a token's hash with its role; "exists" if that hash is stored. `origin` defaults to "command". */
  add(hash: TokenHash, role: Role, origin?: TokenOrigin): Promise<CreateResult<TokenRecord>>;
  /** The token with this hash, if it exists (a revoked token does not). */
  findByHash(hash: TokenHash): Promise<TokenRecord | undefined>;
  /** Every token, in id order; a fresh array. */
  list(): Promise<TokenRecord[]>;
  /**
   * Removes the token for good: from the moment this resolves, `findByHash`
   * finds it nowhere (in no process: nothing caches tokens). Resolves with the
   * record that was removed, or undefined if there was none.
   */
  revoke(ref: TokenRef): Promise<TokenRecord | undefined>;
  /**
   * Records that token `id` was used now. To keep writes off the hot path,
   * callers call it at most about once a minute per token (when `lastUsedAt`
   * is older than that), and the store writes only if `lastUsedAt` is older
   * than `olderThan`. Nothing happens for a token that is gone.
   */
  markUsed(id: string, olderThan: Timestamp): Promise<void>;
  /**
   * Stores `hash` as an admin token if, and only if, no admin token exists
   * yet; true if it did (its origin is "first-start"). Atomic: of several
   * processes starting at once on an empty database, exactly one creates (and
   * prints) the first admin token.
   */
  addFirstAdmin(hash: TokenHash): Promise<boolean>;
  /**
   * Makes `hash` (ADMIN_TOKEN's value, or undefined when it is unset) the one
   * token with origin "setting": every other token of that origin is revoked,
   * and `hash` is stored as an admin token, or, if it is an admin token
   * already, takes that origin (so that the next value revokes it). All in
   * one atomic step, so instances starting together settle on one value.
   */
  setSettingToken(hash: TokenHash | undefined): Promise<SettingResult>;
}

// ---------------------------------------------------------------------------
// Seed data

export interface SeedFact {
  readonly text: string;
  readonly source: string;
}

/** What a new store starts with (src/store/seed.ts holds startline's). */
export interface SeedData {
  readonly facts: readonly SeedFact[];
  readonly articles: readonly NewArticle[];
}

// ---------------------------------------------------------------------------
// The store

/**
 * The names of the keys a store holds for the server (see Store.key). One for
 * now: what the lab's digest-auth nonces are signed with (src/api/lab/digest.ts).
 */
export type KeyName = "lab-digest";

export interface Store {
  readonly posts: PostStore;
  readonly articles: ArticleStore;
  readonly facts: FactStore;
  readonly tokens: TokenStore;
  /**
   * If the store has no facts and no articles (posts and tokens do not
   * count), adds `data`: the facts in order (ids "1", "2", ...) and the
   * articles in order, all with one timestamp, and resolves true; otherwise
   * writes nothing and resolves false. All or nothing: if any part fails (two
   * articles with one id, say), nothing is written and the promise rejects.
   * Atomic across processes: of several seeding one database at once, exactly
   * one resolves true.
   */
  seedIfEmpty(data: SeedData): Promise<boolean>;
  /**
   * A secret key, 64 hex digits from a cryptographic source, drawn
   * once per database, by the migration that made its table (the memory
   * store: when it was made), and the same from then on, for every connection, worker and instance on
   * that database, and different on another. It is what lets one instance
   * verify what another signed, with nothing to configure.
   */
  key(name: KeyName): Promise<string>;
  /**
   * Releases the store (waiting for calls in flight). Any later call on it
   * rejects; closing again does nothing.
   */
  close(): Promise<void>;
}

/** Settings every store implementation accepts, so tests can pin time and chance. */
export interface StoreOptions {
  /** The clock for timestamps; default `() => new Date()`. */
  readonly now?: () => Date;
  /** A number in [0, 1) for `facts.random()`; default `Math.random`. */
  readonly random?: () => number;
}
