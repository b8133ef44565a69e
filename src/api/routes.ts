// The API's route table: every endpoint the server offers, in one list.

import type { Route } from "../router/route.js";
import { articleRoutes } from "./articles.js";
import type { ApiContext } from "./context.js";
import { factRoutes } from "./facts.js";
import { operatorRoutes, type UsageSource } from "./operator.js";
import { postRoutes } from "./posts.js";
import { statusRoutes, type StatusOptions } from "./status.js";

export interface ApiOptions extends StatusOptions, ApiContext {
  /** Request counts per version, from the router that serves this table. */
  readonly usage: UsageSource;
}

export function apiRoutes(options: ApiOptions): Route[] {
  return [...statusRoutes(options), ...postRoutes(options), ...articleRoutes(options), ...factRoutes(options), ...operatorRoutes(options.usage)];
}
