// A Koa 3 app on startline/node, over real sockets: routing on any method
// token (Koa reads ctx.method, so UPDATE and purge reach it as sent), JSON and
// streamed request bodies, a file streamed out, several cookies, a thrown
// error, keep-alive and pipelining, and a client that leaves mid-response.

import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { PassThrough } from "node:stream";
import t from "tap";
import Koa from "koa";
import { createServer } from "../../src/node/index.js";
import { listenNode } from "../helpers/node-server.js";
import { fileStreamedOut, fileToServe, leavesMidResponse, leaving, pipelinedInOrder } from "../helpers/framework-probes.js";
import { splitResponses, talk } from "../helpers/wire.js";

// One parent test holds the app's server and temporary files: a teardown at the file's top level would let
// tap end its root whenever it is idle, cutting short a next file sharing the process (test/batch.mjs).
t.test("a Koa 3 app on startline/node", async (t) => {
  const fileBytes = Buffer.alloc(2 * 1024 * 1024 + 5, "koa!");
  const file = await fileToServe(t, "koa", fileBytes);

  /** The whole body, read from the request's stream. */
  async function bodyOf(req: NodeJS.ReadableStream): Promise<Buffer> {
    const pieces: Buffer[] = [];
    for await (const piece of req) pieces.push(piece as Buffer);
    return Buffer.concat(pieces);
  }

  const watch = leaving();
  const events = watch.events;

  const app = new Koa();
  app.silent = true; // Koa logs a thrown error otherwise
  app.use(async (ctx) => {
    const { method, path: where } = ctx;
    if (where === "/hello") {
      ctx.cookies.set("first", "1", { httpOnly: false });
      ctx.cookies.set("second", "2", { httpOnly: false });
      ctx.body = { hello: ctx.query.name };
    } else if (where === "/json" && method === "POST") {
      ctx.status = 201;
      ctx.body = { got: JSON.parse((await bodyOf(ctx.req)).toString("utf8")) };
    } else if (where === "/stream" && method === "POST") {
      const body = await bodyOf(ctx.req);
      ctx.body = { bytes: body.length, sha256: createHash("sha256").update(body).digest("hex") };
    } else if (where === "/file") {
      ctx.type = "text/plain";
      ctx.body = createReadStream(file);
    } else if (where === "/boom") {
      throw new Error("boom");
    } else if (where === "/slow") {
      ctx.req.on("close", () => events.push("req close"));
      ctx.res.on("close", () => {
        events.push(`res close, finished ${ctx.res.writableFinished}`);
        watch.left();
      });
      const body = new PassThrough();
      body.write("part");
      ctx.body = body;
    } else if (where === "/verbs") {
      ctx.body = `koa: ${method}`;
    } else {
      ctx.status = 404;
    }
  });

  const running = await listenNode(createServer(app.callback()));
  t.teardown(running.close);
  const port = running.port;

  t.test("routing, query, JSON, several Set-Cookie lines", async (t) => {
    const out = await talk(port, ["GET /hello?name=ada HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"]);
    const [r] = splitResponses(out);
    t.equal(r!.status, 200);
    t.same(JSON.parse(r!.body), { hello: "ada" });
    t.match(out.toString("latin1"), /Set-Cookie: first=1; path=\/\r\nSet-Cookie: second=2; path=\/\r\n/);
  });

  t.test("a JSON body, and a body streamed larger than the engine's whole-body limit", async (t) => {
    const body = JSON.stringify({ a: 1 });
    const [json] = splitResponses(await talk(port, [`POST /json HTTP/1.1\r\nHost: a\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`]));
    t.equal(json!.status, 201);
    t.same(JSON.parse(json!.body), { got: { a: 1 } });
    const big = Buffer.alloc(3 * 1024 * 1024 + 1, "pq");
    const [streamed] = splitResponses(await talk(port, [`POST /stream HTTP/1.1\r\nHost: a\r\nContent-Length: ${big.length}\r\nConnection: close\r\n\r\n`, big]));
    t.same(JSON.parse(streamed!.body), { bytes: big.length, sha256: createHash("sha256").update(big).digest("hex") });
  });

  t.test("a file streamed out", async (t) => {
    await fileStreamedOut(t, port, fileBytes);
  });

  t.test("a thrown error: Koa's 500", async (t) => {
    const [r] = splitResponses(await talk(port, ["GET /boom HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"]));
    t.equal(r!.status, 500);
    t.equal(r!.body, "Internal Server Error");
  });

  t.test("keep-alive, then two requests pipelined in one write: answers in order", async (t) => {
    await pipelinedInOrder(t, port, (name) => `/hello?name=${name}`);
  });

  t.test("UPDATE and purge reach the app as sent", async (t) => {
    const out = await talk(port, ["UPDATE /verbs HTTP/1.1\r\nHost: a\r\n\r\npurge /verbs HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"]);
    t.same(
      splitResponses(out).map((r) => r.body),
      ["koa: UPDATE", "koa: purge"],
    );
  });

  t.test("a client that leaves mid-response: 'close' on the request and the response", async (t) => {
    await leavesMidResponse(t, port, watch);
  });
});
