// The API's route table: every endpoint the server offers, in one list.

import type { Route } from "../router/route.js";
import { statusRoutes, type StatusOptions } from "./status.js";

export type ApiOptions = StatusOptions;

export function apiRoutes(options: ApiOptions): Route[] {
  return [...statusRoutes(options)];
}
