// The comparison server: startline's benchmarked endpoints on node:http (or
// node:https), answering with byte-identical bodies and the same header fields
// in the same order (Date, X-Content-Type-Options, [Strict-Transport-Security,]
// Content-Type, [ETag,] [Cache-Control,] [Vary,] [Location,] [Deprecation,
// Link,] Content-Length; Vary gains Accept-Encoding on a compressible body of
// 1 KiB or more, as startline's content codings add it), so the benchmark
// compares servers and not responses. The benchmark checks this before every
// measured run (status line, field names and values, body).
//
// Two node:http defaults are undone for that: it would add
// "Connection: keep-alive" and "Keep-Alive: timeout=5" to every response
// (removeHeader("Connection") suppresses both, the connection stays
// persistent), and it would append Date after our fields (we send our own,
// cached per second as node:http and startline do).
//
// It does the same work per request as an ordinary node:http application
// would for the same endpoint: the post list is serialized on every request,
// item by item (JSON.stringify, or js-yaml's dump with startline's options),
// and streamed with chunked framing under back-pressure, as startline's is,
// with an ETag from a revision counter (If-None-Match: 304) and pages
// (?limit=N&after=CURSOR, the same cursors as startline's), a PATCH body
// is parsed, merged (RFC 7396), validated by hand against the same rules as
// startline's schema, stored and hashed into an ETag (startline's function:
// the first 27 base64url characters of the SHA-256 of the body), a new fact
// is decoded, checked and stored. It keeps everything in memory, as startline
// does with DATA_DIR=:memory:. Errors get a short JSON body, not startline's
// problem+json (they are not benchmarked).
//
// Unknown routes get a plain 404 (not benchmarked).
//
// Env:
//   PORT (default 0), HOST (default 127.0.0.1);
//   TLS_CERT, TLS_KEY: PEM files: serve HTTPS (node:https), adding
//     Strict-Transport-Security: max-age=HSTS_MAX_AGE (default 31536000, 0: none) as startline does;
//   STATE_FILE: JSON {"posts": [...], "facts": [...]} to start with (the benchmark
//     passes what startline held after the scenario's setup);
//   KEEP_ALIVE_TIMEOUT_MS (node:http's keepAliveTimeout; default node's 5000);
//   MAX_CONNECTIONS (server.maxConnections; default unlimited);
//   WORKERS: node:cluster workers (default 1: this process serves).
// Prints "listening on http(s)://HOST:PORT". SIGTERM/SIGINT stop it with exit 0.

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

if (!runPrimaryIfWorkers(scheme)) serve();

function serve(): void {
  // ------------------------------------------------------------ the head every response starts with

  let cachedDate: string | null = null;
  function httpDate(): string {
    if (cachedDate === null) {
      const now = Date.now();
      cachedDate = new Date(now).toUTCString();
      setTimeout(() => {
        cachedDate = null;
      }, 1000 - (now % 1000)).unref();
    }
    return cachedDate;
  }

  const hstsMaxAge = Number(process.env.HSTS_MAX_AGE ?? 31_536_000);
  /** Fields startline adds to every response after Date (over HTTPS: Strict-Transport-Security). */
  const serverFields: readonly string[] = [
    "X-Content-Type-Options",
    "nosniff",
    ...(tlsFiles !== undefined && hstsMaxAge > 0 ? ["Strict-Transport-Security", `max-age=${hstsMaxAge}`] : []),
  ];

  /** Gets the request body whole (empty for GET and HEAD, which are answered without waiting for one). */
  type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer, params: readonly string[]) => void;

  /** Writes a response: Date, the server's own fields, `fields` (flat name, value, ...), Content-Length, body. */
  function send(res: http.ServerResponse, status: number, fields: readonly string[], body: string | Buffer): void {
    const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : body;
    res.removeHeader("Connection");
    res.writeHead(status, ["Date", httpDate(), ...serverFields, ...varyOnCoding(fields, bytes.length), "Content-Length", String(bytes.length)]);
    res.end(bytes);
  }

  /** startline's content codings: a JSON or YAML body of 1 KiB or more varies on Accept-Encoding (none is sent here, so no coding). */
  function varyOnCoding(fields: readonly string[], length: number): readonly string[] {
    if (length < 1024 || !/^application\/(?:json|yaml)$/.test(fields[1] ?? "")) return fields;
    const at = fields.indexOf("Vary");
    if (at !== -1 && fields[at + 1]!.includes("Accept-Encoding")) return fields;
    if (at === -1) return [...fields, "Vary", "Accept-Encoding"];
    return fields.map((f, i) => (i === at + 1 ? `${f}, Accept-Encoding` : f));
  }

  /** A fixed response: header fields (after Date, before Content-Length) and body. */
  function fixed(status: number, fields: ReadonlyArray<readonly [string, string]>, body: string): Handler {
    const bytes = Buffer.from(body, "utf8");
    const flat = [...serverFields, ...fields.flatMap(([name, value]) => [name, value]), "Content-Length", String(bytes.length)];
    return (_req, res) => {
      res.removeHeader("Connection");
      res.writeHead(status, ["Date", httpDate(), ...flat]);
      res.end(bytes);
    };
  }

  const JSON_TYPE = "application/json";
  const YAML_TYPE = "application/yaml";
  // startline's validated answers (and their 304s) name Accept-Encoding whenever the type may be coded, whatever the size.
  const VARY = "Accept, Content-Type, Accept-Encoding";

  function problem(res: http.ServerResponse, status: number, detail: string): void {
    send(res, status, ["Content-Type", "application/problem+json"], JSON.stringify({ status, detail }));
  }

  // ------------------------------------------------------------ content negotiation (startline's rules, in short)

  type Format = "json" | "yaml";
  const NAMES: Record<Format, readonly string[]> = {
    json: [JSON_TYPE],
    yaml: [YAML_TYPE, "application/x-yaml", "text/yaml", "text/x-yaml"],
  };

  function mediaType(value: string | undefined): string | undefined {
    if (value === undefined) return undefined;
    const type = value.split(";", 1)[0]!.trim().toLowerCase();
    return type === "" ? undefined : type;
  }

  /** How well a range matches a type: 3 exact, 2 "type/*", 1 "*\/*", 0 not at all. */
  function level(range: string, type: string): number {
    if (range === type) return 3;
    if (range === "*/*") return 1;
    if (range.endsWith("/*") && type.startsWith(range.slice(0, -1))) return 2;
    return 0;
  }

  /** The format to answer in, or undefined when the client's only stated choice is not offered (406). */
  function negotiate(req: http.IncomingMessage, offered: readonly Format[], hasBody: boolean): Format | undefined {
    const accept = req.headers.accept;
    if (accept !== undefined && accept.trim() !== "") {
      const ranges = accept
        .split(",")
        .map((part, order) => {
          const [type = "", ...params] = part.split(";").map((s) => s.trim());
          const q = params.find((p) => p.toLowerCase().startsWith("q="));
          return { type: type.toLowerCase(), q: q === undefined ? 1 : Number(q.slice(2)), order };
        })
        .filter((r) => r.type !== "");
      if (!ranges.every((r) => r.type === "*/*")) {
        let best: { format: Format; q: number; order: number } | undefined;
        for (const format of offered) {
          let chosen: { level: number; q: number; order: number } | undefined;
          for (const range of ranges) {
            for (const name of NAMES[format]) {
              const l = level(range.type, name);
              if (l > 0 && (chosen === undefined || l > chosen.level)) chosen = { level: l, q: range.q, order: range.order };
            }
          }
          if (chosen === undefined || !(chosen.q > 0)) continue;
          if (best === undefined || chosen.q > best.q || (chosen.q === best.q && chosen.order < best.order)) best = { format, q: chosen.q, order: chosen.order };
        }
        return best?.format;
      }
    }
    if (!hasBody) {
      const type = mediaType(req.headers["content-type"]);
      if (type !== undefined) return offered.find((f) => NAMES[f].includes(type));
    }
    return offered[0];
  }

  // ------------------------------------------------------------ state

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

  const state = process.env.STATE_FILE ? (JSON.parse(readFileSync(process.env.STATE_FILE, "utf8")) as { posts?: Post[]; facts?: Fact[] }) : {};
  /** Insertion order is creation order, as startline lists them. */
  const posts = new Map<string, Post>((state.posts ?? []).map((p) => [p.id, p]));
  const facts: Fact[] = [...(state.facts ?? [])];
  let nextFactId = facts.reduce((max, f) => Math.max(max, Number(f.id)), 0) + 1;

  /** A timestamp never earlier than `previous` (startline's updatedAt never goes backwards). */
  function stamp(previous?: string): string {
    const now = new Date().toISOString();
    return previous !== undefined && previous > now ? previous : now;
  }

  function etag(body: string): string {
    return `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
  }

  const utf8 = new TextDecoder("utf-8", { fatal: true });
  function decode(body: Buffer): string | undefined {
    try {
      return utf8.decode(body);
    } catch {
      return undefined;
    }
  }

  const chars = (s: string) => [...s].length;
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

  /** RFC 7396. */
  function mergePatch(target: unknown, patch: unknown): unknown {
    if (!isObject(patch)) return patch;
    const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
    for (const [key, value] of Object.entries(patch)) {
      if (value === null) delete result[key];
      else result[key] = mergePatch(result[key], value);
    }
    return result;
  }

  /** startline's post-fields schema, by hand: the error, or undefined when valid. */
  function invalidPost(v: Record<string, unknown>): string | undefined {
    for (const key of Object.keys(v)) if (!["title", "body", "author", "tags"].includes(key)) return `unknown field ${key}`;
    const { title, body, author, tags } = v;
    if (typeof title !== "string" || chars(title) < 1 || chars(title) > 200) return "title: 1 to 200 characters";
    if (typeof body !== "string" || chars(body) > 100_000) return "body: at most 100000 characters";
    if (author !== undefined && (typeof author !== "string" || chars(author) < 1 || chars(author) > 200)) return "author: 1 to 200 characters";
    if (tags !== undefined) {
      if (!Array.isArray(tags) || tags.length > 50) return "tags: at most 50";
      for (const t of tags) if (typeof t !== "string" || chars(t) < 1 || chars(t) > 100) return "tags: 1 to 100 characters each";
    }
    return undefined;
  }

  // ------------------------------------------------------------ routes

  // The list's revision, as startline keeps one: a counter moved by every write, and a random epoch.
  const epoch = randomBytes(8).toString("hex");
  let revision = posts.size;
  const YAML_OPTIONS = { noRefs: true, lineWidth: -1 };
  const cursor = (position: number) => Buffer.from(`posts:${position}`).toString("base64url");

  /** Writes the pieces in turn, each once the socket has taken the one before. */
  function stream(res: http.ServerResponse, pieces: Iterator<string>): void {
    for (let next = pieces.next(); !next.done; next = pieces.next()) {
      if (!res.write(next.value)) {
        res.once("drain", () => stream(res, pieces));
        return;
      }
    }
    res.end();
  }

  /** The wrapper and its items, in pieces of about 32 KiB, as startline cuts them. */
  function* listPieces(items: readonly Post[], format: Format): Generator<string> {
    let piece = format === "json" ? '{"posts":[' : items.length === 0 ? "posts: []\n" : "posts:\n";
    for (let i = 0; i < items.length; i++) {
      if (format === "json") piece += (i === 0 ? "" : ",") + JSON.stringify(items[i]);
      else piece += dumpYaml([items[i]], YAML_OPTIONS).split("\n").map((line) => (line === "" ? line : `  ${line}`)).join("\n");
      if (piece.length >= 32 * 1024) {
        yield piece;
        piece = "";
      }
    }
    if (format === "json") piece += "]}";
    yield piece;
  }

  const listPosts: Handler = (req, res) => {
    const format = negotiate(req, ["json", "yaml"], false);
    if (format === undefined) return problem(res, 406, "available as application/json, application/yaml");
    const query = new URLSearchParams((req.url ?? "").split("?")[1] ?? "");
    const limit = query.has("limit") ? Number(query.get("limit")) : undefined;
    const after = query.has("after") ? Number(/^posts:(\d+)$/.exec(Buffer.from(query.get("after")!, "base64url").toString())?.[1]) : 0;
    if ((limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= 1000)) || !Number.isInteger(after)) return problem(res, 400, "bad limit or after");
    let tag = `posts.${epoch}.${revision}.${format}`;
    if (limit !== undefined) tag += `.l${limit}`;
    if (query.has("after")) tag += `.a${after}`;
    const etag = `W/"${tag}"`;
    const inm = req.headers["if-none-match"];
    if (inm !== undefined && inm.split(",").some((t) => t.trim() === "*" || t.trim().replace(/^W\//, "") === etag.slice(2))) {
      res.removeHeader("Connection");
      res.writeHead(304, ["Date", httpDate(), ...serverFields, "ETag", etag, "Cache-Control", "no-cache", "Vary", VARY]);
      res.end();
      return;
    }
    // Positions are creation order from 1, as in a fresh startline: the item at index i is at position i + 1.
    const all = [...posts.values()];
    const items = all.slice(after, limit === undefined ? undefined : after + limit);
    const link = limit !== undefined && after + limit < all.length ? ["Link", `</api/v1/posts?limit=${limit}&after=${cursor(after + limit)}>; rel="next"`] : [];
    // As startline: a JSON list that fits one batch (256 items, 128 KiB) goes whole with a Content-Length; the rest stream chunked.
    const whole = format === "json" && items.length <= 256 ? Buffer.from([...listPieces(items, format)].join(""), "utf8") : undefined;
    const fitsOneBatch = whole !== undefined && whole.length <= 128 * 1024;
    const framing = fitsOneBatch ? ["Content-Length", String(whole.length)] : ["Transfer-Encoding", "chunked"];
    res.removeHeader("Connection");
    res.writeHead(200, [
      "Date",
      httpDate(),
      ...serverFields,
      "Content-Type",
      format === "json" ? JSON_TYPE : YAML_TYPE,
      "ETag",
      etag,
      "Cache-Control",
      "no-cache",
      "Vary",
      VARY,
      ...link,
      ...framing,
    ]);
    if (fitsOneBatch) res.end(whole);
    else stream(res, listPieces(items, format));
  };

  const patchPost: Handler = (req, res, raw, [id]) => {
    if (negotiate(req, ["json"], raw.length > 0) === undefined) return problem(res, 406, "available as application/json");
    const current = posts.get(id!);
    if (current === undefined) return problem(res, 404, `no post ${id}`);
    const type = mediaType(req.headers["content-type"]);
    if (type !== "application/merge-patch+json" && type !== JSON_TYPE) return problem(res, 415, "send application/merge-patch+json");
    const text = decode(raw);
    if (text === undefined) return problem(res, 400, "not UTF-8");
    let patch: unknown;
    try {
      patch = JSON.parse(text);
    } catch {
      return problem(res, 400, "not JSON");
    }
    if (!isObject(patch)) return problem(res, 422, "a merge patch is an object");
    const { id: _id, publishedAt, updatedAt, ...fields } = current;
    const merged = mergePatch(fields, patch) as Record<string, unknown>;
    const error = invalidPost(merged);
    if (error !== undefined) return problem(res, 422, error);
    const post: Post = {
      id: current.id,
      title: merged.title as string,
      body: merged.body as string,
      ...(merged.author === undefined ? {} : { author: merged.author as string }),
      ...(merged.tags === undefined ? {} : { tags: merged.tags as string[] }),
      publishedAt,
      updatedAt: stamp(updatedAt),
    };
    posts.set(post.id, post);
    revision++;
    const body = JSON.stringify(post);
    send(res, 200, ["Content-Type", JSON_TYPE, "ETag", etag(body), "Cache-Control", "no-cache", "Vary", VARY], body);
  };

  const CONTROL = /\p{Cc}/u;
  const postFact: Handler = (req, res, raw) => {
    const contentType = req.headers["content-type"];
    if (mediaType(contentType) !== "text/plain") return problem(res, 415, "send text/plain");
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? "")?.[1]?.toLowerCase();
    if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") return problem(res, 415, "send UTF-8");
    const decoded = decode(raw);
    if (decoded === undefined) return problem(res, 400, "not UTF-8");
    const text = decoded.trim();
    const length = chars(text);
    if (length === 0 || length > 500 || CONTROL.test(text)) return problem(res, 422, "one sentence of 1 to 500 characters");
    const fact: Fact = { id: String(nextFactId++), text, source: "api", createdAt: stamp() };
    facts.push(fact);
    send(res, 201, ["Content-Type", JSON_TYPE, "Cache-Control", "no-cache", "Location", `/api/v2/facts/${encodeURIComponent(fact.id)}`], JSON.stringify(fact));
  };

  /** "METHOD path" -> handler. */
  const ROUTES = new Map<string, Handler>([
    [
      "GET /api/v1/status",
      fixed(
        200,
        [
          ["Content-Type", JSON_TYPE],
          ["Cache-Control", "no-cache"],
          ["Deprecation", "@1767225600"],
          ["Link", '</api/v2/status>; rel="successor-version"'],
        ],
        JSON.stringify({ resposta: "O servidor está no ar." }),
      ),
    ],
    ["GET /api/v2/status", fixed(200, [["Content-Type", JSON_TYPE], ["Cache-Control", "no-cache"]], JSON.stringify({ response: "The server is up." }))],
    ["GET /api/v1/posts", listPosts],
    ["GET /api/v1/post", listPosts],
    ["POST /api/v2/facts", postFact],
  ]);
  /** Routes with a parameter: [method, pattern, handler]. */
  const PATTERNS: ReadonlyArray<readonly [string, RegExp, Handler]> = [["PATCH", /^\/api\/v1\/post\/([A-Za-z0-9_-]{1,64})$/, patchPost]];

  const notFound = fixed(404, [["Content-Type", JSON_TYPE]], JSON.stringify({ title: "Not Found", status: 404 }));

  function route(method: string, url: string): [Handler, string[]] {
    const exact = ROUTES.get(`${method} ${url.split("?", 1)[0]}`);
    if (exact !== undefined) return [exact, []];
    const path = url.split("?", 1)[0]!;
    for (const [m, pattern, handler] of PATTERNS) {
      if (m !== method) continue;
      const match = pattern.exec(path);
      if (match !== null) return [handler, match.slice(1)];
    }
    return [notFound, []];
  }

  // ------------------------------------------------------------ the server

  const EMPTY = Buffer.alloc(0);

  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const [handler, params] = route(req.method ?? "", req.url ?? "");
    if (req.method === "GET" || req.method === "HEAD") {
      handler(req, res, EMPTY, params);
      return;
    }
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => handler(req, res, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), params));
  };

  const server = tlsFiles === undefined ? http.createServer(onRequest) : https.createServer(tlsFiles, onRequest);
  if (process.env.KEEP_ALIVE_TIMEOUT_MS) server.keepAliveTimeout = Number(process.env.KEEP_ALIVE_TIMEOUT_MS);
  if (process.env.MAX_CONNECTIONS) server.maxConnections = Number(process.env.MAX_CONNECTIONS);

  const port = Number(process.env.PORT ?? 0);
  const host = process.env.HOST || "127.0.0.1";
  server.listen(port, host, () => {
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
