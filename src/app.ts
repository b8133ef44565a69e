// The application: the API's route table behind the router, over a store.
// No sockets here, so tests and tools can run requests through it in-process.

import { randomBytes } from "node:crypto";
import type { UsageCounts, UsageSource } from "./api/operator.js";
import { apiRoutes } from "./api/routes.js";
import { docsRoutes, notFoundPointingHere } from "./docs/routes.js";
import { DEFAULT_LIMITS, type ParserLimits } from "./http/parse/parser.js";
import { withCompression } from "./http/message/compression.js";
import type { Admission, Handler, Service } from "./http/connection/service.js";
import type { RequestHead } from "./http/message/request.js";
import { accessPolicy } from "./policies/access.js";
import { cachePolicy } from "./policies/cache.js";
import { corsPolicy } from "./policies/cors.js";
import { storePolicy } from "./policies/unavailable.js";
import { sandboxPolicy } from "./policies/sandbox.js";
import { declaredBody } from "./router/body-policy.js";
import { createRouter } from "./router/router.js";
import type { ServedRoute } from "./router/policy.js";
import type { ApiRoute } from "./api/route.js";
import { applyVersions } from "./policies/versions.js";
import type { Store } from "./store/types.js";
import type { KeptSettings } from "./api/kept-reads.js";

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
  /** Whether clients reach this server over TLS (the lab compares origins and writes absolute URLs with it; default false). */
  readonly secure?: boolean;
  /** The key the lab signs its digest nonces with: the same in every process that may get the next request (default: one made here). */
  readonly labSecret?: string;
  /** Serve the wire view, POST /api/wire (default true; WIRE_VIEW=0 turns it off). */
  readonly wireView?: boolean;
  /** How many bytes of reads to keep in memory (KEPT_BYTES; default DEFAULT_KEPT). */
  readonly kept?: KeptSettings;
}

/** The app as the server runs it: a service (handle, admit), its table, and its usage counts. */
export interface App extends Service {
  readonly handle: Handler;
  readonly admit: (head: RequestHead) => Admission;
  /** Every route served, full paths, with what its policies enforce (what the docs are generated from). */
  readonly routes: readonly ServedRoute<ApiRoute>[];
  /** Requests per API version since start, in this process. */
  usage(): UsageCounts;
}

export function createApp(options: AppOptions): App {
  const writeRequiresToken = options.writeRequiresToken ?? false;
  const local = () => versioned.usage();
  const api = apiRoutes({
    store: options.store,
    ...(options.kept === undefined ? {} : { kept: options.kept }),
    scheme: options.secure === true ? "https" : "http",
    labSecret: options.labSecret ?? randomBytes(32).toString("hex"),
    v1DeprecatedSince: V1_DEPRECATED_SINCE,
    ...(options.v1Sunset === undefined ? {} : { v1Sunset: options.v1Sunset }),
    usage: options.usage === undefined ? local : options.usage(local),
  });
  // Versions are the API's: full paths, and a policy for the deprecation fields and usage counts; the versioned 404.
  const versioned = applyVersions(api);
  // The page, the OpenAPI document and the wire view, generated from the table they join.
  const docs = docsRoutes({
    ...(options.wireView === false
      ? {}
      : {
          wire: {
            // Late-bound: the wire view runs requests through this very app, which is built from its own table.
            handler: (request) => app.handle(request),
            admit: (head) => app.admit(head),
            limits: { ...DEFAULT_LIMITS, ...options.limits },
            onHandlerError: (error) => console.error("startline: handler error in the wire view:", error),
          },
        }),
  });
  // Every route, the docs' and the echo's included, is served under the same policies, each acting on
  // what the route declares: who may read it from another origin; a sandboxed answer; its
  // Cache-Control; the 503 of an unreachable store; the body it takes, refused from the head when it is
  // not one it takes; its version (counted before the access check, so a request refused with 401 is
  // still counted); and who may call it.
  const router = createRouter<ApiRoute>([...versioned.routes, ...docs.routes], {
    // CORS first, so that every answer of a route that declares it carries it, a refusal included.
    // The store's 503 outside every check that may read the store (the access policy reads tokens).
    policies: [corsPolicy, sandboxPolicy, cachePolicy, storePolicy, declaredBody, versioned.policy, accessPolicy({ tokens: options.store.tokens, writeRequiresToken })],
    notFound: (request) => versioned.unknownVersion(request) ?? notFoundPointingHere(request),
  });
  docs.publish(router.routes);
  // Content codings apply to every route's answer, the wire view's own included.
  const app = withCompression(router);
  return { handle: app.handle, admit: app.admit, routes: router.routes, usage: local };
}
