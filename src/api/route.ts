// A row of the API's table: a route (src/router/route.ts), and what it
// declares for the API's policies, which the router hands them without
// reading: who may call it (policies/access.ts), its version and whether it
// is deprecated (policies/versions.ts), whether other origins may read it
// (policies/cors.ts), whether its answers are sandboxed documents
// (policies/sandbox.ts), whether it uses the store (policies/unavailable.ts),
// and how its answers may be cached (policies/cache.ts).

import type { Request } from "../http/message/request.js";
import type { Response } from "../http/message/response.js";
import { route, type ParamsOf, type Route } from "../router/route.js";
import type { AccessDeclared } from "../policies/access.js";
import type { VersionDeclared } from "../policies/versions.js";
import type { CorsDeclared } from "../policies/cors.js";
import type { SandboxDeclared } from "../policies/sandbox.js";
import type { StoreDeclared } from "../policies/unavailable.js";
import type { CacheDeclared } from "../policies/cache.js";

export interface ApiRoute extends Route, AccessDeclared, VersionDeclared, CorsDeclared, SandboxDeclared, StoreDeclared, CacheDeclared {}

/** A row of the API's table, its handler's params typed from its path (see route() in the router). */
export function apiRoute<const P extends string>(
  spec: Omit<ApiRoute, "path" | "handler"> & { readonly path: P; readonly handler: (request: Request, params: ParamsOf<P>) => Response | Promise<Response> },
): ApiRoute {
  return route(spec);
}
