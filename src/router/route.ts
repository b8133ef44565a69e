// What a route is: one row of the declarative table.

import type { Request } from "../http/request.js";
import type { Response } from "../http/response.js";

export type Params = Readonly<Record<string, string>>;

export type RouteHandler = (request: Request, params: Params) => Response | Promise<Response>;

export interface Deprecation {
  /** When the route was deprecated; sent as `Deprecation: @<seconds>` (RFC 9745). */
  readonly since: Date;
  /** When it stops being served; sent as `Sunset: <HTTP-date>` (RFC 8594). */
  readonly sunset?: Date;
  /** Path of the version that replaces it; sent as `Link: <...>; rel="successor-version"`. */
  readonly successor?: string;
}

export interface Route {
  /** Any method token (RFC 9110 §9.1), case-sensitive: "GET", "UPDATE", ... */
  readonly method: string;
  /** API version segment ("v1", "v1-1", "v2"): the route is served at /api/<version><path>. */
  readonly version?: string;
  /** Path below the version, with `:name` segments for parameters, e.g. "/post/:id". */
  readonly path: string;
  /** One line for people reading the table, the docs, or the interactive page. */
  readonly summary: string;
  readonly handler: RouteHandler;
  readonly deprecated?: Deprecation;
}

/** The path a route is served at. */
export function fullPath(route: Route): string {
  return route.version === undefined ? route.path : `/api/${route.version}${route.path}`;
}

/** RFC 9110 §9.1 token; also the shape of a version segment, checked once when the table is compiled. */
export const METHOD_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
export const VERSION_SEGMENT = /^v[0-9]+(?:-[0-9]+)?$/;
