// The route table as a request handler: a matcher from method and path to a
// route and its params, plus the answers that follow from the table alone
// (404, 405 with Allow, OPTIONS, HEAD served by GET) and the refusals a
// route's declared body allows before the body is read. What the routes
// mean (versions, deprecation, usage counts) is their owner's business.

import type { Admission, Handler } from "../http/service.js";
import { refuseMediaType } from "../http/media.js";
import { problem } from "../http/problem.js";
import type { Request, RequestHead } from "../http/request.js";
import type { Response } from "../http/response.js";
import { compileRoutes, type CompiledRoutes, type Resource } from "./compile.js";
import type { Route } from "./route.js";

export interface Router {
  readonly handle: Handler;
  /** What the table says of a request from its head alone. */
  readonly admit: (head: RequestHead) => Admission;
  readonly table: CompiledRoutes;
}

export interface RouterOptions {
  /** The answer for a path no route serves; undefined falls back to the plain 404. */
  readonly notFound?: (request: Request) => Response | undefined;
}

/** RFC 9110 §9.1: methods are case-sensitive, so "update" is not UPDATE; say so when that is the likely mistake. */
function caseHint(method: string, resource: Resource): string {
  const upper = method.toUpperCase();
  if (upper === method || !resource.allow.split(", ").includes(upper)) return "";
  return ` Methods are case-sensitive (RFC 9110 §9.1): ${method} is not ${upper}; send ${upper} to use it.`;
}

export function createRouter(routes: readonly Route[], options: RouterOptions = {}): Router {
  const table = compileRoutes(routes);

  function notFound(request: Request): Response {
    return (
      options.notFound?.(request) ??
      problem(404, {
        kind: "not-found",
        detail: `Nothing is served at ${request.path}. Check the path against the route table (GET / lists every route).`,
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

  return { handle, admit, table };
}
