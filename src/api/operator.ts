// For operators: how many requests each API version has served since start,
// to tell when an old version has no clients left (docs/api.md, section 8).

import type { ApiRoute } from "./route.js";
import { JSON_ONLY } from "./docs.js";
import { json } from "../representation/json.js";
import { usageSchema } from "../validation/schemas.js";

export type UsageCounts = Record<string, number>;

/** Counts of this process, or (with WORKERS) of every worker, which takes a round trip. */
export type UsageSource = () => UsageCounts | Promise<UsageCounts>;

export function operatorRoutes(usage: UsageSource): ApiRoute[] {
  return [
    {
      method: "GET",
      path: "/api/usage",
      summary: "Requests served per API version since the server started",
      cache: "no-store",
      handler: async () => json(200, { since: STARTED, versions: await usage() }),
      responses: { 200: { description: "Counts since start, per version", mediaTypes: JSON_ONLY, schema: usageSchema } },
    },
  ];
}

const STARTED = new Date().toISOString();
