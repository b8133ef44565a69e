// API versions are policy, applied where the API builds its table; the router
// below knows nothing of them. Each route of the API declares its version
// ("v1", "v1-1", "v2") and a path below it; here it becomes a route served
// at /api/<version><path>, whose answers carry the deprecation fields when
// the version is deprecated (RFC 9745 Deprecation, RFC 8594 Sunset, RFC 8288
// Link rel="successor-version"), and whose requests are counted per version
// (an operator's view of who still uses v1). A path under /api/ whose first
// segment looks like a version not served gets a 404 that lists the ones that are.

import { formatHttpDate } from "../http/message/date.js";
import { problem } from "../http/message/problem.js";
import type { Request } from "../http/message/request.js";
import type { FieldValue, Response } from "../http/message/response.js";
import { route, type Deprecation, type ParamsOf, type Route } from "../router/route.js";
import type { AccessDeclared } from "../policies/access.js";

/** A route of the API as served: what the router matches, and what the API's policies read (who may call it). */
export interface ApiRoute extends Route, AccessDeclared {}

/** A route of the API: its path is below its version; without a version it is served as written. */
export interface VersionedRoute extends ApiRoute {
  readonly version?: string;
}

/** The shape of a version segment: v<n>, or v<n>-<m> for a finer step. */
export const VERSION_SEGMENT = /^v[0-9]+(?:-[0-9]+)?$/;
const API_VERSION = /^\/api\/([^/]+)(?:\/|$)/;

export interface Versioned {
  /** The routes as the router serves them: full paths, deprecation fields applied, requests counted. */
  readonly routes: ApiRoute[];
  /** Versions served, in table order. */
  readonly versions: readonly string[];
  /** Requests per version since start. */
  usage(): Record<string, number>;
  /** The 404 for a path under /api/ that names a version not served; undefined for any other path. */
  unknownVersion(request: Request): Response | undefined;
}

/** RFC 9745 / RFC 8594 / RFC 8288 fields of a deprecated route, computed once. */
function deprecationFields(d: Deprecation): Record<string, string> {
  const fields: Record<string, string> = { Deprecation: `@${Math.floor(d.since.getTime() / 1000)}` };
  if (d.sunset !== undefined) fields.Sunset = formatHttpDate(d.sunset);
  if (d.successor !== undefined) fields.Link = `<${d.successor}>; rel="successor-version"`;
  return fields;
}

/**
 * The response with the fields added. Handlers often return one prebuilt,
 * frozen response for every request (the status endpoints do); the combined
 * object is remembered for it, so the deprecated v1 path allocates nothing
 * per request.
 */
function withFields(response: Response, fields: Readonly<Record<string, FieldValue>>, seen: WeakMap<Response, Response>): Response {
  const known = seen.get(response);
  if (known !== undefined) return known;
  const combined = { ...response, headers: { ...response.headers, ...fields } };
  if (Object.isFrozen(response)) seen.set(response, Object.freeze(combined));
  return combined;
}

export function applyVersions(table: readonly VersionedRoute[]): Versioned {
  const versions: string[] = [];
  for (const route of table) {
    const v = route.version;
    if (v === undefined) continue;
    if (!VERSION_SEGMENT.test(v)) throw new Error(`Route version ${JSON.stringify(v)} is not of the form v<n> or v<n>-<m>`);
    if (!versions.includes(v)) versions.push(v);
  }
  // One counter per version, bumped in place: no map lookup by string on the hot path.
  const counters = new Map(versions.map((v) => [v, { n: 0 }]));
  const combined = new WeakMap<Response, Response>();

  const routes = table.map((route): ApiRoute => {
    const { version, ...rest } = route;
    if (version === undefined) return rest;
    const counter = counters.get(version)!;
    const inner = route.handler;
    const fields = route.deprecated === undefined ? null : deprecationFields(route.deprecated);
    const handler: Route["handler"] =
      fields === null
        ? (request, params) => {
            counter.n++;
            return inner(request, params);
          }
        : (request, params) => {
            counter.n++;
            const result = inner(request, params);
            return result instanceof Promise ? result.then((r) => withFields(r, fields, combined)) : withFields(result, fields, combined);
          };
    return { ...rest, path: `/api/${version}${route.path}`, group: version, handler };
  });

  const example = routes.find((r) => r.group !== undefined)?.path ?? "/api/v2/status";
  return {
    routes,
    versions,
    usage: () => Object.fromEntries([...counters].map(([v, c]) => [v, c.n])),
    unknownVersion(request) {
      const m = API_VERSION.exec(request.path);
      // Only a segment shaped like a version is called one: /api/openapi.jsn is just a path that is not served.
      if (m === null || versions.length === 0 || !VERSION_SEGMENT.test(m[1]!) || counters.has(m[1]!)) return undefined;
      return problem(404, {
        kind: "unknown-version",
        title: "Unknown API version",
        detail: `There is no API version "${m[1]}". This server serves ${versions.join(", ")}: use /api/<version>/..., e.g. ${example}.`,
        instance: request.target,
      });
    },
  };
}

/** A row of the API's table, its handler's params typed from its path (see route() in the router). */
export function apiRoute<const P extends string>(
  spec: Omit<VersionedRoute, "path" | "handler"> & { readonly path: P; readonly handler: (request: Request, params: ParamsOf<P>) => Response | Promise<Response> },
): VersionedRoute {
  return route(spec);
}
