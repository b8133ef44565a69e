// API versions, as the routes declare them: each route of the API names its
// version ("v1", "v1-1", "v2") and a path below it, and may be deprecated.
// The router knows nothing of this. Here a table of such routes becomes one
// served at /api/<version><path> (applyVersions), and the version policy
// (Versioned.policy, given to the router like any other) counts each
// request a versioned route is handed (an operator's view of who still uses
// v1) and puts the deprecation fields on a deprecated route's answers
// (RFC 9745 Deprecation, RFC 8594 Sunset, RFC 8288 Link
// rel="successor-version"). A path under /api/ whose first segment looks like
// a version not served gets a 404 that lists the ones that are.
//
// The policy is given before the access policy, so it wraps it: a request
// refused with 401 still came from a client of that version, and is counted
// (docs/api.md, section 8), as a 404 from a versioned route is.

import { fieldsAdder } from "./fields.js";
import { formatHttpDate } from "../http/message/date.js";
import { problem } from "../http/message/problem.js";
import type { Request } from "../http/message/request.js";
import type { Response } from "../http/message/response.js";
import type { Policy, PolicyDoc } from "../router/policy.js";
import type { Route, RouteHandler } from "../router/route.js";

export interface Deprecation {
  /** When the route was deprecated; sent as `Deprecation: @<seconds>` (RFC 9745). */
  readonly since: Date;
  /** When it stops being served; sent as `Sunset: <HTTP-date>` (RFC 8594). */
  readonly sunset?: Date;
  /** Path of the version that replaces it; sent as `Link: <...>; rel="successor-version"`. */
  readonly successor?: string;
}

/** What a route declares for this policy. */
export interface VersionDeclared {
  /** The API version the route belongs to; its path is below /api/<version>. Absent: served as written, not counted. */
  readonly version?: string;
  /** The route is deprecated: its answers carry the fields, and the docs say so. */
  readonly deprecated?: Deprecation;
}

/** The shape of a version segment: v<n>, or v<n>-<m> for a finer step. */
export const VERSION_SEGMENT = /^v[0-9]+(?:-[0-9]+)?$/;
const API_VERSION = /^\/api\/([^/]+)(?:\/|$)/;

export interface Versioned<R> {
  /** The routes at their full paths (/api/<version><path>), listed in the docs under their version. */
  readonly routes: R[];
  /** Versions served, in table order. */
  readonly versions: readonly string[];
  /** Counts the requests of each version and adds the deprecation fields; give it to the router before the access policy. */
  readonly policy: Policy<Route & VersionDeclared>;
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

/** The same fields as the OpenAPI document describes them on a deprecated route's successful answers. */
function deprecationDoc(d: Deprecation): PolicyDoc {
  return {
    note: `Deprecated since ${d.since.toISOString().slice(0, 10)}${d.successor === undefined ? "" : `: use ${d.successor}`}.`,
    discouraged: true,
    successHeaders: {
      Deprecation: `RFC 9745: @${Math.floor(d.since.getTime() / 1000)}, when this route was deprecated`,
      ...(d.sunset === undefined ? {} : { Sunset: `RFC 8594: ${d.sunset.toUTCString()}, when it stops being served` }),
      ...(d.successor === undefined ? {} : { Link: `<${d.successor}>; rel="successor-version": what replaces it` }),
    },
  };
}

export function applyVersions<R extends Route & VersionDeclared>(table: readonly R[]): Versioned<R> {
  const versions: string[] = [];
  for (const route of table) {
    const v = route.version;
    if (v === undefined) continue;
    if (!VERSION_SEGMENT.test(v)) throw new Error(`Route version ${JSON.stringify(v)} is not of the form v<n> or v<n>-<m>`);
    if (!versions.includes(v)) versions.push(v);
  }
  // One counter per version, bumped in place: no map lookup by string on the hot path.
  const counters = new Map(versions.map((v) => [v, { n: 0 }]));

  const routes = table.map((route): R => (route.version === undefined ? route : { ...route, path: `/api/${route.version}${route.path}`, group: route.version }));

  const policy: Policy<Route & VersionDeclared> = (route) => {
    const counter = route.version === undefined ? undefined : counters.get(route.version);
    if (counter === undefined) return undefined;
    const fields = route.deprecated === undefined ? null : deprecationFields(route.deprecated);
    const wrap = (inner: RouteHandler): RouteHandler => {
      if (fields === null) {
        return (request, params) => {
          counter.n++;
          return inner(request, params);
        };
      }
      const add = fieldsAdder(fields, "last");
      return (request, params) => {
        counter.n++;
        const result = inner(request, params);
        return result instanceof Promise ? result.then(add) : add(result);
      };
    };
    return { wrap, ...(route.deprecated === undefined ? {} : { doc: deprecationDoc(route.deprecated) }) };
  };

  const example = routes.find((r) => r.group !== undefined)?.path ?? "/api/v2/status";
  return {
    routes,
    versions,
    policy,
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
