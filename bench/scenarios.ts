// What `npm run bench` measures, as data: one row per scenario. A row names
// its request, the servers it runs against (startline first, then the server
// a user would run instead, then the ceiling), and what the servers need to
// serve it. To add one, add a row; a comparator must then serve its request
// (bench/servers/), the ceiling needs nothing (it replays startline's answer).

import { encodeCursor } from "../src/api/list-query.js";

export type ServerKind = "startline" | "node-http" | "ceiling" | "fastify" | "data-ceiling" | "app-on-startline" | "app-on-node";

export const LABEL: Readonly<Record<ServerKind, string>> = {
  startline: "startline",
  "node-http": "node:http",
  ceiling: "ceiling",
  fastify: "fastify",
  "data-ceiling": "data ceiling",
  "app-on-startline": "startline/node",
  "app-on-node": "node:http",
};

/** The applications bench/servers/node-apps.ts serves, the same code on node:http and on startline/node. */
export type NodeApp = "bare" | "express" | "koa" | "fastify";

export interface Scenario {
  readonly name: string;
  readonly what: string;
  readonly method: string;
  /** "{n}" becomes a counter, new for every request: each POST publishes a post of its own. */
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  /** Requests written at once per connection (pipelining). */
  readonly depth?: number;
  /** Connections, when not the run's (--connections). */
  readonly connections?: number;
  readonly servers: readonly ServerKind[];
  /** Over HTTPS (a throwaway certificate). */
  readonly tls?: boolean;
  /** Serving processes: startline's WORKERS, node:cluster workers for the others; allowed on both cores. */
  readonly workers?: number;
  /** Not a load run: this many idle keep-alive connections, and the RSS they cost. */
  readonly idle?: number;
  /** Requests each idle connection sends, one after another, before it falls silent (1 when absent). */
  readonly idleRequests?: number;
  /** On SQLite, with posts p0... before each run: filled through HTTP (every server), or directly into startline's store. */
  readonly fill?: { readonly posts: number; readonly direct?: boolean; readonly bodyChars?: number };
  /** What is wrong with a server's answer to one request before the run; absent: it must be startline's status and body. */
  readonly check?: (status: number, body: string) => string | undefined;
  /** Part of --quick. */
  readonly quick?: boolean;
  /** For app-on-startline and app-on-node: which application they serve (bench/servers/node-apps.ts). */
  readonly app?: NodeApp;
}

const ENGINE: readonly ServerKind[] = ["startline", "node-http", "ceiling"];
const DATA: readonly ServerKind[] = ["startline", "fastify", "data-ceiling"];
const YAML = { Accept: "application/yaml" };
/** The same application on startline/node (measured, first) and on node:http, and the ceiling replaying startline/node's answer. */
const NODE_APP: readonly ServerKind[] = ["app-on-startline", "app-on-node", "ceiling"];
const hi = (status: number, body: string) => (status === 200 && body === "hi" ? undefined : `answered ${status} ${body.slice(0, 100)}`);
/** A scenario pair per application: one request at a time per connection, and 10 written at once. */
const nodeApp = (app: NodeApp, what: string): Scenario[] => [
  { name: `node-${app}`, what: `${what}, GET /, one request at a time per connection`, method: "GET", path: "/", servers: NODE_APP, app, check: hi, quick: app === "bare" },
  { name: `node-${app}-pipelined`, what: `the same, 10 requests written at once`, method: "GET", path: "/", depth: 10, servers: NODE_APP, app, check: hi },
];

/** Post p<i> as the data scenarios' fill publishes it: a title of about 25 characters, a body of 600, an author, two tags. */
export function benchPost(i: number): { title: string; body: string; author: string; tags: string[] } {
  const words = "the quick brown fox jumps over a lazy dog while startline serves data ";
  const body = words.repeat(Math.ceil(600 / words.length) + 1).slice(i % 50, (i % 50) + 600);
  return { title: `Bench post number ${String(i).padStart(4, "0")}`, body, author: "Ada Bench", tags: ["bench", `t${i % 7}`] };
}

const posts = (n: number) => (status: number, body: string) => {
  if (status !== 200) return `status ${status}`;
  const got = body.startsWith("{") ? (JSON.parse(body) as { posts: unknown[] }).posts.length : body.split("\n").filter((l) => l.startsWith("  - id: ")).length;
  return got === n ? undefined : `${got} posts, not ${n}`;
};

export const SCENARIOS: readonly Scenario[] = [
  // The same node:http application on startline/node and on node:http (issue 50).
  ...nodeApp("bare", 'a bare listener, res.end("hi")'),
  ...nodeApp("express", "Express 5's hello world"),
  ...nodeApp("koa", "Koa 3's hello world"),
  ...nodeApp("fastify", "Fastify 5's hello world"),
  { name: "status", what: "GET /api/v1/status, one request at a time per connection", method: "GET", path: "/api/v1/status", servers: ENGINE },
  { name: "status-pipelined", what: "the same, 10 requests written at once", method: "GET", path: "/api/v1/status", depth: 10, servers: ENGINE, quick: true },
  { name: "status-tls", what: "GET /api/v2/status over HTTPS, persistent connections", method: "GET", path: "/api/v2/status", tls: true, servers: ENGINE, quick: true },
  { name: "status-workers2", what: "GET /api/v2/status, 2 worker processes per server", method: "GET", path: "/api/v2/status", workers: 2, servers: ENGINE, quick: true },
  { name: "idle-10k", what: "10,000 idle keep-alive connections, each after one GET /api/v2/status", method: "GET", path: "/api/v2/status", idle: 10_000, servers: ENGINE, quick: true },
  // Three heads alike: startline's parser then holds the connection's last head (src/http/parse/head-memory.ts).
  { name: "idle-10k-repeat", what: "the same, each after three GET /api/v2/status in turn", method: "GET", path: "/api/v2/status", idle: 10_000, idleRequests: 3, servers: ENGINE },
  // The data endpoints on SQLite with 1,000 posts, beside fastify and the data ceiling (issue 28).
  {
    name: "post-one",
    what: "GET /api/v1/post/:id",
    method: "GET",
    path: "/api/v1/post/p500",
    connections: 50,
    servers: DATA,
    fill: { posts: 1000 },
    check: (status, body) => (status === 200 && (JSON.parse(body) as { id?: string }).id === "p500" ? undefined : `status ${status}: ${body.slice(0, 100)}`),
    quick: true,
  },
  { name: "page-50", what: "GET /api/v1/posts?limit=50", method: "GET", path: "/api/v1/posts?limit=50", connections: 50, servers: DATA, fill: { posts: 1000 }, check: posts(50) },
  { name: "list-all", what: "GET /api/v1/posts, all 1,000", method: "GET", path: "/api/v1/posts", connections: 10, servers: DATA, fill: { posts: 1000 }, check: posts(1000) },
  { name: "page-50-yaml", what: "GET /api/v1/posts?limit=50 as YAML", method: "GET", path: "/api/v1/posts?limit=50", headers: YAML, connections: 50, servers: ["startline", "fastify"], fill: { posts: 1000 }, check: posts(50) },
  { name: "list-all-yaml", what: "all 1,000 as YAML", method: "GET", path: "/api/v1/posts", headers: YAML, connections: 10, servers: ["startline", "fastify"], fill: { posts: 1000 }, check: posts(1000) },
  {
    name: "post-new",
    what: "POST /api/v1/post/:id, a new post per request",
    method: "POST",
    path: "/api/v1/post/{n}",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(benchPost(1234)),
    connections: 50,
    servers: DATA,
    fill: { posts: 1000 },
    check: (status) => (status === 201 ? undefined : `status ${status}`),
  },
  // Lists at scale: a store filled directly (a million posts through HTTP would take longer than the runs).
  {
    name: "page-50-end-100k",
    what: "the last page of 50 of 100,000 posts",
    method: "GET",
    path: `/api/v1/posts?limit=50&after=${encodeCursor("posts", 99_950)}`,
    connections: 10,
    servers: ["startline"],
    fill: { posts: 100_000, direct: true },
    check: posts(50),
  },
  {
    name: "list-3000x30k",
    what: "a whole list of 3,000 posts of 30 KB (90 MB), streamed",
    method: "GET",
    path: "/api/v1/posts",
    connections: 2,
    servers: ["startline"],
    fill: { posts: 3000, direct: true, bodyChars: 30_000 },
    check: (status, body) => (status === 200 && body.length > 90e6 ? undefined : `status ${status}, ${body.length} characters`),
  },
];
