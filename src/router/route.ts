// What a route is: one row of the declarative table.

import type { Request } from "../http/message/request.js";
import type { Response } from "../http/message/response.js";

export type Params = Readonly<Record<string, string>>;

export type RouteHandler = (request: Request, params: Params) => Response | Promise<Response>;

/** The names of a path's parameters: "/post/:id" gives "id", "/files/*rest" gives "rest". */
type ParamNames<P extends string> = P extends `${infer Head}/${infer Tail}` ? SegmentName<Head> | ParamNames<Tail> : SegmentName<P>;
type SegmentName<S extends string> = S extends `:${infer Name}` ? Name : S extends `*${infer Name}` ? Name : never;

/** The params a handler gets for path `P`, typed from the literal: `/post/:id` gives `{ id: string }`. */
export type ParamsOf<P extends string> = { readonly [K in ParamNames<P>]: string };

/**
 * A route whose handler sees its params typed from its path, so `params.id`
 * is a string, not `string | undefined`, and a misspelt name does not compile.
 * `R` lets tables of richer rows (with declarations of their own for their policies) use it too.
 */
export function route<const P extends string, R extends Omit<Route, "path" | "handler"> = Omit<Route, "path" | "handler">>(
  spec: R & { readonly path: P; readonly handler: (request: Request, params: ParamsOf<P>) => Response | Promise<Response> },
): R & Route {
  // The router fills exactly the names in the path, so the wider Params type is safe to give it.
  return spec as unknown as R & Route;
}

/**
 * Documentation of a route: read by the OpenAPI generator and the interactive
 * page (src/docs/), never by the router, so the table stays the one place an
 * endpoint is described. Everything here is optional: a route without it is
 * still served, and documented from its method, path and summary alone.
 */
export interface RouteParamDoc {
  readonly description: string;
  /** JSON Schema of the (percent-decoded) value; a string when absent. */
  readonly schema?: object;
  /** A value the interactive page starts with (for a query parameter: shown as a hint, unless it is required). */
  readonly example?: string;
  /** A query parameter the handler cannot do without (path parameters always are). */
  readonly required?: boolean;
}

/**
 * The body a route takes. Unlike the rest of the documentation it is a
 * declaration that acts: the declared-body policy (body-policy.ts, which
 * createRouter applies by default) enforces it from the head, before any body
 * byte is read: a Content-Type not listed gets a 415, a Content-Length over
 * `maxBytes` a 413 (and a chunked body that grows past it is cut off with the
 * same 413).
 */
export interface RouteRequestDoc {
  readonly description: string;
  /** Media types the body may have, the preferred one first. Enforced. */
  readonly mediaTypes: readonly string[];
  /** The largest body this route takes, below the server's own limit. Enforced. */
  readonly maxBytes?: number;
  /** Why only these types, when that is not obvious: added to the 415's detail. */
  readonly why?: string;
  /** JSON Schema (2020-12) of the body, for every media type listed. */
  readonly schema?: object;
  /** A body the interactive page starts with, in the first media type. */
  readonly example?: string;
}

export interface RouteResponseDoc {
  readonly description: string;
  /** Media types of the body; absent for a response without one (204, 304). Error statuses default to problem+json. */
  readonly mediaTypes?: readonly string[];
  /** JSON Schema (2020-12) of the body. */
  readonly schema?: object;
  /** Header fields worth knowing about, name to description (Location, ETag, Cache-Control...). */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface Route {
  /**
   * Any method token (RFC 9110 §9.1), case-sensitive: "GET", "UPDATE", ...
   * Or ANY_METHOD ("*"): every method the path's other routes do not serve,
   * except OPTIONS, which the router answers itself (or a policy's preflight, policy.ts).
   */
  readonly method: string;
  /**
   * The path served, with `:name` segments for parameters, e.g.
   * "/api/v1/post/:id" (the value percent-decoded), and optionally a last
   * `*name` segment that takes the rest of the path, e.g. "/files/*rest" (the
   * value as sent, still percent-encoded: decoding would make "%2F" and "/" the same).
   */
  readonly path: string;
  /** One line for people reading the table, the docs, or the interactive page. */
  readonly summary: string;
  readonly handler: RouteHandler;
  // Documentation, and declarations for the policies: the router never reads these.
  // A table adds declarations of its own (extending this type) for the policies it is served under;
  // the router hands each route to them whole, and they alone read what it declares.
  /** Where the docs list the route (an OpenAPI tag). */
  readonly group?: string;
  readonly params?: Readonly<Record<string, RouteParamDoc>>;
  /** Query parameters the handler reads, by name (all optional; the handler checks them itself). */
  readonly query?: Readonly<Record<string, RouteParamDoc>>;
  /** The body the route takes: documented, and enforced from the head by the declared-body policy (see RouteRequestDoc). */
  readonly request?: RouteRequestDoc;
  /** By status code; the generator adds the errors every route can give. */
  readonly responses?: Readonly<Record<number, RouteResponseDoc>>;
}

/** The method of a route that serves any method (see Route.method). */
export const ANY_METHOD = "*";

/**
 * What Allow (RFC 9110 §10.2.1) names for a resource that serves any method:
 * the field lists methods, so it cannot say "any"; it advertises the common
 * ones, which the field permits (the set it gives need not be complete).
 */
export const ANY_METHOD_ADVERTISED: readonly string[] = ["DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT"];
