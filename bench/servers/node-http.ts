// The node:http comparator (node:https with TLS_CERT and TLS_KEY): a minimal
// server for the scenarios of bench/scenarios.ts and nothing else, doing the
// work an ordinary node:http application does for them, and answering each
// scenario's request with the status line, header fields (same names, same
// order) and body startline sends, so that the benchmark compares servers and
// not responses (it checks that before every measured run; test/bench.test.ts
// runs the quick scenarios).
//
// What it serves:
//   GET /api/v1/status, /api/v2/status      fixed answers
//   GET /api/v1/posts [?limit=N&after=C]    JSON (default) or YAML (Accept: application/yaml),
//                                           serialized per request, a weak ETag from a revision
//                                           counter (If-None-Match: * or the tag: 304), startline's
//                                           cursors and Link; whole with Content-Length when it
//                                           fits one of startline's batches, else chunked pieces
//                                           under back-pressure
//   POST /api/v2/facts                      a text/plain sentence, checked, stored: 201
//   PATCH /api/v1/post/:id                  a JSON merge patch, merged, validated as startline's
//                                           schema does, stored, hashed into a strong ETag
// Anything else is a plain 404, and a request it refuses gets a short JSON
// problem (neither is benchmarked). Everything is kept in memory, as startline
// does with DATA_DIR=:memory:.
//
// Two node:http defaults are undone: "Connection: keep-alive" and "Keep-Alive:
// timeout=5" on every response (removeHeader("Connection") drops both; the
// connection stays persistent), and its own Date after our fields (we send
// ours first, cached per second as startline does).
//
// Env: PORT (0), HOST (127.0.0.1); TLS_CERT, TLS_KEY (PEM files; then
// Strict-Transport-Security: max-age=HSTS_MAX_AGE, default 31536000, 0: none);
// STATE_FILE: {"posts": [...], "facts": [...]} to start with (what startline
// held after the scenario's setup); KEEP_ALIVE_TIMEOUT_MS; MAX_CONNECTIONS;
// WORKERS (node:cluster workers, default 1). Prints "listening on
// http(s)://HOST:PORT"; SIGTERM/SIGINT stop it with exit 0.

import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { dump as dumpYaml } from "js-yaml";
import { announces, runPrimaryIfWorkers } from "./workers.js";

const tlsFiles =
  process.env.TLS_CERT && process.env.TLS_KEY ? { cert: readFileSync(process.env.TLS_CERT), key: readFileSync(process.env.TLS_KEY) } : undefined;
const scheme = tlsFiles === undefined ? "http" : "https";

interface Post {
  id: string;
  title: string;
  body: string;
  author?: string;
  tags?: string[];
  publishedAt: string;
  updatedAt: string;
}
interface Fact {
  id: string;
  text: string;
  source: string;
  createdAt: string;
}
type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer, id?: string) => void;

const JSON_TYPE = "application/json";
const YAML_TYPE = "application/yaml";
// startline's validated answers (and their 304s) name Accept-Encoding whenever the type may be coded.
const VARY = "Accept, Content-Type, Accept-Encoding";
const YAML_OPTIONS = { noRefs: true, lineWidth: -1 };
/** startline's batch: a JSON list that fits one goes whole, with a Content-Length. */
const BATCH_ITEMS = 256;
const BATCH_BYTES = 128 * 1024;

if (!runPrimaryIfWorkers(scheme)) serve();

function serve(): void {
  let cachedDate: string | null = null;
  function httpDate(): string {
    if (cachedDate === null) {
      const now = Date.now();
      cachedDate = new Date(now).toUTCString();
      setTimeout(() => (cachedDate = null), 1000 - (now % 1000)).unref();
    }
    return cachedDate;
  }
  const hstsMaxAge = Number(process.env.HSTS_MAX_AGE ?? 31_536_000);
  /** What startline sends after Date on every response. */
  const serverFields = ["X-Content-Type-Options", "nosniff", ...(tlsFiles !== undefined && hstsMaxAge > 0 ? ["Strict-Transport-Security", `max-age=${hstsMaxAge}`] : [])];

  /** Date, the server's fields, `fields` (name, value, ...), then the body with its Content-Length, or chunked pieces when `body` is undefined. */
  function head(res: http.ServerResponse, status: number, fields: readonly string[]): void {
    res.removeHeader("Connection");
    res.writeHead(status, ["Date", httpDate(), ...serverFields, ...fields]);
  }
  function send(res: http.ServerResponse, status: number, fields: readonly string[], body: string | Buffer): void {
    const bytes = typeof body === "string" ? Buffer.from(body) : body;
    head(res, status, [...fields, "Content-Length", String(bytes.length)]);
    res.end(bytes);
  }
  const fixed =
    (status: number, fields: readonly string[], body: string): Handler =>
    (_req, res) =>
      send(res, status, fields, body);
  const problem = (res: http.ServerResponse, status: number, detail: string) => send(res, status, ["Content-Type", "application/problem+json"], JSON.stringify({ status, detail }));

  const state = process.env.STATE_FILE ? (JSON.parse(readFileSync(process.env.STATE_FILE, "utf8")) as { posts?: Post[]; facts?: Fact[] }) : {};
  /** Insertion order is creation order: the post at index i is at position i + 1, as in a fresh startline. */
  const posts = new Map<string, Post>((state.posts ?? []).map((p) => [p.id, p]));
  const facts: Fact[] = [...(state.facts ?? [])];
  let nextFactId = facts.reduce((max, f) => Math.max(max, Number(f.id)), 0) + 1;
  const epoch = randomBytes(8).toString("hex");
  let revision = posts.size;

  /** Now, never earlier than `previous` (startline's updatedAt never goes backwards). */
  const stamp = (previous?: string) => {
    const now = new Date().toISOString();
    return previous !== undefined && previous > now ? previous : now;
  };
  const utf8 = new TextDecoder("utf-8", { fatal: true });
  const decode = (body: Buffer): string | undefined => {
    try {
      return utf8.decode(body);
    } catch {
      return undefined;
    }
  };
  const mediaType = (value: string | undefined) => value?.split(";", 1)[0]!.trim().toLowerCase();
  const chars = (s: string) => [...s].length;
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

  /** The wrapper and its items in pieces of about 32 KiB, as startline cuts them. */
  function* listPieces(items: readonly Post[], yaml: boolean): Generator<string> {
    let piece = !yaml ? '{"posts":[' : items.length === 0 ? "posts: []\n" : "posts:\n";
    for (let i = 0; i < items.length; i++) {
      if (!yaml) piece += (i === 0 ? "" : ",") + JSON.stringify(items[i]);
      else piece += dumpYaml([items[i]], YAML_OPTIONS).split("\n").map((line) => (line === "" ? line : `  ${line}`)).join("\n");
      if (piece.length >= 32 * 1024) {
        yield piece;
        piece = "";
      }
    }
    yield yaml ? piece : piece + "]}";
  }
  /** Writes the pieces in turn, each once the socket has taken the one before. */
  function stream(res: http.ServerResponse, pieces: Iterator<string>): void {
    for (let next = pieces.next(); !next.done; next = pieces.next()) {
      if (!res.write(next.value)) return void res.once("drain", () => stream(res, pieces));
    }
    res.end();
  }

  const listPosts: Handler = (req, res) => {
    const yaml = /yaml/.test(req.headers.accept ?? "");
    const query = new URLSearchParams((req.url ?? "").split("?")[1] ?? "");
    const limit = query.has("limit") ? Number(query.get("limit")) : undefined;
    const after = query.has("after") ? Number(/^posts:(\d+)$/.exec(Buffer.from(query.get("after")!, "base64url").toString())?.[1]) : 0;
    if ((limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= 1000)) || !Number.isInteger(after)) return problem(res, 400, "bad limit or after");
    const etag = `W/"posts.${epoch}.${revision}.${yaml ? "yaml" : "json"}${limit === undefined ? "" : `.l${limit}`}${query.has("after") ? `.a${after}` : ""}"`;
    const validators = ["ETag", etag, "Cache-Control", "no-cache", "Vary", VARY];
    const inm = req.headers["if-none-match"];
    if (inm !== undefined && inm.split(",").some((t) => t.trim() === "*" || t.trim().replace(/^W\//, "") === etag.slice(2))) {
      head(res, 304, validators);
      return void res.end();
    }
    const all = [...posts.values()];
    const items = all.slice(after, limit === undefined ? undefined : after + limit);
    const link = limit !== undefined && after + limit < all.length ? ["Link", `</api/v1/posts?limit=${limit}&after=${Buffer.from(`posts:${after + limit}`).toString("base64url")}>; rel="next"`] : [];
    const fields = ["Content-Type", yaml ? YAML_TYPE : JSON_TYPE, ...validators, ...link];
    const whole = !yaml && items.length <= BATCH_ITEMS ? Buffer.from([...listPieces(items, false)].join("")) : undefined;
    if (whole !== undefined && whole.length <= BATCH_BYTES) return send(res, 200, fields, whole);
    head(res, 200, [...fields, "Transfer-Encoding", "chunked"]);
    stream(res, listPieces(items, yaml));
  };

  /** startline's post schema, by hand: what is wrong, or undefined. */
  function invalidPost(v: Record<string, unknown>): string | undefined {
    for (const key of Object.keys(v)) if (!["title", "body", "author", "tags"].includes(key)) return `unknown field ${key}`;
    const { title, body, author, tags } = v;
    if (typeof title !== "string" || chars(title) < 1 || chars(title) > 200) return "title: 1 to 200 characters";
    if (typeof body !== "string" || chars(body) > 100_000) return "body: at most 100000 characters";
    if (author !== undefined && (typeof author !== "string" || chars(author) < 1 || chars(author) > 200)) return "author: 1 to 200 characters";
    if (tags !== undefined && (!Array.isArray(tags) || tags.length > 50 || tags.some((t) => typeof t !== "string" || chars(t) < 1 || chars(t) > 100))) return "tags: at most 50 of 1 to 100 characters";
    return undefined;
  }

  const patchPost: Handler = (req, res, raw, id) => {
    const current = posts.get(id!);
    if (current === undefined) return problem(res, 404, `no post ${id}`);
    if (mediaType(req.headers["content-type"]) !== "application/merge-patch+json") return problem(res, 415, "send application/merge-patch+json");
    let patch: unknown;
    try {
      patch = JSON.parse(decode(raw) ?? "");
    } catch {
      return problem(res, 400, "not UTF-8 JSON");
    }
    if (!isObject(patch)) return problem(res, 422, "a merge patch of a post is an object");
    // RFC 7396 on a post's fields is one level deep: every field is a string or an array, replaced whole.
    const { id: _id, publishedAt, updatedAt, ...merged } = current as Post & Record<string, unknown>;
    for (const [key, value] of Object.entries(patch)) {
      if (value === null) delete merged[key];
      else merged[key] = value;
    }
    const error = invalidPost(merged);
    if (error !== undefined) return problem(res, 422, error);
    const { title, body, author, tags } = merged as Omit<Post, "id" | "publishedAt" | "updatedAt">;
    const post: Post = { id: current.id, title, body, ...(author === undefined ? {} : { author }), ...(tags === undefined ? {} : { tags }), publishedAt, updatedAt: stamp(updatedAt) };
    posts.set(post.id, post);
    revision++;
    const json = JSON.stringify(post);
    const etag = `"${createHash("sha256").update(json).digest("base64url").slice(0, 27)}"`;
    send(res, 200, ["Content-Type", JSON_TYPE, "ETag", etag, "Cache-Control", "no-cache", "Vary", VARY], json);
  };

  const postFact: Handler = (req, res, raw) => {
    if (mediaType(req.headers["content-type"]) !== "text/plain") return problem(res, 415, "send text/plain");
    const text = decode(raw)?.trim();
    if (text === undefined || chars(text) === 0 || chars(text) > 500 || /\p{Cc}/u.test(text)) return problem(res, 422, "one UTF-8 sentence of 1 to 500 characters");
    const fact: Fact = { id: String(nextFactId++), text, source: "api", createdAt: stamp() };
    facts.push(fact);
    send(res, 201, ["Content-Type", JSON_TYPE, "Cache-Control", "no-cache", "Location", `/api/v2/facts/${fact.id}`], JSON.stringify(fact));
  };

  const ROUTES = new Map<string, Handler>([
    [
      "GET /api/v1/status",
      fixed(
        200,
        ["Content-Type", JSON_TYPE, "Cache-Control", "no-cache", "Deprecation", "@1767225600", "Link", '</api/v2/status>; rel="successor-version"'],
        JSON.stringify({ resposta: "O servidor está no ar." }),
      ),
    ],
    ["GET /api/v2/status", fixed(200, ["Content-Type", JSON_TYPE, "Cache-Control", "no-cache"], JSON.stringify({ response: "The server is up." }))],
    ["GET /api/v1/posts", listPosts],
    ["POST /api/v2/facts", postFact],
  ]);
  const notFound = fixed(404, ["Content-Type", JSON_TYPE], JSON.stringify({ title: "Not Found", status: 404 }));
  const EMPTY = Buffer.alloc(0);
  const POST_PATH = /^\/api\/v1\/post\/([A-Za-z0-9_-]{1,64})$/;

  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const path = (req.url ?? "").split("?", 1)[0]!;
    const id = req.method === "PATCH" ? POST_PATH.exec(path)?.[1] : undefined;
    const handler = id !== undefined ? patchPost : (ROUTES.get(`${req.method} ${path}`) ?? notFound);
    if (req.method === "GET" || req.method === "HEAD") return handler(req, res, EMPTY);
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => handler(req, res, Buffer.concat(chunks), id));
  };

  const server = tlsFiles === undefined ? http.createServer(onRequest) : https.createServer(tlsFiles, onRequest);
  if (process.env.KEEP_ALIVE_TIMEOUT_MS) server.keepAliveTimeout = Number(process.env.KEEP_ALIVE_TIMEOUT_MS);
  if (process.env.MAX_CONNECTIONS) server.maxConnections = Number(process.env.MAX_CONNECTIONS);
  server.listen(Number(process.env.PORT ?? 0), process.env.HOST || "127.0.0.1", () => {
    const address = server.address() as AddressInfo;
    if (announces) console.log(`listening on ${scheme}://${address.address}:${address.port}`);
  });
  const stop = () => {
    server.close();
    server.closeAllConnections();
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
