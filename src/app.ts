// The application: the API's route table behind the router, over a store.
// No sockets here, so tests and tools can run requests through it in-process.

import type { UsageCounts, UsageSource } from "./api/operator.js";
import { apiRoutes } from "./api/routes.js";
import { createRouter, type Router } from "./router/router.js";
import type { Store } from "./store/types.js";

/** v1 of the status resource was superseded by v2 when v2 shipped. */
export const V1_DEPRECATED_SINCE = new Date("2026-01-01T00:00:00Z");

export interface AppOptions {
  readonly store: Store;
  readonly writeRequiresToken?: boolean;
  readonly v1Sunset?: Date | undefined;
  /**
   * Where /api/usage gets its counts: by default this router's own; under
   * WORKERS, the sum over all workers, given this router's counts.
   */
  readonly usage?: (local: () => UsageCounts) => UsageSource;
}

export function createApp(options: AppOptions): Router {
  const router: Router = createRouter(
    apiRoutes({
      store: options.store,
      writeRequiresToken: options.writeRequiresToken ?? false,
      v1DeprecatedSince: V1_DEPRECATED_SINCE,
      ...(options.v1Sunset === undefined ? {} : { v1Sunset: options.v1Sunset }),
      usage: options.usage === undefined ? () => router.usage() : options.usage(() => router.usage()),
    }),
  );
  return router;
}
