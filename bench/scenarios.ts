// The benchmark scenarios, as data. Add a row to SCENARIOS to benchmark a new
// endpoint; bench/servers/node-http.ts must then serve it too (or the row says
// why node:http cannot), and the ceiling server needs nothing: it replays the
// response startline gives to the scenario's first request.
//
// Everything here is plain data: wrk gets the request on its command line
// (bench/wrk.lua), the idle connections' client as JSON.

import { METHODS } from "node:http";

/** The request a scenario sends, over and over on every connection. */
export interface RequestSpec {
  readonly method: string;
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Sent as is, with a Content-Length (wrk reads it from a file: bench/wrk.lua's @body=). */
  readonly body?: string;
}

/**
 * How a server's response body must match startline's (the reference, captured
 * once per scenario from a fresh startline):
 * - "exact": byte for byte;
 * - "timestamps": byte for byte once every RFC 3339 timestamp
 *   ("2026-11-22T20:47:36.801Z", fixed width) is masked, for bodies that hold
 *   the time of a write; ETag values are then not compared (they hash the body),
 *   Content-Length still is;
 * - "none": not compared (nor Content-Length, ETag, Location values); status
 *   line and header field names still are.
 */
export type BodyCheck = "exact" | "timestamps" | "none";

export interface Scenario {
  /** Short name for --scenarios and the table. */
  readonly name: string;
  readonly description: string;
  readonly request: RequestSpec;
  /** Requests written at once per connection (wrk.lua's depth); --pipelining overrides it. */
  readonly pipelining: number;
  /**
   * Set when node:http cannot serve the scenario; the table shows
   * "n/a (<this text>)" and node:http is not run. Required when a request
   * uses a method outside node:http's METHODS (its parser answers 400).
   */
  readonly nodeHttpUnsupported?: string;
  /**
   * How bodies are compared with startline's before measuring (default
   * "exact"; true means "exact", false "none"), for every server, or per
   * server: `{ startline: "timestamps", nodeHttp: "exact" }`. The ceiling
   * replays startline's response, so it is always compared exactly.
   */
  readonly compareBodies?: boolean | BodyCheck | { readonly startline: BodyCheck; readonly nodeHttp: BodyCheck };
  /**
   * Requests sent to startline, in order, each on its own connection, every
   * time it starts (before the check and the warm-up, outside the
   * measurement); each must answer 2xx. node:http is not sent them: it starts
   * with the state startline had right after them (its posts and facts, read
   * back with GET /api/v1/posts and GET /api/v2/facts from the startline
   * that gives the reference response), so its bodies hold the same data,
   * timestamps included.
   */
  readonly setup?: readonly RequestSpec[];
  /** Extra environment for every server of this scenario (startline's settings; node:http reads some: see node-http.ts). */
  readonly env?: Readonly<Record<string, string>>;
  /** Over HTTPS: every server gets TLS_CERT/TLS_KEY (a throwaway self-signed certificate). */
  readonly tls?: boolean;
  /**
   * Serving processes per server: startline with WORKERS=n (and a DATA_DIR on
   * disk), node:http and the ceiling with n node:cluster workers. They are
   * allowed on every core (the load generator's too); CPU and RSS are summed
   * over the primary and its workers.
   */
  readonly workers?: number;
  /**
   * Not a throughput run: each server holds this many idle keep-alive
   * connections (each sends the scenario's first request, reads the answer,
   * then stays open) and the RSS they cost is reported (--idle-connections
   * overrides the count).
   */
  readonly idle?: { readonly connections: number };
  /**
   * The status every measured answer must have (304 for a conditional
   * request that matches); absent: any 2xx. The table's "non-2xx" column then
   * counts the answers with another status.
   */
  readonly status?: number;
  /** Part of the --quick subset. */
  readonly quick?: boolean;
  /** Printed under the table, when the scenario needs a caveat. */
  readonly note?: string;
}

const STATUS_V1: RequestSpec = { method: "GET", path: "/api/v1/status" };
const STATUS_V2: RequestSpec = { method: "GET", path: "/api/v2/status" };

/**
 * The administrator token startline is started with for article-update. Not a
 * secret: it only ever guards a throwaway in-memory store on 127.0.0.1.
 */
export const BENCH_ADMIN_TOKEN = "bench-admin-token-0123456789abcdef";

/** How many posts the posts-* scenarios publish before measuring. */
export const SEEDED_POSTS = 100;

/**
 * The fields of the n-th seeded post (1-based): deterministic, varied on
 * purpose so that the YAML serializers must agree on the hard cases (": "
 * in a plain scalar, multi-line bodies, strings that look like numbers or
 * booleans, non-ASCII text, an empty tags array, absent optional fields).
 */
export function seedPostFields(n: number): Record<string, unknown> {
  const titles = [`Post ${n}: notes on HTTP/1.1`, `Why Content-Length matters (${n})`, `${2000 + n}`, n % 2 === 0 ? "yes" : "null", `Ação nº ${n} — cabeçalhos`];
  const sentence = "A request line, header fields, an empty line, then the body: framing decides where a message ends.";
  const body =
    n % 10 === 0
      ? `First line of post ${n}.\nSecond line: with a colon.\n- and a dash\n`
      : n % 7 === 0
        ? `  leading spaces, "quotes" and 'apostrophes' in post ${n} # not a comment`
        : `${sentence} Post ${n} repeats it: ${sentence}`;
  return {
    title: titles[n % titles.length],
    body,
    ...(n % 2 === 0 ? { author: n % 4 === 0 ? "José Ramos" : "ana" } : {}),
    ...(n % 3 === 0 ? { tags: n % 9 === 0 ? [] : ["http", `tag-${n}`, "on"] } : {}),
  };
}

const JSON_HEADERS = { "Content-Type": "application/json" };

/** POST /api/v1/post/post-001 ... post-100. */
const SEED_POSTS: readonly RequestSpec[] = Array.from({ length: SEEDED_POSTS }, (_, i) => ({
  method: "POST",
  path: `/api/v1/post/post-${String(i + 1).padStart(3, "0")}`,
  headers: JSON_HEADERS,
  body: JSON.stringify(seedPostFields(i + 1)),
}));

const POSTS_NOTE =
  `${SEEDED_POSTS} posts are published through the API on every start of startline; node:http starts with the posts ` +
  "startline listed (same data, same timestamps); a fresh startline's timestamps differ from the reference's, so bodies " +
  "are compared with timestamps masked (the same bytes for node:http), and ETag values not at all (a list's tag names " +
  "its database's random epoch). Lists are streamed (chunked) by both servers.";

const LIST_JSON: RequestSpec = { method: "GET", path: "/api/v1/posts", headers: { Accept: "application/json" } };

export const SCENARIOS: readonly Scenario[] = [
  {
    name: "status",
    description: "GET /api/v1/status, one request at a time per connection",
    request: STATUS_V1,
    pipelining: 1,
  },
  {
    name: "status-pipelined",
    description: "GET /api/v1/status, 10 requests pipelined per connection",
    request: STATUS_V1,
    pipelining: 10,
    quick: true,
  },
  {
    name: "posts-json",
    description: `GET /api/v1/posts (Accept: application/json) with ${SEEDED_POSTS} posts in the store`,
    request: LIST_JSON,
    pipelining: 1,
    setup: SEED_POSTS,
    compareBodies: "timestamps",
    note: POSTS_NOTE,
  },
  {
    name: "posts-304",
    description: `GET /api/v1/posts with If-None-Match: * (304: only the list's revision is read) with ${SEEDED_POSTS} posts in the store`,
    request: { ...LIST_JSON, headers: { ...LIST_JSON.headers, "If-None-Match": "*" } },
    pipelining: 1,
    status: 304,
    setup: SEED_POSTS,
    compareBodies: "timestamps",
    note:
      "If-None-Match: * matches any current list (RFC 9110 §13.1.2), as the list's own tag would: a scenario cannot know that tag " +
      "in advance (it names the database's random epoch). startline reads the revision and answers 304; node:http compares with its counter. " +
      "Every answer must be 304 (\"non-2xx\" counts the others).",
  },
  {
    name: "posts-page",
    description: `GET /api/v1/posts?limit=50, the first page (Link: rel="next"), with ${SEEDED_POSTS} posts in the store`,
    request: { ...LIST_JSON, path: "/api/v1/posts?limit=50" },
    pipelining: 1,
    setup: SEED_POSTS,
    compareBodies: "timestamps",
    note: "as posts-json; both servers give the same next link (the cursor names the 50th post's position, 50 in a fresh store).",
  },
  {
    name: "posts-yaml",
    description: `GET /api/v1/posts (Accept: application/yaml) with ${SEEDED_POSTS} posts in the store`,
    request: { method: "GET", path: "/api/v1/posts", headers: { Accept: "application/yaml" } },
    pipelining: 1,
    setup: SEED_POSTS,
    compareBodies: "timestamps",
    quick: true,
    note: "as posts-json; node:http serializes with js-yaml's dump and startline's options ({ noRefs: true, lineWidth: -1 }).",
  },
  {
    name: "facts-post",
    description: "POST /api/v2/facts with a text/plain sentence (201, a new fact per request)",
    request: { method: "POST", path: "/api/v2/facts", headers: { "Content-Type": "text/plain" }, body: "RFC 9110 defines HTTP semantics." },
    pipelining: 1,
    // Both start with startline's 31 seeded facts, so the first new id is the same; createdAt differs.
    compareBodies: "timestamps",
    note: "every request adds a fact (the stores grow during the run); node:http starts with startline's facts, so the ids match and only createdAt is masked.",
  },
  {
    name: "post-patch",
    description: 'PATCH /api/v1/post/bench with {"title": ...} (application/merge-patch+json) on a post published in setup',
    request: {
      method: "PATCH",
      path: "/api/v1/post/bench",
      headers: { "Content-Type": "application/merge-patch+json" },
      body: JSON.stringify({ title: "Patched by the benchmark" }),
    },
    pipelining: 1,
    setup: [
      {
        method: "POST",
        path: "/api/v1/post/bench",
        headers: JSON_HEADERS,
        body: JSON.stringify({ title: "Benchmark", body: "A post the benchmark patches.", author: "bench", tags: ["bench"] }),
      },
    ],
    // updatedAt moves on every PATCH (and the ETag with it).
    compareBodies: "timestamps",
  },
  {
    name: "article-update",
    description: "UPDATE /api/v1/artigo/1 as an administrator (Bearer token) with a JSON merge patch",
    request: {
      method: "UPDATE",
      path: "/api/v1/artigo/1",
      headers: { Authorization: `Bearer ${BENCH_ADMIN_TOKEN}`, "Content-Type": "application/merge-patch+json" },
      body: JSON.stringify({ title: "Updated by the benchmark" }),
    },
    pipelining: 1,
    nodeHttpUnsupported: "node:http refuses UPDATE",
    env: { ADMIN_TOKEN: BENCH_ADMIN_TOKEN },
    compareBodies: "timestamps",
    quick: true,
  },
  {
    name: "status-tls",
    description: "GET /api/v2/status over HTTPS (TLS 1.3, persistent connections)",
    request: STATUS_V2,
    pipelining: 1,
    tls: true,
    quick: true,
    note:
      "HTTPS with a throwaway self-signed P-256 certificate; node:https and a node:tls ceiling beside startline. Connections are " +
      "persistent, so this is the cost of encryption per request, not of handshakes. wrk does not verify certificates; " +
      "the response check before each run does, against the throwaway certificate.",
  },
  {
    name: "status-workers2",
    description: "GET /api/v2/status, startline with WORKERS=2 beside node:http and the ceiling with 2 node:cluster workers",
    request: STATUS_V2,
    pipelining: 1,
    workers: 2,
    quick: true,
    note:
      "2 worker processes (plus the primary) per server, allowed on both cores: one of them shares core 1 with wrk, " +
      "so req/s says little; CPU µs/req (summed over the primary and the workers) and RSS (summed) are the " +
      "figures to compare. startline's DATA_DIR is a fresh temporary directory (WORKERS needs one on disk).",
  },
  {
    name: "idle-10k",
    description: "10,000 idle keep-alive connections, each after one GET /api/v2/status: RSS per connection",
    request: STATUS_V2,
    pipelining: 1,
    idle: { connections: 10_000 },
    // Nothing may close during the measurement: keep-alive far longer than it takes, and no cap below the count.
    env: { KEEP_ALIVE_TIMEOUT_MS: "600000", MAX_CONNECTIONS: "100000" },
    quick: true,
  },
];

/** The scenarios --quick runs when --scenarios is not given (the rows marked quick): one of each kind of setup. */
export const QUICK_SCENARIOS: readonly string[] = SCENARIOS.filter((s) => s.quick === true).map((s) => s.name);

/** The engine's own scenarios: the table of latency per run shows their every round (the tail moves more than a median shows). */
export const ENGINE_SCENARIOS: readonly string[] = ["status", "status-pipelined"];

/** Whether `status` is what the scenario's requests must be answered with. */
export function answersAsExpected(scenario: Scenario, status: number): boolean {
  return scenario.status === undefined ? status >= 200 && status <= 299 : status === scenario.status;
}

/** The body check for one server of a scenario. */
export function bodyCheck(scenario: Scenario, server: "startline" | "node-http" | "ceiling"): BodyCheck {
  if (server === "ceiling") return "exact";
  const c = scenario.compareBodies;
  if (c === undefined || c === true) return "exact";
  if (c === false) return "none";
  if (typeof c === "string") return c;
  return server === "startline" ? c.startline : c.nodeHttp;
}

/** Throws when a row is inconsistent, so a bad row fails before anything starts. */
export function checkScenarios(scenarios: readonly Scenario[]): void {
  const names = new Set<string>();
  const checks = new Set<string>(["exact", "timestamps", "none"]);
  for (const s of scenarios) {
    if (!/^[a-z0-9][a-z0-9-]*$/.test(s.name)) throw new Error(`scenario name ${JSON.stringify(s.name)}: use lower-case letters, digits and "-"`);
    if (names.has(s.name)) throw new Error(`scenario ${s.name} is listed twice`);
    names.add(s.name);
    if (!Number.isInteger(s.pipelining) || s.pipelining < 1) throw new Error(`scenario ${s.name}: pipelining must be a whole number >= 1`);
    if (s.workers !== undefined && (!Number.isInteger(s.workers) || s.workers < 1)) throw new Error(`scenario ${s.name}: workers must be a whole number >= 1`);
    if (s.idle !== undefined && (!Number.isInteger(s.idle.connections) || s.idle.connections < 1)) throw new Error(`scenario ${s.name}: idle.connections must be a whole number >= 1`);
    for (const server of ["startline", "node-http"] as const) {
      if (!checks.has(bodyCheck(s, server))) throw new Error(`scenario ${s.name}: unknown body check ${JSON.stringify(bodyCheck(s, server))}`);
    }
    for (const r of [s.request, ...(s.setup ?? [])]) {
      if (!r.path.startsWith("/")) throw new Error(`scenario ${s.name}: path ${JSON.stringify(r.path)} must start with "/"`);
    }
    if (!METHODS.includes(s.request.method) && s.nodeHttpUnsupported === undefined) {
      throw new Error(`scenario ${s.name} uses ${s.request.method}, which node:http refuses; set nodeHttpUnsupported: "node:http refuses ${s.request.method}"`);
    }
  }
}
