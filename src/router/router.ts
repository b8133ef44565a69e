// The route table as a request handler: a matcher from method and path to a
// route and its params, plus the answers that follow from the table alone
// (404, 405 with Allow, OPTIONS unless a policy answers it, HEAD served by GET). What a route declares
// beyond its method and path (the body it takes, who may call it) acts
// through the policies the router is given (policy.ts), applied to every
// route alike; what the routes mean is their
// owner's business.

import type { Admission, Handler } from "../http/connection/service.js";
import { problem } from "../http/message/problem.js";
import type { Request, RequestHead } from "../http/message/request.js";
import type { Response } from "../http/message/response.js";
import { declaredBody } from "./body-policy.js";
import { compileRoutes, type CompiledRoutes, type Resource } from "./compile.js";
import { applyPolicies, type Policy, type Preflight, type ServedRoute } from "./policy.js";
import type { Route } from "./route.js";

export interface Router<R extends Route = Route> {
  readonly handle: Handler;
  /** What the policies say of a request from its head alone. */
  readonly admit: (head: RequestHead) => Admission;
  readonly table: CompiledRoutes;
  /** Every route as served: handlers wrapped by the policies, and what the policies documented of each. */
  readonly routes: readonly ServedRoute<R>[];
}

export interface RouterOptions<R extends Route = Route> {
  /** The answer for a path no route serves; undefined falls back to the plain 404. */
  readonly notFound?: (request: Request) => Response | undefined;
  /**
   * The policies every route is served under, the first given outermost.
   * By default only the declared body's (Route.request: 415 and 413 from the head).
   */
  readonly policies?: readonly Policy<R>[];
}

/** RFC 9110 §9.1: methods are case-sensitive, so "update" is not UPDATE; say so when that is the likely mistake. */
function caseHint(method: string, resource: Resource): string {
  const upper = method.toUpperCase();
  if (upper === method || !resource.allow.split(", ").includes(upper)) return "";
  return ` Methods are case-sensitive (RFC 9110 §9.1): ${method} is not ${upper}; send ${upper} to use it.`;
}

export function createRouter<R extends Route>(routes: readonly R[], options: RouterOptions<R> = {}): Router<R> {
  const policies = options.policies ?? [declaredBody];
  const served = routes.map((route) => applyPolicies(route, policies));
  const table = compileRoutes(served);

  function notFound(request: Request): Response {
    return (
      options.notFound?.(request) ??
      problem(404, {
        kind: "not-found",
        detail: `Nothing is served at ${request.path}: no route's path matches it (segments are compared exactly, case included).`,
        instance: request.target,
      })
    );
  }

  function handle(request: Request): Response | Promise<Response> {
    const method = request.method;
    if (request.path === "*") {
      // OPTIONS * asks about the server as a whole (RFC 9110 §9.3.7).
      return { status: 204, headers: { Allow: table.allMethods } };
    }
    const match = table.lookup(method, request.path);
    switch (match.kind) {
      case "found":
        return match.route.handler(request, match.params);
      case "options":
        return preflightOf(match.resource)?.(request, match.resource.allow) ?? { status: 204, headers: { Allow: match.resource.allow } };
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

  /** A policy's answer to OPTIONS at the resource's path, from any of its routes (a CORS preflight, policy.ts). */
  function preflightOf(resource: Resource): Preflight | undefined {
    for (const route of resource.methods.values()) {
      const answer = (route as ServedRoute<R>).preflight;
      if (answer !== undefined) return answer;
    }
    return undefined;
  }

  /** The matched route's policies judge the head (a path or method not served: the handler answers). */
  function admit(head: RequestHead): Admission {
    const match = table.lookup(head.method, head.path);
    return match.kind === "found" ? (match.route as ServedRoute<R>).admit?.(head) : undefined;
  }

  return { handle, admit, table, routes: served };
}
