// The application: the API's route table behind the router, over a store.
// No sockets here, so tests and tools can run requests through it in-process.

import type { UsageCounts, UsageSource } from "./api/operator.js";
import { apiRoutes } from "./api/routes.js";
import { withDocs } from "./docs/routes.js";
import { DEFAULT_LIMITS, type ParserLimits } from "./http/parser.js";
import { withCompression } from "./http/compress.js";
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
  /** The server's parser limits: the wire view applies them to the requests it runs, as a socket would. */
  readonly limits?: Partial<ParserLimits>;
  /** Serve the wire view, POST /api/wire (default true; WIRE_VIEW=0 turns it off). */
  readonly wireView?: boolean;
}

export function createApp(options: AppOptions): Router {
  const writeRequiresToken = options.writeRequiresToken ?? false;
  const api = apiRoutes({
    store: options.store,
    writeRequiresToken,
    v1DeprecatedSince: V1_DEPRECATED_SINCE,
    ...(options.v1Sunset === undefined ? {} : { v1Sunset: options.v1Sunset }),
    usage: options.usage === undefined ? () => router.usage() : options.usage(() => router.usage()),
  });
  // The page, the OpenAPI document and the wire view, generated from the table they join.
  const routes = withDocs(api, {
    writeRequiresToken,
    ...(options.wireView === false
      ? {}
      : {
          wire: {
            // Late-bound: the wire view runs requests through this very app, which is built from its own table.
            handler: (request) => app.handle(request),
            limits: { ...DEFAULT_LIMITS, ...options.limits },
            onHandlerError: (error) => console.error("startline: handler error in the wire view:", error),
          },
        }),
  });
  const router: Router = createRouter(routes);
  // Content codings apply to every route's answer, the wire view's own included.
  const app = withCompression(router);
  return app;
}
