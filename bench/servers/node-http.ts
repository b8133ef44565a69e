// The node:http comparator (node:https with TLS_CERT and TLS_KEY): what an
// ordinary node:http application does to serve the engine scenarios of
// bench/scenarios.ts, the status endpoints, with the fields and body startline
// sends, so that the two write the same bytes. Anything else is a 404.
//
// Two node:http defaults are undone: "Connection: keep-alive" and
// "Keep-Alive: timeout=5" on every response (removeHeader("Connection") drops
// both; the connection stays persistent), and its own Date after our fields
// (ours goes first, cached per second as startline does).
//
// Env: PORT (0), HOST (127.0.0.1); TLS_CERT, TLS_KEY (PEM files; then
// Strict-Transport-Security, as startline sends it); KEEP_ALIVE_TIMEOUT_MS;
// MAX_CONNECTIONS; WORKERS (node:cluster workers). Prints "listening on
// http(s)://HOST:PORT"; SIGTERM/SIGINT stop it with exit 0.

import { readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { announces, runPrimaryIfWorkers } from "./workers.js";

const tlsFiles = process.env.TLS_CERT && process.env.TLS_KEY ? { cert: readFileSync(process.env.TLS_CERT), key: readFileSync(process.env.TLS_KEY) } : undefined;
const scheme = tlsFiles === undefined ? "http" : "https";

if (!runPrimaryIfWorkers(scheme)) {
  let date: string | null = null;
  const httpDate = () => {
    if (date === null) {
      const now = Date.now();
      date = new Date(now).toUTCString();
      setTimeout(() => (date = null), 1000 - (now % 1000)).unref();
    }
    return date;
  };
  const json = "application/json";
  const answers = new Map<string, [number, string[], Buffer]>([
    ["/api/v1/status", [200, ["Content-Type", json, "Cache-Control", "no-cache", "Deprecation", "@1767225600", "Link", '</api/v2/status>; rel="successor-version"'], Buffer.from(JSON.stringify({ resposta: "O servidor está no ar." }))]],
    ["/api/v2/status", [200, ["Content-Type", json, "Cache-Control", "no-cache"], Buffer.from(JSON.stringify({ response: "The server is up." }))]],
  ]);
  const notFound: [number, string[], Buffer] = [404, ["Content-Type", json], Buffer.from(JSON.stringify({ title: "Not Found", status: 404 }))];
  const always = ["X-Content-Type-Options", "nosniff", ...(tlsFiles === undefined ? [] : ["Strict-Transport-Security", "max-age=31536000"])];
  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const [status, fields, body] = (req.method === "GET" && answers.get(req.url ?? "")) || notFound;
    res.removeHeader("Connection");
    res.writeHead(status, ["Date", httpDate(), ...always, ...fields, "Content-Length", String(body.length)]);
    res.end(body);
  };
  const server = tlsFiles === undefined ? http.createServer(onRequest) : https.createServer(tlsFiles, onRequest);
  if (process.env.KEEP_ALIVE_TIMEOUT_MS) server.keepAliveTimeout = Number(process.env.KEEP_ALIVE_TIMEOUT_MS);
  if (process.env.MAX_CONNECTIONS) server.maxConnections = Number(process.env.MAX_CONNECTIONS);
  server.listen(Number(process.env.PORT ?? 0), process.env.HOST || "127.0.0.1", () => {
    if (announces) console.log(`listening on ${scheme}://${(server.address() as AddressInfo).address}:${(server.address() as AddressInfo).port}`);
  });
  const stop = () => {
    server.close();
    server.closeAllConnections();
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
