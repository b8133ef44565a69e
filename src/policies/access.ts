// Who may call a route, as the route declares it (`auth`), enforced here and
// nowhere else: the router applies this policy to every route it serves, the
// documentation and echo routes included, and the OpenAPI document's
// security requirement and 401, and the page's badge, are this policy's own
// account of the same declaration. No handler checks a caller itself.
//
// "admin" needs an administrator's bearer token, always; "token-if-configured"
// needs any valid token when the server makes every write require one
// (WRITE_REQUIRES_TOKEN), and nothing otherwise. The check comes before the
// handler, so a caller without rights learns nothing, not even whether the
// resource exists.

import type { Enforcement, Policy, PolicyDoc } from "../router/policy.js";
import type { Route } from "../router/route.js";
import type { Role, TokenStore } from "../store/types.js";
import { requireRole } from "./auth.js";
import { UNAVAILABLE_DOC } from "./unavailable.js";

/** Who may call a route; absent: anyone. */
export type Access = "admin" | "token-if-configured";

/** What a route declares for this policy. */
export interface AccessDeclared {
  readonly auth?: Access;
}

export interface AccessOptions {
  readonly tokens: TokenStore;
  /** WRITE_REQUIRES_TOKEN: "token-if-configured" routes then need a valid token. */
  readonly writeRequiresToken: boolean;
}

const BEARER = {
  name: "bearer",
  definition: {
    type: "http",
    scheme: "bearer",
    description: "Authorization: Bearer <token>. Each token has the role user or admin; create one with `npm run token -- add --role admin`, or set ADMIN_TOKEN.",
  },
} as const;

const ADMIN_401 = {
  description: "No token, a malformed or unknown token, or a standard user's token: only an administrator may call this",
  headers: { "WWW-Authenticate": 'Bearer realm="startline", with error="invalid_token" or "insufficient_scope" when a token was sent' },
};

const TOKEN_401 = {
  description: "No valid bearer token (this server requires one for every write)",
  headers: { "WWW-Authenticate": 'Bearer realm="startline", with error="invalid_token" when a bad token was sent' },
};

/**
 * The caller must hold `role` ("any": any valid token) before the handler
 * runs. Checking reads the store, so an unreachable one is a 503: the store
 * policy, outside this one, answers it; this one says so in the docs.
 */
function requiring(tokens: TokenStore, role: Role | "any", doc: PolicyDoc): Enforcement {
  return {
    wrap: (handler) => async (request, params) => {
      await requireRole(request, tokens, role);
      return handler(request, params);
    },
    doc: { ...doc, responses: { ...doc.responses, 503: UNAVAILABLE_DOC } },
  };
}

export function accessPolicy({ tokens, writeRequiresToken }: AccessOptions): Policy<Route & AccessDeclared> {
  return (route) => {
    switch (route.auth) {
      case undefined:
        return undefined;
      case "admin":
        return requiring(tokens, "admin", {
          responses: { 401: ADMIN_401 },
          note: "Needs an administrator's bearer token; anyone else, a standard user included, gets 401.",
          requires: { scheme: BEARER, badge: { text: "admin token" }, needs: "This endpoint needs an administrator's token." },
        });
      case "token-if-configured":
        if (!writeRequiresToken) return { doc: { note: "Open to anyone on this server; with WRITE_REQUIRES_TOKEN set it would need a valid bearer token." } };
        return requiring(tokens, "any", {
          responses: { 401: TOKEN_401 },
          note: "This server requires a valid bearer token for every write (WRITE_REQUIRES_TOKEN).",
          requires: {
            scheme: BEARER,
            badge: { text: "token required", title: "this server requires a bearer token for every write (WRITE_REQUIRES_TOKEN)" },
            needs: "This server needs a valid token for every write (WRITE_REQUIRES_TOKEN).",
          },
        });
    }
  };
}
