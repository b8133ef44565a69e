// The status resource in its three versions (docs/api.md, section 8): v1 answers `resposta`,
// v2 `response`, and v1-1 is v1 plus one field, the example of a finer
// version. Each body never changes, so each response is built once.

import type { Response } from "../http/message/response.js";
import type { ApiRoute } from "./route.js";
import { JSON_ONLY } from "./docs.js";
import { json } from "../representation/json.js";
import { statusV1_1Schema, statusV1Schema, statusV2Schema } from "../validation/schemas.js";

export interface StatusOptions {
  /** When v1 was deprecated (Deprecation field). */
  readonly v1DeprecatedSince: Date;
  /** When v1 stops being served (Sunset field), if decided. */
  readonly v1Sunset?: Date;
}

// Frozen: the same object answers every request, and the router may cache what it derives from it.
const V1: Response = Object.freeze(json(200, { resposta: "O servidor está no ar." }));
const V1_1: Response = Object.freeze(json(200, { resposta: "O servidor está no ar.", versao: "v1-1" }));
const V2: Response = Object.freeze(json(200, { response: "The server is up." }));

export function statusRoutes(options: StatusOptions): ApiRoute[] {
  return [
    {
      method: "GET",
      version: "v1",
      path: "/status",
      summary: "Server status, v1: one field `resposta` (deprecated: use v2)",
      handler: () => V1,
      responses: { 200: { description: "The server is up (in Portuguese)", mediaTypes: JSON_ONLY, schema: statusV1Schema } },
      deprecated: {
        since: options.v1DeprecatedSince,
        ...(options.v1Sunset === undefined ? {} : { sunset: options.v1Sunset }),
        successor: "/api/v2/status",
      },
    },
    {
      method: "GET",
      version: "v1-1",
      path: "/status",
      summary: "Server status, v1-1: v1's `resposta` plus `versao`",
      handler: () => V1_1,
      responses: { 200: { description: "The server is up, with the version that answered", mediaTypes: JSON_ONLY, schema: statusV1_1Schema } },
    },
    {
      method: "GET",
      version: "v2",
      path: "/status",
      summary: "Server status, v2: one field `response`",
      handler: () => V2,
      responses: { 200: { description: "The server is up", mediaTypes: JSON_ONLY, schema: statusV2Schema } },
    },
  ];
}
