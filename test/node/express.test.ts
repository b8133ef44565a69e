// An Express 5 app on startline/node, over real sockets: routing, JSON and
// streamed request bodies, a file streamed out, several cookies, a thrown
// error, keep-alive and pipelining, a client that leaves mid-response, and
// methods node:http would refuse (UPDATE) or that Express routes only as node
// spells them (purge).

import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import t from "tap";
import express from "express";
import { createServer } from "../../src/node/index.js";
import { listenNode } from "../helpers/node-server.js";
import { fileStreamedOut, fileToServe, leavesMidResponse, leaving, pipelinedInOrder } from "../helpers/framework-probes.js";
import { splitResponses, talk } from "../helpers/wire.js";

// One parent test holds the app's server and temporary files: a teardown at the file's top level would let
// tap end its root whenever it is idle, cutting short a next file sharing the process (test/batch.mjs).
t.test("an Express 5 app on startline/node", async (t) => {
  const fileBytes = Buffer.alloc(3 * 1024 * 1024 + 17, "0123456789abcdef");
  const file = await fileToServe(t, "express", fileBytes);

  const watch = leaving();
  const events = watch.events;

  const app = express();
  app.set("env", "test"); // Express logs a thrown error's stack otherwise
  app.get("/hello/:name", (req, res) => {
    res.cookie("first", "1").cookie("second", "2").json({ hello: req.params.name, q: req.query.q });
  });
  app.post("/json", express.json(), (req, res) => res.status(201).json({ got: req.body }));
  app.post("/stream", (req, res) => {
    const hash = createHash("sha256");
    let bytes = 0;
    req.on("data", (piece: Buffer) => {
      bytes += piece.length;
      hash.update(piece);
    });
    req.on("end", () => res.json({ bytes, sha256: hash.digest("hex") }));
  });
  app.get("/file", (_req, res) => {
    res.type("text/plain");
    createReadStream(file).pipe(res);
  });
  app.get("/boom", () => {
    throw new Error("boom");
  });
  app.get("/slow", (req, res) => {
    req.on("close", () => events.push("req close"));
    res.on("close", () => {
      events.push(`res close, finished ${res.writableFinished}`);
      watch.left();
    });
    res.write("part");
  });
  app.route("/verbs").all((req, res) => res.send(`route.all: ${req.method}`));
  // Express 5's app.all() registers node's own method list: a token outside it reaches middleware.
  app.use((req, res, next) => (req.method === "UPDATE" ? res.send(`middleware: ${req.method}`) : next()));
  app.all("/purge-all", (req, res) => res.send(`app.all: ${req.method}`));

  const running = await listenNode(createServer(app));
  t.teardown(running.close);
  const port = running.port;

  t.test("routing, query, JSON, several Set-Cookie lines", async (t) => {
    const [r] = splitResponses(await talk(port, ["GET /hello/ada?q=x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"]));
    t.equal(r!.status, 200);
    t.same(JSON.parse(r!.body), { hello: "ada", q: "x" });
    t.equal(r!.headers["content-type"], "application/json; charset=utf-8");
    const text = (await talk(port, ["GET /hello/ada HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"])).toString("latin1");
    t.match(text, /Set-Cookie: first=1; Path=\/\r\nSet-Cookie: second=2; Path=\/\r\n/);
  });

  t.test("a JSON body, and a body streamed larger than the engine's whole-body limit", async (t) => {
    const body = JSON.stringify({ a: [1, 2, 3] });
    const [json] = splitResponses(await talk(port, [`POST /json HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`]));
    t.equal(json!.status, 201);
    t.same(JSON.parse(json!.body), { got: { a: [1, 2, 3] } });
    const big = Buffer.alloc(2 * 1024 * 1024 + 3, "xyz");
    const head = `POST /stream HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`;
    const chunked = Buffer.concat([Buffer.from(`${big.length.toString(16)}\r\n`), big, Buffer.from("\r\n0\r\n\r\n")]);
    const [streamed] = splitResponses(await talk(port, [head, chunked]));
    t.same(JSON.parse(streamed!.body), { bytes: big.length, sha256: createHash("sha256").update(big).digest("hex") });
  });

  t.test("a file streamed out, chunked", async (t) => {
    await fileStreamedOut(t, port, fileBytes);
  });

  t.test("a thrown error: Express's 500", async (t) => {
    const [r] = splitResponses(await talk(port, ["GET /boom HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"]));
    t.equal(r!.status, 500);
    t.match(r!.body, /Error: boom/, "its error page (in its test environment, with the error)");
  });

  t.test("keep-alive, then two requests pipelined in one write: answers in order", async (t) => {
    await pipelinedInOrder(t, port, (name) => `/hello/${name}`);
  });

  t.test("UPDATE reaches route.all() and middleware; purge reaches app.all()", async (t) => {
    const out = await talk(port, [
      "UPDATE /verbs HTTP/1.1\r\nHost: a\r\n\r\nUPDATE /elsewhere HTTP/1.1\r\nHost: a\r\n\r\npurge /purge-all HTTP/1.1\r\nHost: a\r\n\r\nPURGE /verbs HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
    ]);
    t.same(
      splitResponses(out).map((r) => r.body),
      ["route.all: UPDATE", "middleware: UPDATE", "app.all: purge", "route.all: PURGE"],
    );
  });

  t.test("a client that leaves mid-response: 'close' on the request and the response", async (t) => {
    await leavesMidResponse(t, port, watch);
  });
});
