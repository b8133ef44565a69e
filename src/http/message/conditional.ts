// Entity tags and the conditional requests built on them (RFC 9110 §8.8.3, §13.1).

import { createHash } from "node:crypto";
import { addVary, mayBeCoded, withoutCoding } from "./compression.js";
import { fieldListElements } from "./field-lists.js";
import { headerValue, type Request } from "./request.js";
import type { Response } from "./response.js";

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
  return fieldListElements(field).map(withoutCoding);
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

/** What a cache stores a representation under, and revalidates it with. */
export interface Validated {
  /** The Content-Type of the 200. */
  readonly type: string;
  readonly etag: string;
  /** Cache-Control, where the caller sets it here rather than through a policy on every answer (startline's API does the latter). */
  readonly cacheControl?: string;
  /** The request fields the representation was negotiated by; Accept-Encoding is added here when the type may be coded. */
  readonly vary?: string;
}

/**
 * The validator and cache fields of a representation, for its 200 and for the
 * 304 that stands for it alike: RFC 9110 §15.4.5 has a 304 carry the ETag,
 * Cache-Control and Vary its 200 would, since a cache updates the response it
 * keeps from them (RFC 9111 §4.3.4). Built in this one place so the two
 * answers cannot drift apart. Vary names Accept-Encoding whenever
 * compression.ts may code the type, whatever the size of this one body.
 */
export function cacheFields(v: Validated): Readonly<Record<string, string>> {
  const vary = mayBeCoded(v.type) ? addVary(v.vary) : v.vary;
  const fields: Record<string, string> = { ETag: v.etag };
  if (v.cacheControl !== undefined) fields["Cache-Control"] = v.cacheControl;
  if (vary !== undefined) fields.Vary = vary;
  return fields;
}

/** The 304 of a read whose If-None-Match matches (RFC 9110 §13.1.2): the cache fields, no content; undefined otherwise. */
export function notModified(request: Request, v: Validated): Response | undefined {
  if (request.method !== "GET" && request.method !== "HEAD") return undefined;
  return noneMatch(headerValue(request, "if-none-match"), v.etag) ? { status: 304, headers: cacheFields(v) } : undefined;
}
