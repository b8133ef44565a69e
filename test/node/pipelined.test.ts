// startline/node hands pipelined requests to its listener side by side, as
// node:http does, but only while every one in flight has a safe method (RFC
// 9112 §9.3.2; the rule is the engine's, src/http/connection/protocol.ts): a
// POST's 'request' is emitted only once the answers before it are out, and
// nothing after it until it is answered. Its body, which the listener reads
// as a stream, is read only once the listener has it.
//
// Each listener waits for the test to release it; every 'request' and every
// res.end() goes into one log, and the order is read from the log. As on
// node, only the response whose turn it is has res.socket; the one behind
// it gets it, with a 'socket' event, when the one before finishes.

import { once } from "node:events";
import net from "node:net";
import t from "tap";
import { createServer, type RequestListener } from "../../src/node/index.js";
import type { IncomingRequest } from "../../src/node/request.js";
import type { ServerResponseOnEngine } from "../../src/node/response.js";
import { happens } from "../helpers/hang.js";
import { listenNode } from "../helpers/node-server.js";
import { receivedUntilClose, splitResponses } from "../helpers/wire.js";

t.test("GET, GET, POST, GET pipelined: GETs side by side, the POST alone, answers in order", async (t) => {
  const log: string[] = [];
  const releases = new Map<string, () => void>();
  const started = new Map<string, () => void>();
  const starts = new Map<string, Promise<void>>();
  let bodyRead!: () => void;
  const postBody = new Promise<void>((resolve) => (bodyRead = resolve));
  for (const path of ["/1", "/2", "/3", "/4"]) starts.set(path, new Promise((resolve) => started.set(path, resolve)));
  const socketAtStart: Record<string, boolean> = {};
  const socketAtFinish: Record<string, boolean> = {};
  const listener = (req: IncomingRequest, res: ServerResponseOnEngine) => {
    log.push(`start ${req.url}`);
    socketAtStart[req.url] = res.socket !== null;
    let gotSocket = false;
    res.on("socket", (socket) => (gotSocket = socket === req.socket));
    res.on("finish", () => (socketAtFinish[req.url] = socketAtStart[req.url]! || gotSocket));
    let body = "";
    req.setEncoding("latin1");
    req.on("data", (piece: string) => (body += piece));
    if (req.method === "POST") req.on("end", bodyRead);
    releases.set(req.url, () => {
      log.push(`answer ${req.url}`);
      res.end(`${req.method} ${req.url} ${body}`);
    });
    started.get(req.url)!();
  };
  const server = createServer(listener as unknown as RequestListener);
  const running = await listenNode(server);
  t.teardown(running.close);
  const socket = net.connect(running.port, "127.0.0.1");
  await once(socket, "connect");
  const received = receivedUntilClose(socket);
  socket.write(
    "GET /1 HTTP/1.1\r\nHost: t\r\n\r\n" +
      "GET /2 HTTP/1.1\r\nHost: t\r\n\r\n" +
      "POST /3 HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\n\r\nbody" +
      "GET /4 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
  );
  await happens(t, Promise.all([starts.get("/1"), starts.get("/2")]), "both GETs reach the listener at once");
  t.same(log, ["start /1", "start /2"], "the second GET reached it before the first was answered, and nothing else did");
  releases.get("/2")!();
  await new Promise((resolve) => setImmediate(resolve));
  releases.get("/1")!();
  await happens(t, starts.get("/3")!, "the POST reaches the listener");
  // Its body is read once the listener has the request; answered once it has come whole, a few turns later.
  await happens(t, postBody, "the POST's body is read");
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
  releases.get("/3")!();
  await happens(t, starts.get("/4")!, "the last GET reaches the listener");
  releases.get("/4")!();
  const rs = splitResponses(await received);
  t.same(log, ["start /1", "start /2", "answer /2", "answer /1", "start /3", "answer /3", "start /4", "answer /4"], "the POST only once both GETs were answered, the last GET only once the POST was");
  t.same(
    rs.map((r) => r.body),
    ["GET /1 ", "GET /2 ", "POST /3 body", "GET /4 "],
    "answers in request order, the POST's body read whole",
  );
  t.same(socketAtStart["/1"], true, "the first response has the socket");
  t.same(socketAtStart["/2"], false, "the second has none while the first is being made");
  t.same(socketAtFinish, { "/1": true, "/2": true, "/3": true, "/4": true }, "each had the socket by its end, given by a 'socket' event if not at its start");
});
