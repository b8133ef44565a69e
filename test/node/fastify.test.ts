// A Fastify 5 app on startline/node (its serverFactory), over real sockets:
// routing, JSON and streamed request bodies, a file streamed out, several
// cookies, a thrown error, keep-alive and pipelining, and a client that
// leaves mid-response. Fastify routes only node's own methods, so UPDATE is
// its 404; the method reaches it as sent all the same.

import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import net from "node:net";
import { PassThrough } from "node:stream";
import t from "tap";
import Fastify from "fastify";
import { createServer } from "../../src/node/index.js";
import { fileStreamedOut, fileToServe, leavesMidResponse, leaving, pipelinedInOrder } from "../helpers/framework-probes.js";
import { splitResponses, talk } from "../helpers/wire.js";

// One parent test holds the app's server and temporary files: a teardown at the file's top level would let
// tap end its root whenever it is idle, cutting short a next file sharing the process (test/batch.mjs).
t.test("a Fastify 5 app on startline/node", async (t) => {
  const fileBytes = Buffer.alloc(2 * 1024 * 1024 + 9, "fast");
  const file = await fileToServe(t, "fastify", fileBytes);

  const watch = leaving();
  const events = watch.events;

  /** The methods Fastify's handler was given, as sent. */
  const methods: string[] = [];
  const app = Fastify({
    serverFactory: (handler) =>
      createServer((req, res) => {
        methods.push(req.method!);
        handler(req as never, res as never);
      }) as never,
  });
  // A body taken as a stream, for the streamed route.
  app.addContentTypeParser("application/octet-stream", (_req, payload, done) => done(null, payload));
  app.get("/hello/:name", async (req, reply) => {
    reply.header("set-cookie", ["first=1", "second=2"]);
    return { hello: (req.params as { name: string }).name };
  });
  app.post("/json", async (req, reply) => {
    reply.code(201);
    return { got: req.body };
  });
  app.post("/stream", async (req) => {
    const hash = createHash("sha256");
    let bytes = 0;
    for await (const piece of req.body as AsyncIterable<Buffer>) {
      bytes += piece.length;
      hash.update(piece);
    }
    return { bytes, sha256: hash.digest("hex") };
  });
  app.get("/file", (_req, reply) => {
    reply.type("text/plain").send(createReadStream(file));
  });
  app.get("/boom", async () => {
    throw new Error("boom");
  });
  app.get("/slow", (req, reply) => {
    req.raw.on("close", () => events.push("req close"));
    reply.raw.on("close", () => {
      events.push(`res close, finished ${reply.raw.writableFinished}`);
      watch.left();
    });
    const body = new PassThrough();
    body.write("part");
    reply.send(body);
  });

  await app.listen({ port: 0, host: "127.0.0.1" });
  t.teardown(() => app.close());
  const port = (app.server.address() as net.AddressInfo).port;

  t.test("routing, JSON, several Set-Cookie lines", async (t) => {
    const out = await talk(port, ["GET /hello/ada HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"]);
    const [r] = splitResponses(out);
    t.equal(r!.status, 200);
    t.same(JSON.parse(r!.body), { hello: "ada" });
    t.match(out.toString("latin1"), /set-cookie: first=1\r\nset-cookie: second=2\r\n/);
  });

  t.test("a JSON body, and a body streamed larger than the engine's whole-body limit", async (t) => {
    const body = JSON.stringify({ a: 1 });
    const [json] = splitResponses(await talk(port, [`POST /json HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`]));
    t.equal(json!.status, 201);
    t.same(JSON.parse(json!.body), { got: { a: 1 } });
    const big = Buffer.alloc(3 * 1024 * 1024 + 1, "rs");
    const head = `POST /stream HTTP/1.1\r\nHost: a\r\nContent-Type: application/octet-stream\r\nContent-Length: ${big.length}\r\nConnection: close\r\n\r\n`;
    const [streamed] = splitResponses(await talk(port, [head, big]));
    t.same(JSON.parse(streamed!.body), { bytes: big.length, sha256: createHash("sha256").update(big).digest("hex") });
  });

  t.test("a file streamed out", async (t) => {
    await fileStreamedOut(t, port, fileBytes);
  });

  t.test("a thrown error: Fastify's 500", async (t) => {
    const [r] = splitResponses(await talk(port, ["GET /boom HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"]));
    t.equal(r!.status, 500);
    t.match(JSON.parse(r!.body), { statusCode: 500, message: "boom" });
  });

  t.test("keep-alive, then two requests pipelined in one write: answers in order", async (t) => {
    await pipelinedInOrder(t, port, (name) => `/hello/${name}`);
  });

  t.test("UPDATE reaches Fastify as sent, which routes node's methods only: its 404", async (t) => {
    const [r] = splitResponses(await talk(port, ["UPDATE /hello/x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"]));
    t.equal(r!.status, 404);
    t.match(JSON.parse(r!.body), { statusCode: 404 });
    t.equal(methods.at(-1), "UPDATE", "given to Fastify's handler as sent");
  });

  t.test("a client that leaves mid-response: 'close' on the request and the response", async (t) => {
    await leavesMidResponse(t, port, watch);
  });
});
