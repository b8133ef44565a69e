// A record's representation in its final form (types.ts, Representation):
// its JSON text and the tag of those bytes, made once, when the record is
// written, so that reads move bytes and compute nothing. Every store makes
// it here, from the record as records.ts shapes it, so the three stores
// keep byte-identical representations.

import { createHash } from "node:crypto";
import type { JsonPage, PageQuery, Position, Post, Representation, Revision } from "./types.js";

/** The opaque part of a strong entity tag for these bytes: the first 27 base64url characters of their SHA-256 (162 bits). */
export function tagOf(text: string): string {
  return createHash("sha256").update(text).digest("base64url").slice(0, 27);
}

export function representationOf(record: Post): Representation {
  const json = JSON.stringify(record);
  return { json, tag: tagOf(json) };
}

/**
 * A JsonPage from the rows after a page's start, in order, up to limit + 1
 * of them (each with its position and its JSON text): the page, cut as
 * PageQuery says (maxChars counting the JSON text; the item that reaches it
 * is the last), and whether a row follows it. Stops reading at the first
 * row past the page (leaving a statement's loop early resets it).
 */
export function jsonPageOf<R extends { pos: number | string }>(rows: Iterable<R>, query: PageQuery, json: (row: R) => string, revision: Revision): JsonPage {
  const parts: string[] = [];
  let last: Position | undefined;
  let total = 0;
  let more = false;
  for (const row of rows) {
    if (parts.length === query.limit || (query.maxChars !== undefined && total >= query.maxChars)) {
      more = true;
      break;
    }
    const text = json(row);
    parts.push(text);
    last = Number(row.pos);
    total += text.length;
  }
  const members = parts.join(",");
  return last === undefined ? { members, count: 0, more: false, revision } : { members, count: parts.length, last, more, revision };
}
