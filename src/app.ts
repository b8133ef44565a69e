// The application: the API's route table behind the router. No sockets here,
// so tests and tools can run requests through it in-process.

import { apiRoutes } from "./api/routes.js";
import type { Config } from "./config.js";
import { createRouter, type Router } from "./router/router.js";

/** v1 of the status resource was superseded by v2 when v2 shipped. */
export const V1_DEPRECATED_SINCE = new Date("2026-01-01T00:00:00Z");

export function createApp(config: Pick<Config, "v1Sunset">): Router {
  return createRouter(
    apiRoutes({
      v1DeprecatedSince: V1_DEPRECATED_SINCE,
      ...(config.v1Sunset === undefined ? {} : { v1Sunset: config.v1Sunset }),
    }),
  );
}
