// Who sent a request (RequestHead.peer): the connection reads its socket's
// peer once and its parser puts it on every request, a repeated head (which
// the parser's head memory hands on without reading it again) included; a
// connection with no peer, as inject()'s, says "-", unless inject() is
// told whom its input stands for.

import net from "node:net";
import { once } from "node:events";
import t from "tap";
import { inject } from "../../src/http/connection/inject.js";
import type { Request } from "../../src/http/message/request.js";
import { listen } from "../helpers/wire.js";

const echoPeer = (request: Request) => ({ status: 200, headers: { "Content-Type": "text/plain" }, body: `peer=${request.peer}` });

t.test("over a socket: the client's address as its own socket names it, on every request of the connection", async (t) => {
  const server = await listen(echoPeer);
  t.teardown(() => server.close());
  const socket = net.connect(server.port, "127.0.0.1");
  await once(socket, "connect");
  const mine = socket.localAddress!;
  let out = "";
  socket.on("data", (chunk: Buffer) => (out += chunk.toString("latin1")));
  const ended = once(socket, "end");
  // Three times the same head: the memory keeps the second, and the third is recalled from it, not parsed again.
  const get = "GET /a HTTP/1.1\r\nHost: h\r\n\r\n";
  socket.end(get + get + get + "GET /b HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
  await ended;
  const peers = [...out.matchAll(/\r\n\r\npeer=(.*?)(?=HTTP\/1\.1 |$)/gs)].map((m) => m[1]);
  t.same(peers, [mine, mine, mine, mine], `four requests, each with the peer's address (${mine})`);
});

t.test("in memory (inject): no peer, said as -", async (t) => {
  const { output } = await inject(echoPeer, "GET /a HTTP/1.1\r\nHost: h\r\n\r\n");
  t.match(output.toString("latin1"), /\r\n\r\npeer=-$/);
});

t.test("in memory, standing for a client (inject's peer option, as the wire view uses it): that client's address", async (t) => {
  for (const stepwise of [false, true]) {
    const { output } = await inject(echoPeer, "GET /a HTTP/1.1\r\nHost: h\r\n\r\n", { peer: "192.0.2.7", stepwise });
    t.match(output.toString("latin1"), /\r\n\r\npeer=192\.0\.2\.7$/, stepwise ? "stepwise" : "whole");
  }
});
