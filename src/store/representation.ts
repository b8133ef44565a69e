// A record's representation in its final form (types.ts, Representation):
// its JSON text and the tag of those bytes, made once, when the record is
// written, so that reads move bytes and compute nothing. Every store makes
// it here, from the record as records.ts shapes it, so the three stores
// keep byte-identical representations.

import * as crypto from "node:crypto";
import type { JsonPage, PageQuery, Position, Post, Representation, Revision, YamlItem, YamlPage } from "./types.js";

/** The opaque part of a strong entity tag for these bytes: the first 27 base64url characters of their SHA-256 (162 bits). */
export function tagOf(text: string): string {
  return sha256(text).slice(0, 27);
}

/**
 * SHA-256 in base64url. crypto.hash (Node 20.12 and later) hashes in one call,
 * without a Hash object: half the time of createHash for a post of ~700 bytes,
 * which every write pays; older Node 20 releases lack it.
 */
const sha256: (text: string) => string =
  typeof crypto.hash === "function"
    ? (text) => crypto.hash("sha256", text, "base64url")
    : (text) => crypto.createHash("sha256").update(text).digest("base64url");

export function representationOf(record: Post): Representation {
  const json = JSON.stringify(record);
  return { json, tag: tagOf(json) };
}

/**
 * The post a stored JSON text holds: a store keeps a post as its
 * representation only, and this is the way back. The text was written by
 * representationOf from a record makePost shaped, so parsing it gives that
 * record again, keys in the same order (a fresh object every call).
 */
export function postFromJson(json: string): Post {
  return JSON.parse(json) as Post;
}

/**
 * Where a page ends, from the rows after its start, in order, up to limit + 1
 * of them: the rows the page takes (cut as PageQuery says: at most `limit`,
 * and the row whose size brings the total to maxChars is the last), and
 * whether a row follows them. Stops reading at the first row past the page
 * (leaving a statement's loop early resets it).
 */
export function cutPage<R>(rows: Iterable<R>, query: PageQuery, size: (row: R) => number): { readonly taken: R[]; readonly more: boolean } {
  const taken: R[] = [];
  let total = 0;
  for (const row of rows) {
    if (taken.length === query.limit || (query.maxChars !== undefined && total >= query.maxChars)) return { taken, more: true };
    taken.push(row);
    total += size(row);
  }
  return { taken, more: false };
}

const COMMA = Buffer.from(",");

/** JSON texts (UTF-8) joined by ",": the members of a JSON array, in one buffer. */
export function joinMembers(parts: readonly Uint8Array[]): Buffer {
  const all: Uint8Array[] = [];
  for (const part of parts) {
    if (all.length > 0) all.push(COMMA);
    all.push(part);
  }
  return Buffer.concat(all);
}

/** A JsonPage from rows as cutPage reads them, each with its position and its JSON text in UTF-8 (maxChars counting those bytes). */
export function jsonPageOf<R extends { pos: number | string }>(rows: Iterable<R>, query: PageQuery, json: (row: R) => Uint8Array, revision: Revision): JsonPage {
  const { taken, more } = cutPage(rows, query, (row) => json(row).length);
  return jsonPage(taken.map(json), taken.length === 0 ? undefined : Number(taken.at(-1)!.pos), more, revision);
}

export function jsonPage(parts: readonly Uint8Array[], last: Position | undefined, more: boolean, revision: Revision): JsonPage {
  const members = joinMembers(parts);
  return last === undefined ? { members, count: 0, more: false, revision } : { members, count: parts.length, last, more, revision };
}

/**
 * A YamlPage from rows as cutPage reads them, each with its position, the
 * post's id and tag, and its entry, or null and the JSON text where none is
 * stored (a row with an entry need not carry its text); `bytes` is a row's
 * JSON in UTF-8 as maxChars counts it. The entries joined when every row has
 * one (as bytes, or a string for `text`), else the rows.
 */
export function yamlPageOf<R extends { pos: number | string; id: string; tag: string; yaml: string | null; json: string | null }>(
  rows: Iterable<R>,
  query: PageQuery,
  bytes: (row: R) => number,
  revision: Revision,
): YamlPage {
  const { taken, more } = cutPage(rows, query, bytes);
  const end = taken.length === 0 ? { more: false, revision } : { last: Number(taken.at(-1)!.pos), more, revision };
  if (taken.every((row) => row.yaml !== null)) {
    const joined = taken.map((row) => row.yaml).join("");
    return { entries: query.text === true ? joined : Buffer.from(joined), count: taken.length, ...end };
  }
  const items = taken.map(({ id, tag, yaml, json }): YamlItem => (yaml !== null ? { id, tag, yaml } : { id, tag, yaml, json: json! }));
  return { items, count: taken.length, ...end };
}
