// startline/node's Server as node's: listen() in its forms, address(),
// 'listening', 'connection' and 'close', close() and its callback,
// closeIdleConnections() beside a request in flight, closeAllConnections().

import { once } from "node:events";
import net from "node:net";
import t from "tap";
import { createServer } from "../../src/node/index.js";
import { readUntil } from "../helpers/wire.js";

t.test("listen(options, callback), 'connection', and close(callback) once every connection is gone", async (t) => {
  const connections: net.Socket[] = [];
  const server = createServer((_req, res) => res.end("ok"));
  server.on("connection", (socket: net.Socket) => connections.push(socket));
  await new Promise<void>((resolve) => server.listen({ port: 0, host: "127.0.0.1" }, resolve));
  t.equal(server.listening, true);
  const { port, address } = server.address() as net.AddressInfo;
  t.equal(address, "127.0.0.1");
  const client = net.connect(port, "127.0.0.1");
  await once(client, "connect");
  client.write("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
  await readUntil(client, "ok");
  t.equal(connections.length, 1, "'connection' with the socket");
  let closed = false;
  const done = new Promise<void>((resolve) =>
    server.close(() => {
      closed = true;
      resolve();
    }),
  );
  // An idle keep-alive connection closes at once, as node's close() closes idle connections.
  await once(client, "close");
  await done;
  t.equal(closed, true);
  t.equal(server.listening, false);
  const error = await new Promise<Error | undefined>((resolve) => server.close(resolve));
  t.equal((error as { code?: string } | undefined)?.code, "ERR_SERVER_NOT_RUNNING", "closing again: node's error");
});

t.test("closeIdleConnections() closes idle connections, not one with a request in flight; closeAllConnections() closes it", async (t) => {
  let respond!: () => void;
  const arrivals: (() => void)[] = [];
  const inFlight = [new Promise<void>((resolve) => arrivals.push(resolve)), new Promise<void>((resolve) => arrivals.push(resolve))];
  const server = createServer((req, res) => {
    if (req.url === "/slow") {
      respond = () => res.end("late");
      arrivals.shift()!();
    } else res.end("ok");
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as net.AddressInfo;
  const idle = net.connect(port, "127.0.0.1");
  const busy = net.connect(port, "127.0.0.1");
  // Closed by a destroy, as node's closeIdleConnections() does: a client may see a reset.
  for (const socket of [idle, busy]) socket.on("error", () => {});
  await Promise.all([once(idle, "connect"), once(busy, "connect")]);
  idle.write("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
  await readUntil(idle, "ok");
  busy.write("GET /slow HTTP/1.1\r\nHost: a\r\n\r\n");
  await inFlight[0];
  const closed = (socket: net.Socket) => new Promise((resolve) => socket.once("close", resolve));
  server.closeIdleConnections();
  await closed(idle);
  t.equal(busy.destroyed, false, "the busy one stays");
  respond();
  await readUntil(busy, "late");
  busy.write("GET /slow HTTP/1.1\r\nHost: a\r\n\r\n");
  await inFlight[1];
  server.closeAllConnections();
  await closed(busy);
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

t.test("close() closes idle connections through the server's own closeIdleConnections, as node's does", async (t) => {
  const server = createServer((_req, res) => res.end("ok"));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as net.AddressInfo;
  const idle = net.connect(port, "127.0.0.1");
  idle.on("error", () => {});
  await once(idle, "connect");
  idle.write("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
  await readUntil(idle, "ok");
  // Fastify wraps it on its own servers and counts on close() to call it (it makes no second call for node's).
  let calls = 0;
  const own = server.closeIdleConnections.bind(server);
  server.closeIdleConnections = () => {
    calls++;
    own();
  };
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  t.equal(calls, 1, "called once, by close() itself");
  await once(idle, "close");
  await closed;
});

t.test("a listen error reaches 'error', as on node", async (t) => {
  const first = createServer((_req, res) => res.end());
  first.listen(0, "127.0.0.1");
  await once(first, "listening");
  const { port } = first.address() as net.AddressInfo;
  t.teardown(() => new Promise<void>((resolve) => first.close(() => resolve())));
  const second = createServer((_req, res) => res.end());
  second.listen(port, "127.0.0.1");
  const [error] = (await once(second, "error")) as [NodeJS.ErrnoException];
  t.equal(error.code, "EADDRINUSE");
});

t.test("maxHeadersCount is the engine's limit, read at listen()", async (t) => {
  const server = createServer((_req, res) => res.end("ok"));
  t.equal(server.maxHeadersCount, 100, "the engine's default");
  server.maxHeadersCount = 3;
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as net.AddressInfo;
  const client = net.connect(port, "127.0.0.1");
  await once(client, "connect");
  client.write("GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n");
  t.match(await readUntil(client, "\r\n\r\n"), /^HTTP\/1\.1 431 /, "a fourth field is one too many");
  client.destroy();
  t.throws(() => (server.maxHeadersCount = 10), { code: "ERR_STARTLINE_NOT_OFFERED" });
});

t.test("maxHeaderSize bounds the request line too, as node's does; 'clientError' hears node's HPE_HEADER_OVERFLOW", async (t) => {
  const server = createServer({ maxHeaderSize: 1024 }, (_req, res) => res.end("ok"));
  const heard: string[] = [];
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as net.AddressInfo;
  const ask = async (target: string) => {
    const client = net.connect(port, "127.0.0.1");
    client.on("error", () => {});
    await once(client, "connect");
    client.write(`GET ${target} HTTP/1.1\r\nHost: a\r\n\r\n`);
    const head = await readUntil(client, "\r\n\r\n");
    client.destroy();
    return head.split("\r\n")[0];
  };
  t.equal(await ask("/" + "a".repeat(900)), "HTTP/1.1 200 OK", "a line within the size");
  t.match(await ask("/" + "a".repeat(1100)), /^HTTP\/1\.1 414 /, "a longer one: the engine's 414, with no 'clientError' listener");
  server.on("clientError", (error: Error & { code: string; status: number }, socket: net.Socket) => {
    heard.push(`${error.code} ${error.status}`);
    socket.end("HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  });
  t.match(await ask("/" + "a".repeat(1100)), /^HTTP\/1\.1 431 /, "the listener's answer");
  t.same(heard, ["HPE_HEADER_OVERFLOW 414"], "node's code for a head too large; the engine's status beside it");
});

t.test("_handle, as net.Server's: set while listening, null before and after (supertest closes only a server that has one)", async (t) => {
  const server = createServer((_req, res) => res.end("ok"));
  t.equal(server._handle, null, "none before listen()");
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  t.not(server._handle, null, "the listening socket's while listening");
  await new Promise<void>((resolve) => server.close(() => resolve()));
  t.equal(server._handle, null, "none once closed");
});
