// The query parameters of the list endpoints (docs/api.md, section 9):
// `limit` asks for one page, `after` is the opaque cursor a `Link: rel="next"`
// hands out. Anything else in the query is ignored, as on every endpoint.

import { fail } from "../http/message/problem.js";
import type { Request } from "../http/message/request.js";
import type { Position } from "../store/types.js";

export const MAX_LIMIT = 1000;

export interface ListQuery {
  /** One page of at most this many items; absent: every item. */
  readonly limit?: number;
  /** Start after this position; absent: from the first item. */
  readonly after?: Position;
}

/**
 * The cursor as it goes in a URL: base64url of "<collection>:<position>".
 * Base64url needs no percent-encoding in a query; the collection's name makes
 * a cursor of one list useless in another (a 400, not a page of something
 * else). It is not signed: a client that makes one up reads the items after
 * a position it chose, which it could read anyway.
 */
export function encodeCursor(collection: string, position: Position): string {
  return Buffer.from(`${collection}:${position}`, "utf8").toString("base64url");
}

const BASE64URL = /^[A-Za-z0-9_-]{1,64}$/;
const POSITION = /^(?:0|[1-9][0-9]{0,15})$/;

/** The position a cursor of `collection` names, or undefined when it is not one this server would hand out. */
export function decodeCursor(collection: string, cursor: string): Position | undefined {
  if (!BASE64URL.test(cursor)) return undefined;
  const text = Buffer.from(cursor, "base64url").toString("latin1");
  // Only the canonical spelling: what encodeCursor wrote, nothing that merely decodes to the same.
  if (Buffer.from(text, "latin1").toString("base64url") !== cursor) return undefined;
  const colon = text.indexOf(":");
  if (colon === -1 || text.slice(0, colon) !== collection) return undefined;
  const digits = text.slice(colon + 1);
  if (!POSITION.test(digits)) return undefined;
  const position = Number(digits);
  return Number.isSafeInteger(position) ? position : undefined;
}

function invalid(request: Request, parameter: string, detail: string): never {
  fail(400, {
    kind: "invalid-query",
    title: "Invalid query parameter",
    detail,
    instance: request.target,
    extensions: { parameter },
  });
}

/** Percent-decoded, or undefined when the escapes are broken. */
function decode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** The list parameters of `request`, or a 400 problem naming the one that is wrong. */
export function parseListQuery(request: Request, collection: string): ListQuery {
  let limitText: string | undefined;
  let afterText: string | undefined;
  for (const pair of request.query === "" ? [] : request.query.split("&")) {
    const eq = pair.indexOf("=");
    const name = decode(eq === -1 ? pair : pair.slice(0, eq));
    if (name !== "limit" && name !== "after") continue; // unknown parameters are ignored
    const value = eq === -1 ? "" : decode(pair.slice(eq + 1));
    if (value === undefined) invalid(request, name, `The value of ${name} has a broken percent-encoding.`);
    if ((name === "limit" ? limitText : afterText) !== undefined) invalid(request, name, `${name} is given twice; give it once.`);
    if (name === "limit") limitText = value;
    else afterText = value;
  }
  let limit: number | undefined;
  if (limitText !== undefined) {
    limit = /^[1-9][0-9]{0,3}$/.test(limitText) ? Number(limitText) : NaN;
    if (!(limit <= MAX_LIMIT)) {
      invalid(request, "limit", `limit must be a whole number from 1 to ${MAX_LIMIT}, written in plain digits; got "${limitText.slice(0, 40)}".`);
    }
  }
  let after: Position | undefined;
  if (afterText !== undefined) {
    after = decodeCursor(collection, afterText);
    if (after === undefined) {
      invalid(
        request,
        "after",
        `after is not a cursor of this list ("${afterText.slice(0, 80)}"). Use the URL of a Link: rel="next" exactly as given, or leave after out to start from the first item.`,
      );
    }
  }
  return { ...(limit === undefined ? {} : { limit }), ...(after === undefined ? {} : { after }) };
}
