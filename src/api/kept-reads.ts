// Reads answered from bytes already made, while the store says they are
// current: a post, a page and a whole list, kept (kept.ts) with the
// collection's revision they were read at, and served again only when the
// revision read for the request is that one. Every store moves a
// collection's revision in the same transaction as each write to it, and
// every process on one database reads the same one, so once a write is
// acknowledged no read anywhere (this process or another, another worker,
// another instance) finds its kept bytes current: it reads the store again.
//
// The label must never be newer than the bytes: a revision is read before
// the items it labels, or in the same snapshot (a later batch of a long list
// may be newer than its label, which only means one more miss).

import type { FieldValue, Response } from "../http/message/response.js";
import type { PostStore, Representation, Revision } from "../store/types.js";
import { Kept, stringBytes } from "./kept.js";

/** A 200 response as sent, with the revision it was read at. */
export interface KeptResponse {
  readonly revision: Revision;
  readonly headers: Readonly<Record<string, FieldValue>>;
  readonly body: Buffer | string;
  /** For a body of at most WHOLE_BYTES: the response itself, frozen, so that its head and its codings are made once (response.ts, compression.ts); the policies keep it so (policies/fields.ts). */
  readonly frozen?: Response;
}

/**
 * Up to this many bytes, a kept body is answered whole, with a
 * Content-Length, by one frozen response shared by every request for it. A
 * larger one is answered in pieces of PIECE_BYTES, views of the kept bytes:
 * so that a compressed answer is coded piece by piece as the client reads
 * (a whole body is coded whole, and held so, per client), and so that a
 * frozen response's head and body, which the connection joins into one
 * buffer once a second, are never a second copy of a large list.
 */
export const WHOLE_BYTES = 256 * 1024;
/** The pieces of a larger kept body. */
export const PIECE_BYTES = 64 * 1024;

/** A response to keep, read at `revision`: frozen when its body is at most WHOLE_BYTES (see answer). */
export function keptResponse(revision: Revision, headers: Readonly<Record<string, FieldValue>>, body: Buffer | string): KeptResponse {
  const whole = typeof body === "string" ? body.length * 3 <= WHOLE_BYTES || Buffer.byteLength(body) <= WHOLE_BYTES : body.length <= WHOLE_BYTES;
  const fields = { ...headers };
  return whole ? { revision, headers: fields, body, frozen: Object.freeze({ status: 200, headers: Object.freeze({ ...fields }), body }) } : { revision, headers: fields, body };
}

/** What a kept response answers: the frozen response, or a new one whose body is the kept bytes in pieces (views, nothing copied). */
export function answer(kept: KeptResponse): Response {
  return kept.frozen ?? { status: 200, headers: { ...kept.headers }, body: piecesOf(typeof kept.body === "string" ? Buffer.from(kept.body) : kept.body) };
}

async function* piecesOf(bytes: Buffer): AsyncGenerator<Uint8Array, void, undefined> {
  for (let at = 0; at < bytes.length; at += PIECE_BYTES) yield bytes.subarray(at, at + PIECE_BYTES);
}

/** A post's stored representation, with the revision of the posts it was read at (one post's response depends on the request's preconditions). */
export interface KeptRepresentation {
  readonly revision: Revision;
  readonly representation: Representation;
}

export interface KeptReads {
  /** Responses by what they answer (the caller's key: a post's id, a list's path, format and page). */
  readonly responses: Kept<KeptResponse | KeptRepresentation>;
  /** The streamed bodies being copied to be kept (within the responses' budget again). */
  readonly gathering: Gathering;
}

export interface KeptSettings {
  /** Bytes of responses kept at most (KEPT_BYTES); 0 keeps none. */
  readonly responseBytes: number;
}

/** 32 MiB of responses. (Each post's YAML is not kept here: the store keeps it beside the post's JSON text, src/store/yaml-entry.ts.) */
export const DEFAULT_KEPT: KeptSettings = { responseBytes: 32 * 1024 * 1024 };

export function keptReads(settings: KeptSettings = DEFAULT_KEPT): KeptReads {
  return { responses: new Kept(settings.responseBytes), gathering: new Gathering(settings.responseBytes) };
}

/** Whether a kept read was made at `revision`: only then is it the current one. */
export function current<K extends KeptResponse | KeptRepresentation>(kept: KeptResponse | KeptRepresentation | undefined, revision: Revision, kind: (k: KeptResponse | KeptRepresentation) => k is K): kept is K {
  return kept !== undefined && kind(kept) && kept.revision.n === revision.n && kept.revision.epoch === revision.epoch;
}

export const isResponse = (kept: KeptResponse | KeptRepresentation): kept is KeptResponse => "body" in kept;
export const isRepresentation = (kept: KeptResponse | KeptRepresentation): kept is KeptRepresentation => "representation" in kept;

/**
 * Post `id`'s representation: the kept one while the posts' revision is the
 * one it was read at, else the store's (kept then, labelled with the
 * revision read before it). On PostgreSQL a miss costs a revision read more
 * than the store's read alone; a hit costs the revision read only. Where the
 * store has its revision at hand (SQLite, memory), the answer comes at once,
 * not as a promise: a kept post is then answered in the turn that read its
 * request.
 */
export function keptPost(posts: Pick<PostStore, "revision" | "representation">, kept: KeptReads, id: string): Representation | undefined | Promise<Representation | undefined> {
  if (kept.responses.budget === 0) return posts.representation(id);
  const revision = posts.revision();
  return revision instanceof Promise ? revision.then((read) => keptAt(posts, kept, id, read)) : keptAt(posts, kept, id, revision);
}

/** keptPost once the revision is read. */
function keptAt(posts: Pick<PostStore, "representation">, kept: KeptReads, id: string, revision: Revision): Representation | undefined | Promise<Representation | undefined> {
  const key = `post ${id}`;
  const known = kept.responses.get(key);
  if (current(known, revision, isRepresentation)) return known.representation;
  const read = posts.representation(id);
  const keep = (representation: Representation | undefined) => {
    if (representation !== undefined) kept.responses.set(key, { revision, representation }, stringBytes(representation.json) + stringBytes(key) + 128);
    return representation;
  };
  return read instanceof Promise ? read.then(keep) : keep(read);
}

/** The bytes a kept response takes: its body and about as much again for its fields and the entry. */
export function responseBytes(body: Buffer | string): number {
  return (typeof body === "string" ? body.length * 2 : body.length) + 512;
}

/** The copies of streamed bodies being gathered to be kept (keptWhileSent): by whom, and how many bytes in all. */
export class Gathering {
  readonly keys = new Set<string>();
  bytes = 0;
  /** `budget` bytes of copies at most, across every stream. */
  constructor(readonly budget: number) {}
}

/**
 * A streamed body passed on piece by piece while a copy of it is gathered,
 * and kept with `keep` once it has all gone out, if it fits `limit` bytes.
 * A copy is gathered for at most one stream per key at a time, and for all
 * streams together within the gathering's budget, so clients that stop
 * reading hold no more copies than that between them (a stream past either
 * bound stops gathering and lets its copy go).
 */
export async function* keptWhileSent(
  body: AsyncIterable<string | Uint8Array>,
  key: string,
  gathering: Gathering,
  limit: number,
  keep: (body: Buffer) => void,
): AsyncGenerator<string | Uint8Array, void, undefined> {
  if (gathering.keys.has(key) || limit <= 0) return yield* body;
  gathering.keys.add(key);
  let copies: Buffer[] | undefined = [];
  let size = 0;
  const drop = () => {
    gathering.bytes -= size;
    copies = undefined;
  };
  try {
    for await (const piece of body) {
      if (copies !== undefined) {
        // A piece of bytes is a view of a buffer the list writes its next piece over: copied now.
        const copy = typeof piece === "string" ? Buffer.from(piece) : Buffer.from(piece);
        if (size + copy.length > limit || gathering.bytes + copy.length > gathering.budget) drop();
        else {
          copies.push(copy);
          size += copy.length;
          gathering.bytes += copy.length;
        }
      }
      yield piece;
    }
    if (copies !== undefined) keep(Buffer.concat(copies, size));
  } finally {
    if (copies !== undefined) drop();
    gathering.keys.delete(key);
  }
}
