// The API's route table: every endpoint the server offers, in one list.

import type { Route } from "../router/route.js";
import { articleRoutes } from "./articles.js";
import type { ApiContext } from "./context.js";
import { echoRoutes } from "./echo.js";
import { factRoutes } from "./facts.js";
import { operatorRoutes, type UsageSource } from "./operator.js";
import { postRoutes } from "./posts.js";
import { statusRoutes, type StatusOptions } from "./status.js";
import { answerUnavailable } from "./unavailable.js";

export interface ApiOptions extends StatusOptions, ApiContext {
  /** Request counts per version, from the router that serves this table. */
  readonly usage: UsageSource;
}

export function apiRoutes(options: ApiOptions): Route[] {
  // Only the routes that read or write the store can find it unreachable; status and usage answer without it.
  const stored = [...postRoutes(options), ...articleRoutes(options), ...factRoutes(options)].map(answerUnavailable);
  return [...statusRoutes(options), ...stored, ...operatorRoutes(options.usage), ...echoRoutes()];
}
