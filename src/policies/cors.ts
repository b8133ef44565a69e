// Cross-origin reads, as a route declares them (`cors: "anonymous"`): a page
// on another origin may fetch the route and read its answer, without
// credentials (Fetch standard, CORS protocol). Every answer of the route
// carries `Access-Control-Allow-Origin: *` and exposes its fields; never
// `Access-Control-Allow-Credentials`, so a browser sends no cookies or
// stored credentials on such a request and shows the page nothing that only
// the user's credentials would have fetched. The preflight (OPTIONS with
// Access-Control-Request-Method) is this policy's answer too: the router
// hands OPTIONS at the route's path to it instead of answering alone.
// Routes that declare nothing get no CORS field at all: a page elsewhere
// cannot read the API or the page at /.

import { headerValue, type Request } from "../http/message/request.js";
import type { Response } from "../http/message/response.js";
import type { Policy } from "../router/policy.js";
import type { Route } from "../router/route.js";
import { addingFields } from "./fields.js";

/** What a route declares for this policy. */
export interface CorsDeclared {
  /** "anonymous": any origin may read the answers, without credentials. */
  readonly cors?: "anonymous";
}

/** How long a browser may reuse a preflight's answer (seconds). */
export const PREFLIGHT_MAX_AGE = 3600;

const ANSWERS = { "Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": "*" } as const;

/** A comma-separated list of tokens, as Access-Control-Request-Headers and -Method carry (anything else is not echoed). */
const TOKEN_LIST = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+(?:[ \t]*,[ \t]*[!#$%&'*+.^_`|~0-9A-Za-z-]+)*$/;

/** The preflight's answer: the method and fields asked for allowed (no credentials ride on them), for an hour. */
export function preflight(request: Request, allow: string): Response {
  const method = headerValue(request, "access-control-request-method");
  const fields = headerValue(request, "access-control-request-headers");
  return {
    status: 204,
    headers: {
      Allow: allow,
      ...ANSWERS,
      "Access-Control-Allow-Methods": method !== undefined && TOKEN_LIST.test(method) ? method : allow,
      ...(fields !== undefined && TOKEN_LIST.test(fields) ? { "Access-Control-Allow-Headers": fields } : {}),
      "Access-Control-Max-Age": PREFLIGHT_MAX_AGE,
    },
  };
}

export const corsPolicy: Policy<Route & CorsDeclared> = (route) => {
  if (route.cors === undefined) return undefined;
  return {
    wrap: addingFields(ANSWERS),
    preflight,
    doc: {
      note: "Readable from any origin without credentials (Access-Control-Allow-Origin: *, never Allow-Credentials); OPTIONS answers a CORS preflight.",
      successHeaders: { "Access-Control-Allow-Origin": "*: any origin may read this answer, without credentials", "Access-Control-Expose-Headers": "*" },
    },
  };
};
