// The benchmark scenarios, as data. Add a row to SCENARIOS to benchmark a new
// endpoint; bench/servers/node-http.ts must then serve it too (or the row says
// why node:http cannot), and the ceiling server needs nothing: it replays the
// response startline gives to the scenario's first request.
//
// Everything here is plain data, because the requests are sent to the load
// generator (a child process pinned to its own core) as JSON.

import { METHODS } from "node:http";

/** One request autocannon sends; a scenario's requests are sent in turn on every connection. */
export interface RequestSpec {
  readonly method: string;
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Sent as is, with a Content-Length computed by autocannon. */
  readonly body?: string;
}

export interface Scenario {
  /** Short name for --scenarios and the table. */
  readonly name: string;
  readonly description: string;
  readonly requests: readonly RequestSpec[];
  /** Requests in flight per connection (autocannon `pipelining`); --pipelining overrides it. */
  readonly pipelining: number;
  /**
   * Set when node:http cannot serve the scenario; the table shows
   * "n/a (<this text>)" and node:http is not run. Required when a request
   * uses a method outside node:http's METHODS (its parser answers 400).
   */
  readonly nodeHttpUnsupported?: string;
  /**
   * Compare whole response bodies across servers before measuring (default
   * true). Turn off for bodies that legitimately differ per server, e.g.
   * generated identifiers; status line and header field names are still compared.
   */
  readonly compareBodies?: boolean;
}

const STATUS_V1: RequestSpec = { method: "GET", path: "/api/v1/status" };

export const SCENARIOS: readonly Scenario[] = [
  {
    name: "status",
    description: "GET /api/v1/status, one request at a time per connection",
    requests: [STATUS_V1],
    pipelining: 1,
  },
  {
    name: "status-pipelined",
    description: "GET /api/v1/status, 10 requests pipelined per connection",
    requests: [STATUS_V1],
    pipelining: 10,
  },
  // Later, e.g.:
  // {
  //   name: "article-update",
  //   description: "UPDATE /api/v1/articles/1 with a JSON body",
  //   requests: [{ method: "UPDATE", path: "/api/v1/articles/1", headers: { "content-type": "application/json" }, body: "{...}" }],
  //   pipelining: 1,
  //   nodeHttpUnsupported: "node:http refuses UPDATE",
  // },
];

/** Throws when a row is inconsistent, so a bad row fails before anything starts. */
export function checkScenarios(scenarios: readonly Scenario[]): void {
  const names = new Set<string>();
  for (const s of scenarios) {
    if (!/^[a-z0-9][a-z0-9-]*$/.test(s.name)) throw new Error(`scenario name ${JSON.stringify(s.name)}: use lower-case letters, digits and "-"`);
    if (names.has(s.name)) throw new Error(`scenario ${s.name} is listed twice`);
    names.add(s.name);
    if (s.requests.length === 0) throw new Error(`scenario ${s.name} has no requests`);
    if (!Number.isInteger(s.pipelining) || s.pipelining < 1) throw new Error(`scenario ${s.name}: pipelining must be a whole number >= 1`);
    for (const r of s.requests) {
      if (!r.path.startsWith("/")) throw new Error(`scenario ${s.name}: path ${JSON.stringify(r.path)} must start with "/"`);
      if (!METHODS.includes(r.method) && s.nodeHttpUnsupported === undefined) {
        throw new Error(`scenario ${s.name} uses ${r.method}, which node:http refuses; set nodeHttpUnsupported: "node:http refuses ${r.method}"`);
      }
    }
  }
}

/** Methods outside autocannon 9's fixed list, which bench/autocannon-methods.cjs must add. */
export function extraMethods(scenarios: readonly Scenario[]): string[] {
  const autocannonKnows = new Set(["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"]);
  const extra = new Set<string>();
  for (const s of scenarios) for (const r of s.requests) if (!autocannonKnows.has(r.method)) extra.add(r.method);
  return [...extra].sort();
}
