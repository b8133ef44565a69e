// The comparison server: startline's endpoints on node:http, answering with
// byte-identical bodies and the same header fields in the same order
// (Date, Content-Type, [Deprecation, Link,] Content-Length), so the
// benchmark compares servers and not responses. The benchmark checks this
// before every measured run (status line, field names, body).
//
// Two node:http defaults are undone for that: it would add
// "Connection: keep-alive" and "Keep-Alive: timeout=5" to every response
// (removeHeader("Connection") suppresses both, the connection stays
// persistent), and it would append Date after our fields (we send our own,
// cached per second as node:http and startline do).
//
// To add an endpoint: add a ROUTES entry with the same bytes startline sends.
// Unknown routes get a plain 404 (not startline's problem+json; not benchmarked).
//
// Env: PORT (default 0), HOST (default 127.0.0.1). Prints
// "listening on http://HOST:PORT". SIGTERM/SIGINT stop it with exit 0.

import http from "node:http";
import type { AddressInfo } from "node:net";

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

/** Gets the request body whole (empty for GET and HEAD, which are answered without waiting for one). */
type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => void;

/** A fixed response: header fields (after Date, before Content-Length) and body. */
function fixed(status: number, fields: ReadonlyArray<readonly [string, string]>, body: string): Handler {
  const bytes = Buffer.from(body, "utf8");
  const length = String(bytes.length);
  const flat = fields.flatMap(([name, value]) => [name, value]);
  return (_req, res, _body) => {
    res.removeHeader("Connection");
    res.writeHead(status, ["Date", httpDate(), ...flat, "Content-Length", length]);
    res.end(bytes);
  };
}

const JSON_TYPE = ["Content-Type", "application/json"] as const;

/** "METHOD path" -> handler. */
const ROUTES = new Map<string, Handler>([
  [
    "GET /api/v1/status",
    fixed(
      200,
      [JSON_TYPE, ["Deprecation", "@1767225600"], ["Link", '</api/v2/status>; rel="successor-version"']],
      JSON.stringify({ resposta: "O servidor está no ar." }),
    ),
  ],
  ["GET /api/v2/status", fixed(200, [JSON_TYPE], JSON.stringify({ response: "The server is up." }))],
]);

const notFound = fixed(404, [JSON_TYPE], JSON.stringify({ title: "Not Found", status: 404 }));

const EMPTY = Buffer.alloc(0);

const server = http.createServer((req, res) => {
  const handler = ROUTES.get(`${req.method} ${req.url}`) ?? notFound;
  if (req.method === "GET" || req.method === "HEAD") {
    handler(req, res, EMPTY);
    return;
  }
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => handler(req, res, Buffer.concat(chunks)));
});

const port = Number(process.env.PORT ?? 0);
const host = process.env.HOST || "127.0.0.1";
server.listen(port, host, () => {
  const address = server.address() as AddressInfo;
  console.log(`listening on http://${address.address}:${address.port}`);
});

const stop = () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
