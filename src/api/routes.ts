// The API's route table: every endpoint the server offers, in one list.
// Who may call each is declared on the route and enforced by the access
// policy (src/policies/access.ts), which the router applies to every route.

import { articleRoutes } from "./articles.js";
import type { ApiContext } from "./context.js";
import { echoRoutes } from "./echo.js";
import { factRoutes } from "./facts.js";
import { labRoutes } from "./lab/routes.js";
import { operatorRoutes, type UsageSource } from "./operator.js";
import { postRoutes } from "./posts.js";
import { statusRoutes, type StatusOptions } from "./status.js";
import type { ApiRoute } from "./route.js";
import type { Store } from "../store/types.js";
import { keptReads, type KeptSettings } from "./kept-reads.js";
import type { Scheme } from "./lab/origin.js";

export interface ApiOptions extends StatusOptions {
  readonly store: Store;
  /** How many bytes of reads to keep (default DEFAULT_KEPT). */
  readonly kept?: KeptSettings;
  /** How clients reach this server: the lab writes absolute URLs and compares origins with it. */
  readonly scheme: Scheme;
  /** The key of the lab's digest nonces (see AppOptions.labSecret). */
  readonly labSecret: string;
  /** Request counts per version, from where the table's versions are applied. */
  readonly usage: UsageSource;
}

/** The API's table; versions are applied where the app is built (policies/versions.ts). */
export function apiRoutes(options: ApiOptions): ApiRoute[] {
  // The rows that read or write the store declare it (store: true): the store policy answers 503 for them.
  const ctx: ApiContext = { store: options.store, kept: keptReads(options.kept) };
  const stored = [...postRoutes(ctx), ...articleRoutes(ctx), ...factRoutes(ctx)];
  return [...statusRoutes(options), ...stored, ...operatorRoutes(options.usage), ...echoRoutes(), ...labRoutes(options.scheme, options.labSecret)];
}
