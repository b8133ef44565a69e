// The route table as a request handler: lookup, the answers HTTP itself
// defines (404, 405 with Allow, OPTIONS, HEAD), deprecation fields, and a count
// of requests per API version.

import type { Admission, Handler } from "../http/connection.js";
import { refuseMediaType } from "../http/media.js";
import { formatHttpDate } from "../http/date.js";
import { problem } from "../http/problem.js";
import type { Request, RequestHead } from "../http/request.js";
import type { FieldValue, Response } from "../http/response.js";
import { compileRoutes, type CompiledRoutes, type Resource } from "./compile.js";
import { fullPath, VERSION_SEGMENT, type Route } from "./route.js";

export interface Router {
  readonly handle: Handler;
  /** What the table says of a request from its head alone (see admitHead). */
  readonly admit: (head: RequestHead) => Admission;
  readonly table: CompiledRoutes;
  /** Requests routed to each API version since start: an operator's view of who still uses v1. */
  usage(): Record<string, number>;
}

/** RFC 9745 / RFC 8594 / RFC 8288 fields of a deprecated route, computed once. */
function deprecationFields(route: Route): Record<string, string> | null {
  const d = route.deprecated;
  if (d === undefined) return null;
  const fields: Record<string, string> = { Deprecation: `@${Math.floor(d.since.getTime() / 1000)}` };
  if (d.sunset !== undefined) fields.Sunset = formatHttpDate(d.sunset);
  if (d.successor !== undefined) fields.Link = `<${d.successor}>; rel="successor-version"`;
  return fields;
}

/**
 * The response with the route's extra fields added. Handlers often return
 * one prebuilt response object for every request (the status endpoints do);
 * remembering the combined object for it keeps the deprecated v1 path from
 * allocating two objects per request.
 */
function withFields(response: Response, fields: Readonly<Record<string, FieldValue>>, seen: WeakMap<Response, Response>): Response {
  const known = seen.get(response);
  if (known !== undefined) return known;
  const combined = { ...response, headers: { ...response.headers, ...fields } };
  if (Object.isFrozen(response)) seen.set(response, combined);
  return combined;
}

/** RFC 9110 §9.1: methods are case-sensitive, so "update" is not UPDATE; say so when that is the likely mistake. */
function caseHint(method: string, resource: Resource): string {
  const upper = method.toUpperCase();
  if (upper === method || !resource.allow.split(", ").includes(upper)) return "";
  return ` Methods are case-sensitive (RFC 9110 §9.1): ${method} is not ${upper}; send ${upper} to use it.`;
}

const API_VERSION = /^\/api\/([^/]+)(?:\/|$)/;

export function createRouter(routes: readonly Route[]): Router {
  const table = compileRoutes(routes);
  const extra = new Map<Route, Record<string, string>>();
  for (const route of routes) {
    const fields = deprecationFields(route);
    if (fields !== null) extra.set(route, fields);
  }
  const counts = new Map<string, number>(table.versions.map((v) => [v, 0]));
  const combined = new WeakMap<Response, Response>();
  const versionList = table.versions.join(", ");

  function notFound(request: Request): Response {
    const m = API_VERSION.exec(request.path);
    // Only a segment shaped like a version is called one: /api/openapi.jsn is just a path that is not served.
    // A table without versions has none to list, and "/api/v3/..." is just a path there.
    if (m !== null && counts.size > 0 && VERSION_SEGMENT.test(m[1]!) && !counts.has(m[1]!)) {
      return problem(404, {
        kind: "unknown-version",
        title: "Unknown API version",
        detail: `There is no API version "${m[1]}". This server serves ${versionList}: use /api/<version>/..., e.g. ${fullPath(routes[0]!)}.`,
        instance: request.target,
      });
    }
    return problem(404, {
      kind: "not-found",
      detail: `Nothing is served at ${request.path}. Check the path against the route table (see the README).`,
      instance: request.target,
    });
  }

  function handle(request: Request): Response | Promise<Response> {
    const method = request.method;
    if (request.path === "*") {
      // OPTIONS * asks about the server as a whole (RFC 9110 §9.3.7).
      return { status: 204, headers: { Allow: table.allMethods } };
    }
    const match = table.lookup(method, request.path);
    switch (match.kind) {
      case "found": {
        const route = match.route;
        if (route.version !== undefined) counts.set(route.version, counts.get(route.version)! + 1);
        const fields = extra.get(route);
        if (fields === undefined) return route.handler(request, match.params);
        const result = route.handler(request, match.params);
        return result instanceof Promise ? result.then((r) => withFields(r, fields, combined)) : withFields(result, fields, combined);
      }
      case "options":
        return { status: 204, headers: { Allow: match.resource.allow } };
      case "method-not-allowed":
        return problem(405, {
          kind: "method-not-allowed",
          detail: `${method} is not served at ${request.path}. Allowed methods: ${match.resource.allow}.${caseHint(method, match.resource)}`,
          instance: request.target,
          headers: { Allow: match.resource.allow },
        });
      case "bad-path":
        return problem(400, { kind: "bad-path", detail: match.detail, instance: request.target });
      case "not-found":
        return notFound(request);
    }
  }

  /** A body the route does not take is refused before it is read (RFC 9110 §15.5.14, §15.5.16). */
  function admit(head: RequestHead): Admission {
    const match = table.lookup(head.method, head.path);
    if (match.kind !== "found") return undefined;
    const declared = match.route.request;
    if (declared === undefined) return undefined;
    const refusal = refuseMediaType(head, declared.mediaTypes, declared.why);
    if (refusal !== undefined) return { refuse: refusal };
    return declared.maxBytes === undefined ? undefined : { maxBodyBytes: declared.maxBytes };
  }

  return {
    handle,
    admit,
    table,
    usage: () => Object.fromEntries(counts),
  };
}
