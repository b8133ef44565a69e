// Policies: what a route's declarations make the server do, applied to every
// route of a table by one mechanism (createRouter's `policies`). The router
// reads none of a route's declarations itself: it hands each route to every
// policy it was given, once, when the table is built, and each policy says
// what that route's declarations mean for it. A policy may
//
// - judge a request from its head, before any body byte is read (refuse it
//   with a 415 or 413, or admit it with a tighter body limit), and
// - wrap the route's handler (check the caller before the handler runs), and
// - answer OPTIONS at the route's path (a CORS preflight), which the router
//   otherwise answers alone.
//
// and it says, for the documentation, what it adds to the route: the answers
// it may give, what a caller must present. The OpenAPI document and the page
// read that from the served table, so what they show is what is enforced.

import type { Admission } from "../http/connection/service.js";
import type { Request, RequestHead } from "../http/message/request.js";
import type { Response } from "../http/message/response.js";
import type { Route, RouteHandler, RouteResponseDoc } from "./route.js";

/** What a caller must present to be served, as the documentation shows it. */
export interface Requirement {
  /** The OpenAPI security scheme by name, and its definition (components.securitySchemes). */
  readonly scheme: { readonly name: string; readonly definition: Readonly<Record<string, unknown>> };
  /** A short label beside the route on the page, and its tooltip. */
  readonly badge: { readonly text: string; readonly title?: string };
  /** One sentence for the page's form, beside the field where the credential goes. */
  readonly needs: string;
}

/** What a policy tells the documentation about one route. */
export interface PolicyDoc {
  /** Answers the policy itself may give for this route, by status (added where the route documents none). */
  readonly responses?: Readonly<Record<number, RouteResponseDoc>>;
  /** A sentence for the operation's description. */
  readonly note?: string;
  /** Present when the policy makes the route ask for a credential. */
  readonly requires?: Requirement;
  /** Fields the policy adds to the route's successful answers, name to description. */
  readonly successHeaders?: Readonly<Record<string, string>>;
  /** The policy advises callers to stop using the route (the OpenAPI document marks the operation so). */
  readonly discouraged?: boolean;
}

/** What one policy makes of one route: decided once, when the table is built. */
export interface Enforcement {
  /** The policy's word on a head that announces a body (see Admission); undefined admits it. */
  readonly admit?: (head: RequestHead) => Admission;
  /** The route's handler with the policy's check around it. */
  readonly wrap?: (handler: RouteHandler) => RouteHandler;
  /** The answer to OPTIONS at the route's path, given the Allow the router would send; absent: the router's own 204. */
  readonly preflight?: Preflight;
  readonly doc?: PolicyDoc;
}

/** A policy's answer to OPTIONS at a route's path (see Enforcement.preflight). */
export type Preflight = (request: Request, allow: string) => Response;

/**
 * A policy: given a route, what its declarations mean here, or undefined when
 * the route declares nothing this policy acts on. `R` is the table's route
 * type, so a policy reads declarations the router has no word for.
 */
export type Policy<R extends Route = Route> = (route: R) => Enforcement | undefined;

/** A route as it is served: its handler wrapped by the policies, its head judged by them, and what they documented. */
export type ServedRoute<R extends Route = Route> = R & {
  readonly admit: ((head: RequestHead) => Admission) | undefined;
  /** The first policy's answer to OPTIONS at this route's path, if one gave it. */
  readonly preflight: Preflight | undefined;
  /** What each policy that acts on the route says of it, in the order the policies were given. */
  readonly policyDocs: readonly PolicyDoc[];
};

/**
 * The route with every policy applied: the first policy given is the
 * outermost wrapper, so its check runs first, and the first head judge to
 * refuse decides (a tighter body limit from several: the smallest).
 */
export function applyPolicies<R extends Route>(route: R, policies: readonly Policy<R>[]): ServedRoute<R> {
  const enforcements = policies.map((policy) => policy(route)).filter((e): e is Enforcement => e !== undefined);
  let handler = route.handler;
  for (let i = enforcements.length - 1; i >= 0; i--) {
    const wrap = enforcements[i]!.wrap;
    if (wrap !== undefined) handler = wrap(handler);
  }
  const judges = enforcements.map((e) => e.admit).filter((a): a is (head: RequestHead) => Admission => a !== undefined);
  return {
    ...route,
    handler,
    preflight: enforcements.find((e) => e.preflight !== undefined)?.preflight,
    admit: judges.length === 0 ? undefined : judges.length === 1 ? judges[0] : (head) => admitAll(judges, head),
    policyDocs: enforcements.map((e) => e.doc).filter((d): d is PolicyDoc => d !== undefined),
  };
}

function admitAll(judges: readonly ((head: RequestHead) => Admission)[], head: RequestHead): Admission {
  let limit: number | undefined;
  for (const judge of judges) {
    const word = judge(head);
    if (word === undefined) continue;
    if ("refuse" in word) return word;
    limit = limit === undefined ? word.maxBodyBytes : Math.min(limit, word.maxBodyBytes);
  }
  return limit === undefined ? undefined : { maxBodyBytes: limit };
}
