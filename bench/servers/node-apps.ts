// The same application code on node:http and on startline/node (src/node/),
// for the scenarios of bench/scenarios.ts that compare the two: a bare
// listener (res.end("hi")) and each framework's hello world (Express 5, Koa 3,
// Fastify 5), all answering GET / with "hi". Only the line that makes the
// server differs, as it would for a user moving an app over.
//
// Env: APP (bare, express, koa, fastify), ON (node or startline), PORT (0),
// HOST (127.0.0.1). Prints "listening on http://HOST:PORT"; SIGTERM/SIGINT
// stop it with exit 0.

import http from "node:http";
import type { AddressInfo } from "node:net";
import { createServer as createOnStartline } from "../../src/node/index.js";

type Listener = (req: http.IncomingMessage, res: http.ServerResponse) => void;
type Closable = { listen(port: number, host: string, done: () => void): unknown; address(): AddressInfo | string | null; close(): unknown; closeAllConnections(): void };

const app = process.env.APP ?? "bare";
const on = process.env.ON ?? "node";
if (on !== "node" && on !== "startline") throw new Error(`ON must be node or startline, not ${on}`);
const port = Number(process.env.PORT ?? 0);
const host = process.env.HOST || "127.0.0.1";
/** The one line that differs: node:http's createServer, or startline/node's. */
const serverFor = (listener: Listener): Closable => (on === "node" ? http.createServer(listener) : (createOnStartline(listener) as unknown as Closable));

let server: Closable;
let stopApp: () => Promise<unknown> = async () => {};
if (app === "bare") {
  server = serverFor((_req, res) => res.end("hi"));
} else if (app === "express") {
  const express = (await import("express")).default;
  const expressApp = express();
  expressApp.get("/", (_req, res) => {
    res.send("hi");
  });
  server = serverFor(expressApp);
} else if (app === "koa") {
  const Koa = (await import("koa")).default;
  const koaApp = new Koa();
  koaApp.use((ctx) => {
    ctx.body = "hi";
  });
  server = serverFor(koaApp.callback());
} else if (app === "fastify") {
  const Fastify = (await import("fastify")).default;
  let made: Closable | undefined;
  const fastifyApp = Fastify({
    serverFactory: (handler) => {
      made = serverFor(handler as unknown as Listener);
      return made as never;
    },
  });
  fastifyApp.get("/", async () => "hi");
  await fastifyApp.ready();
  server = made!;
  stopApp = () => fastifyApp.close();
} else {
  throw new Error(`APP must be bare, express, koa or fastify, not ${app}`);
}

server.listen(port, host, () => {
  const address = server.address() as AddressInfo;
  console.log(`listening on http://${address.address}:${address.port}`);
});
const stop = () => {
  server.close();
  server.closeAllConnections();
  void stopApp().finally(() => process.exit(0));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
