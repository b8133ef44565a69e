// What a route declares about its callers (Route.auth), enforced in one
// place: the check runs before the handler, from the same declaration the
// OpenAPI document and the page read, so a handler cannot forget it and the
// docs cannot drift from what the server does.

import type { Route } from "../router/route.js";
import { requireRole } from "./auth.js";
import type { ApiContext } from "./context.js";

/**
 * The route with its declared authorization applied: "admin" needs an
 * administrator's bearer token, always; "token-if-configured" needs any
 * valid token when the server makes every write require one. Authorization
 * comes first, so a caller without rights learns nothing, not even whether
 * the resource exists.
 */
export function guarded<R extends Route>(route: R, ctx: ApiContext): R {
  const inner = route.handler;
  switch (route.auth) {
    case undefined:
      return route;
    case "admin":
      return {
        ...route,
        handler: async (request, params) => {
          await requireRole(request, ctx.store.tokens, "admin");
          return inner(request, params);
        },
      };
    case "token-if-configured":
      if (!ctx.writeRequiresToken) return route;
      return {
        ...route,
        handler: async (request, params) => {
          await requireRole(request, ctx.store.tokens, "any");
          return inner(request, params);
        },
      };
  }
}
