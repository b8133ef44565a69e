// Entity tags and the conditional requests built on them (RFC 9110 §8.8.3, §13.1).

import { createHash } from "node:crypto";
import { withoutCoding } from "./compression.js";
import { listElements } from "./field-lists.js";

/** A strong entity tag for a representation: a digest of its exact bytes. */
export function strongEtag(body: string | Uint8Array): string {
  return `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
}

/**
 * The entity tags of a list field; only SP and HTAB surround them (RFC 9110
 * §5.6.3). A tag this server gave a compressed body names the same resource
 * state, so the coding is taken off it first (compression.ts).
 */
function tags(field: string): string[] {
  return listElements(field).map(withoutCoding);
}

/** If-None-Match (RFC 9110 §13.1.2): true when the field matches, using weak comparison. */
export function noneMatch(field: string | undefined, etag: string): boolean {
  if (field === undefined) return false;
  const opaque = etag.replace(/^W\//, "");
  return tags(field).some((t) => t === "*" || t.replace(/^W\//, "") === opaque);
}

/** If-Match (RFC 9110 §13.1.1): true when the condition holds, using strong comparison. */
export function ifMatch(field: string | undefined, etag: string): boolean {
  if (field === undefined) return true;
  return tags(field).some((t) => t === "*" || (!t.startsWith("W/") && t === etag));
}
