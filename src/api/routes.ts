// The API's route table: every endpoint the server offers, in one list.

import { articleRoutes } from "./articles.js";
import type { ApiContext } from "./context.js";
import { echoRoutes } from "./echo.js";
import { factRoutes } from "./facts.js";
import { operatorRoutes, type UsageSource } from "./operator.js";
import { postRoutes } from "./posts.js";
import { statusRoutes, type StatusOptions } from "./status.js";
import { guarded } from "./guard.js";
import { answerUnavailable } from "./unavailable.js";
import type { VersionedRoute } from "./versions.js";

export interface ApiOptions extends StatusOptions, ApiContext {
  /** Request counts per version, from where the table's versions are applied. */
  readonly usage: UsageSource;
}

/** The API's table; versions are applied where the app is built (versions.ts). */
export function apiRoutes(options: ApiOptions): VersionedRoute[] {
  // Only the routes that read or write the store can find it unreachable; status and usage answer without it.
  // Each route's declared authorization is enforced here, for every route alike (inside the 503
  // wrapper: checking a token reads the store too).
  const guard = <R extends VersionedRoute>(route: R) => guarded(route, options);
  const stored = [...postRoutes(options), ...articleRoutes(options), ...factRoutes(options)].map(guard).map(answerUnavailable);
  return [...statusRoutes(options).map(guard), ...stored, ...operatorRoutes(options.usage).map(guard), ...echoRoutes().map(guard)];
}
