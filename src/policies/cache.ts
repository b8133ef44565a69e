// How the answers of a route may be cached (RFC 9111 §5.2.2), as the route
// declares it (`cache`), and put on its answers below 400 (304s and
// redirects included) by this policy alone: a handler states no
// Cache-Control of its own, so the value the documentation shows (from the
// same declaration) is the one sent. An error keeps what its problem says
// (a freshness meant for the resource would be wrong on a failure), except
// under no-store, which is never wrong and is put on every answer.
//
// A route that declares nothing is revalidated on each use (no-cache):
// dynamic data may change at any time, so a cache may keep it but must ask
// again before each reuse (RFC 9111 §5.2.2.4), with the ETag where there is
// one, rather than guess a freshness lifetime of its own (§4.2.2).

import type { Response } from "../http/message/response.js";
import { adding, fieldsAdder } from "./fields.js";
import type { Policy } from "../router/policy.js";
import type { Params, Route, RouteHandler } from "../router/route.js";

/** What a route declares for this policy. */
export interface CacheDeclared {
  readonly cache?: CacheRule;
}

export type CacheRule =
  /** The answer describes one request (an echo, a count): no cache keeps it. */
  | "no-store"
  /** A cache may keep it, and must ask again before each reuse (with the ETag, when there is one). */
  | "no-cache"
  /** Fresh for `maxAge` seconds: in the user's own cache only ("private"), or in shared caches too ("public"). */
  | { readonly scope: "private" | "public"; readonly maxAge: number }
  /** Fresh for as many seconds as the path parameter `param` says, where caching is the resource's subject (the lab's cache/:n). */
  | { readonly scope: "private" | "public"; readonly maxAgeParam: string }
  /** The handler's own, where the field is the resource's subject (the lab's response-headers, whose client chooses it). */
  | "as-answered";

export const DEFAULT_CACHE: CacheRule = "no-cache";

/** The field value a rule gives, for the params of one request. */
function valueOf(rule: Exclude<CacheRule, "as-answered">, params: Params): string {
  if (typeof rule === "string") return rule;
  if ("maxAge" in rule) return `${rule.scope}, max-age=${rule.maxAge}`;
  return `${rule.scope}, max-age=${params[rule.maxAgeParam] ?? 0}`;
}

/** The rule in words, for the documentation. */
function described(rule: CacheRule): string {
  if (rule === "no-store") return "no-store: the answer describes this one request";
  if (rule === "no-cache") return "no-cache: a cache asks again before each reuse";
  if (rule === "as-answered") return "as the request chose it (no-store when it chose none)";
  if ("maxAge" in rule) return `${rule.scope}, max-age=${rule.maxAge}: fresh for ${rule.maxAge} seconds${rule.scope === "private" ? " in the user's own cache; shared caches may not keep it" : ""}`;
  return `${rule.scope}, max-age=<${rule.maxAgeParam}>: fresh for as many seconds as the path says`;
}

/** 2xx, 3xx and 304: the answers a freshness is about. An error keeps what its problem says (none, mostly). */
const cached = (status: number) => status >= 200 && status < 400;

export const cachePolicy: Policy<Route & CacheDeclared> = (route) => {
  const rule = route.cache ?? DEFAULT_CACHE;
  const doc = { successHeaders: { "Cache-Control": described(rule) } };
  if (rule === "as-answered") return { doc };
  // no-store is never wrong, on an error too; a freshness is the resource's, and an error keeps what its problem says.
  const applies = rule === "no-store" ? () => true : cached;
  if (typeof rule === "string" || "maxAge" in rule) return { wrap: adding(fieldsAdder({ "Cache-Control": valueOf(rule, {}) }, "last", applies)), doc };
  // From the path: a value per request (the lab's cache/:n), so nothing is kept.
  const wrap = (handler: RouteHandler): RouteHandler => (request, params) => {
    const value = valueOf(rule, params);
    const add = (response: Response): Response => (applies(response.status) ? { ...response, headers: { ...response.headers, "Cache-Control": value } } : response);
    return adding(add)(handler)(request, params);
  };
  return { wrap, doc };
};
