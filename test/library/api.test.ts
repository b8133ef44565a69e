// The public entry (src/index.ts): exactly the names docs/library.md
// describes, and a server built from nothing else, in memory and over TLS.

import { execFile } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import tls from "node:tls";
import { promisify } from "node:util";
import t from "tap";
import * as startline from "../../src/index.js";
import { ANY_METHOD, createRouter, createServer, fail, headerValue, inject, problem, type Route } from "../../src/index.js";
import { splitResponses } from "../helpers/wire.js";
import { ROOT } from "../helpers/root.js";

const run = promisify(execFile);

const routes: Route[] = [
  {
    method: "PURGE",
    path: "/cache/:key",
    summary: "drop",
    handler: (_request, { key }) => (key === "kept" ? problem(409, { detail: "kept is pinned", instance: `/cache/${key}` }) : { status: 200, body: `purged ${key}` }),
  },
  { method: "GET", path: "/cache/:key", summary: "read", handler: (request, { key }) => ({ status: 200, headers: { "X-Seen": headerValue(request, "x-probe") ?? "-" }, body: key! }) },
  { method: ANY_METHOD, path: "/any/*rest", summary: "any", handler: (request, { rest }) => (rest === "teapot" ? fail(418, { detail: "short and stout" }) : { status: 200, body: `${request.method} ${rest}` }) },
];
const router = createRouter(routes);

async function send(raw: string) {
  const { output } = await inject(router, raw);
  return splitResponses(output, [raw.startsWith("HEAD ")]);
}
const one = (line: string, fields = "") => `${line} HTTP/1.1\r\nHost: x\r\n${fields}Connection: close\r\n\r\n`;

t.test("the entry exports exactly what docs/library.md describes", async (t) => {
  t.same(Object.keys(startline).sort(), ["ANY_METHOD", "HttpError", "createRouter", "createServer", "fail", "headerValue", "inject", "problem"]);
  const doc = await readFile(path.join(ROOT, "docs", "library.md"), "utf8");
  for (const name of Object.keys(startline)) t.ok(doc.includes(name), `${name} is documented`);
});

t.test("a server from the public API alone: custom methods, problems, HEAD, OPTIONS, any method", async (t) => {
  const [purged] = await send(one("PURGE /cache/a%20b"));
  t.equal(purged!.status, 200);
  t.equal(purged!.body, "purged a b");
  const [pinned] = await send(one("PURGE /cache/kept"));
  t.equal(pinned!.status, 409);
  t.equal(pinned!.headers["content-type"], "application/problem+json");
  t.match(JSON.parse(pinned!.body), { type: "/problems/conflict", status: 409, detail: "kept is pinned" });
  const [head] = await send(one("HEAD /cache/abc", "X-Probe: 1\r\n"));
  t.equal(head!.headers["content-length"], "3");
  t.equal(head!.headers["x-seen"], "1");
  t.equal(head!.body, "");
  const [options] = await send(one("OPTIONS /cache/a"));
  t.equal(options!.headers.allow, "GET, HEAD, OPTIONS, PURGE");
  const [custom] = await send(one("frobnicate /any/a/b"));
  t.equal(custom!.body, "frobnicate a/b");
  const [teapot] = await send(one("BREW /any/teapot"));
  t.equal(teapot!.status, 418, "fail() answers with its problem");
  const [missing] = await send(one("GET /nowhere"));
  t.equal(missing!.status, 404);
  // The router's own answers say only what it knows: this app serves no page at GET /.
  const detail = JSON.parse(missing!.body).detail as string;
  t.match(detail, /Nothing is served at \/nowhere/);
  t.notMatch(detail, /GET \//, "no pointer to a route list the app does not serve");
  const [notAllowed] = await send(one("DELETE /cache/a"));
  t.notMatch(JSON.parse(notAllowed!.body).detail, /GET \//);
});

t.test("the same router over TLS", async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), "startline-lib-tls-"));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const [certPath, keyPath] = [path.join(dir, "cert.pem"), path.join(dir, "key.pem")];
  await run("openssl", [
    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
    "-keyout", keyPath, "-out", certPath, "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
  ]);
  const cert = await readFile(certPath);
  const server = createServer(router, { tls: { cert, key: await readFile(keyPath) } });
  const { port } = await server.listen(0, "127.0.0.1");
  t.teardown(() => server.close(1000));
  const socket = tls.connect({ host: "127.0.0.1", port, ca: cert, ALPNProtocols: ["http/1.1"] });
  await once(socket, "secureConnect");
  t.equal(socket.alpnProtocol, "http/1.1");
  const received: Buffer[] = [];
  socket.on("data", (d: Buffer) => received.push(d));
  socket.write(one("PURGE /cache/secure"));
  await once(socket, "close");
  const [r] = splitResponses(Buffer.concat(received));
  t.equal(r!.status, 200);
  t.equal(r!.body, "purged secure");
});
