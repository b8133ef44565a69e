// One resource as JSON, with a strong ETag and the conditional requests that
// use it (RFC 9110 §13.1): If-None-Match on reads, If-Match on writes.

import { cacheFields, ifMatch, noneMatch, notModified } from "../http/message/conditional.js";
import { fail } from "../http/message/problem.js";
import { headerValue, type Request } from "../http/message/request.js";
import type { FieldValue, Response } from "../http/message/response.js";
import { chooseFormat, MEDIA_TYPES, VARY } from "../representation/negotiate.js";
import { tagOf } from "../store/representation.js";
import type { Representation } from "../store/types.js";

/** The strong ETag of a value's JSON: the same tag a store computes for what it writes (representation.ts). */
export function etagOf(value: unknown): string {
  return `"${tagOf(JSON.stringify(value))}"`;
}

/** 200 with the value as JSON and its ETag; on a read, 304 when If-None-Match matches. */
export function single(request: Request, value: unknown, headers?: Readonly<Record<string, FieldValue>>): Response {
  const json = JSON.stringify(value);
  return stored(request, { json, tag: tagOf(json) }, headers);
}

/**
 * The 200 answer to a plain GET of each representation that is read again
 * (one kept between requests: kept-reads.ts), made once and frozen, so that
 * the writer makes its head once a second rather than once a request
 * (response.ts, serialize). Weak: an answer lives as long as its
 * representation is kept. Only for a representation the caller says is
 * kept: one read fresh each time would be frozen, and its bytes joined, for
 * nothing.
 */
const plainAnswers = new WeakMap<Representation, Response>();

/**
 * `single` for a representation the store keeps: its bytes and tag as they
 * are, nothing serialized or hashed. `kept`: the same representation object
 * comes again for later requests, so its plain answer is worth keeping.
 */
export function stored(request: Request, representation: Representation, headers?: Readonly<Record<string, FieldValue>>, kept = false): Response {
  chooseFormat(request, ["json"]);
  const plain = kept && headers === undefined && request.method === "GET" && headerValue(request, "if-none-match") === undefined;
  if (plain) {
    const known = plainAnswers.get(representation);
    if (known !== undefined) return known;
  }
  const validated = { type: MEDIA_TYPES.json, etag: `"${representation.tag}"`, vary: VARY };
  const answer = notModified(request, validated) ?? { status: 200, headers: { "Content-Type": validated.type, ...cacheFields(validated), ...headers }, body: representation.json };
  if (!plain) return answer;
  const frozen = Object.freeze({ ...answer, headers: Object.freeze({ ...answer.headers }) });
  plainAnswers.set(representation, frozen);
  return frozen;
}

/** Whether the request carries a precondition that requireMatch evaluates. */
export function hasPreconditions(request: Request): boolean {
  return headerValue(request, "if-match") !== undefined || headerValue(request, "if-none-match") !== undefined;
}

/**
 * The preconditions of a write (RFC 9110 §13.1.1, §13.1.2, evaluated as
 * §13.2.2 orders them), checked before anything changes: 412 when If-Match
 * does not match the current representation, or If-None-Match does.
 */
export function requireMatch(request: Request, current: unknown): void {
  const etag = etagOf(current);
  const match = headerValue(request, "if-match");
  if (match !== undefined && !ifMatch(match, etag)) {
    // W/ and the current tag names the resource as it is: it did not change, the tag was sent weak.
    const why = match.includes(`W/${etag}`)
      ? `W/${etag} is the current ETag as a weak tag, and If-Match compares strongly (RFC 9110 §13.1.1), so a weak tag never matches. Send the ETag exactly as the server gave it.`
      : "the resource changed since you read it. GET it again, then retry.";
    fail(412, {
      kind: "precondition-failed",
      detail: `If-Match: ${match.slice(0, 100)} does not match the current ETag ${etag}; ${why}`,
      instance: request.target,
    });
  }
  const noneMatchField = headerValue(request, "if-none-match");
  if (noneMatchField !== undefined && noneMatch(noneMatchField, etag)) {
    fail(412, {
      kind: "precondition-failed",
      detail: `If-None-Match: ${noneMatchField.slice(0, 100)} matches the current ETag ${etag}, so the request asked not to proceed.`,
      instance: request.target,
    });
  }
}
