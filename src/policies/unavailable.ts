// A database that cannot be reached is a temporary condition, not a bug: the
// routes that use the store (they declare `store: true`) answer it with 503
// (RFC 9110 §15.6.4) and Retry-After, as problem+json, and the server keeps
// running. The store says
// which failures these are (StoreUnavailableError); everything else still
// reaches the connection as an error, and becomes a logged 500.

import { problem } from "../http/message/problem.js";
import type { Request } from "../http/message/request.js";
import type { Response } from "../http/message/response.js";
import type { Policy } from "../router/policy.js";
import type { Route, RouteHandler, RouteResponseDoc } from "../router/route.js";
import { StoreUnavailableError } from "../store/errors.js";

/** Seconds a client should wait before trying again: about what a database restart takes. */
export const RETRY_AFTER_SECONDS = 5;

function answer(error: unknown, request: Request): Response {
  if (!(error instanceof StoreUnavailableError)) throw error;
  return problem(503, {
    kind: "store-unavailable",
    title: "Database unavailable",
    detail: `The server cannot reach its database right now, so nothing was read or changed. Retry in ${RETRY_AFTER_SECONDS} seconds.`,
    instance: request.target,
    headers: { "Retry-After": String(RETRY_AFTER_SECONDS) },
  });
}

export const UNAVAILABLE_DOC: RouteResponseDoc = {
  description: "The database cannot be reached right now; nothing was read or changed",
  headers: { "Retry-After": `Seconds to wait before retrying (${RETRY_AFTER_SECONDS})` },
};

/** What a route declares for this policy. */
export interface StoreDeclared {
  /** The route reads or writes the store, so it can find the database unreachable. */
  readonly store?: true;
}

/** The handler, answering 503 instead of failing when it (or a policy inside this one) finds the database unreachable. */
function answerUnavailable(handler: RouteHandler): RouteHandler {
  return (request, params) => {
    let result: ReturnType<typeof handler>;
    try {
      result = handler(request, params);
    } catch (error) {
      return answer(error, request);
    }
    return result instanceof Promise ? result.catch((error: unknown) => answer(error, request)) : result;
  };
}

/**
 * The policy: every route's handler, and the checks of the policies given
 * after this one (the access policy reads tokens from the store), answer 503
 * rather than fail when the database cannot be reached. It wraps every route,
 * since what reaches the store is for the route and the policies to know, not
 * this one; a route that never touches the store never meets the error. Its
 * documentation says 503 where a route declares `store: true`; the access
 * policy says it for the routes whose token it looks up.
 */
export const storePolicy: Policy<Route & StoreDeclared> = (route) => ({
  wrap: answerUnavailable,
  ...(route.store === true ? { doc: { responses: { 503: UNAVAILABLE_DOC } } } : {}),
});
