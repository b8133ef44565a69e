// For operators: how many requests each API version has served since start,
// to tell when an old version has no clients left (spec §9.6).

import type { Route } from "../router/route.js";
import { json } from "./json.js";

export function operatorRoutes(usage: () => Record<string, number>): Route[] {
  return [
    {
      method: "GET",
      path: "/api/usage",
      summary: "Requests served per API version since the server started",
      handler: () => json(200, { since: STARTED, versions: usage() }, { "Cache-Control": "no-store" }),
    },
  ];
}

const STARTED = new Date().toISOString();
