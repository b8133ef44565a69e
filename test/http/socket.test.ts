// The server over real loopback sockets: real clients (curl, fetch), timeouts,
// back-pressure and graceful shutdown.

import t from "tap";
import net from "node:net";
import { once } from "node:events";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type { ConnectionTrace } from "../../src/http/connection/trace-hook.js";
import type { Handler } from "../../src/http/connection/service.js";
import { createRouter } from "../../src/router/router.js";
import { createApp } from "../../src/app.js";
import { createMemoryStore } from "../../src/store/memory.js";
import { connectionsCount, listen, readUntil, receivedUntilClose, splitResponses, talk } from "../helpers/wire.js";
import { happens } from "../helpers/hang.js";
import { stopsMoving } from "../helpers/quiet.js";

const run = promisify(execFile);

/** A router with a test route for a custom method, as a client of the engine would write it. */
const testRouter = createRouter([
  {
    method: "UPDATE",
    path: "/api/v9/things/:id",
    summary: "test route",
    handler: (req, params) => ({
      status: 200,
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ method: req.method, id: params.id, body: req.body.toString() }),
    }),
  },
]);

t.test("curl -X UPDATE is routed by method and path", async (t) => {
  const s = await listen(testRouter.handle);
  t.teardown(s.close);
  const { stdout } = await run("curl", ["-s", "-X", "UPDATE", "-H", "Content-Type: application/json", "--data", '{"a":1}', `http://127.0.0.1:${s.port}/api/v9/things/42`]);
  t.same(JSON.parse(stdout), { method: "UPDATE", id: "42", body: '{"a":1}' });
});

t.test("Node's fetch with method UPDATE is routed", async (t) => {
  const s = await listen(testRouter.handle);
  t.teardown(s.close);
  const res = await fetch(`http://127.0.0.1:${s.port}/api/v9/things/a%20b`, { method: "UPDATE", body: "x" });
  t.equal(res.status, 200);
  t.same(await res.json(), { method: "UPDATE", id: "a b", body: "x" });
});

t.test("curl -X UPDATE on the status endpoint: 405 with Allow", async (t) => {
  const s = await listen(createApp({ store: createMemoryStore() }).handle);
  t.teardown(s.close);
  const { stdout } = await run("curl", ["-si", "-X", "UPDATE", `http://127.0.0.1:${s.port}/api/v2/status`]);
  const [r] = splitResponses(Buffer.from(stdout, "latin1"));
  t.equal(r!.status, 405);
  t.equal(r!.headers.allow, "GET, HEAD, OPTIONS");
  t.equal(r!.headers["content-type"], "application/problem+json");
});

t.test("an unknown API version: 404 problem naming the versions served", async (t) => {
  const s = await listen(createApp({ store: createMemoryStore() }).handle);
  t.teardown(s.close);
  const { stdout } = await run("curl", ["-si", `http://127.0.0.1:${s.port}/api/v9/status`]);
  const [r] = splitResponses(Buffer.from(stdout, "latin1"));
  t.equal(r!.status, 404);
  const body = JSON.parse(r!.body);
  t.equal(body.type, "/problems/unknown-version");
  for (const v of ["v1", "v1-1", "v2"]) t.match(body.detail, v);
});

t.test("keep-alive: several requests on one socket, then Connection: close ends it", async (t) => {
  const s = await listen(createApp({ store: createMemoryStore() }).handle);
  t.teardown(s.close);
  const socket = net.connect(s.port, "127.0.0.1");
  await once(socket, "connect");
  socket.write("GET /api/v2/status HTTP/1.1\r\nHost: t\r\n\r\n");
  await readUntil(socket, "is up.");
  socket.write("GET /api/v1-1/status HTTP/1.1\r\nHost: t\r\n\r\n");
  await readUntil(socket, "versao");
  const received: Buffer[] = [];
  socket.on("data", (d: Buffer) => received.push(d));
  socket.write("GET /api/v2/status HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  await once(socket, "close");
  const [r] = splitResponses(Buffer.concat(received));
  t.equal(r!.headers.connection, "close");
});

t.test("HTTP/1.0 over a socket: answered, then closed by the server", async (t) => {
  const s = await listen(createApp({ store: createMemoryStore() }).handle);
  t.teardown(s.close);
  const rs = splitResponses(await talk(s.port, ["GET /api/v2/status HTTP/1.0\r\n\r\n"]));
  t.equal(rs.length, 1);
  t.equal(rs[0]!.status, 200);
});

t.test("100-continue over a socket: the 100 arrives before the body is sent", async (t) => {
  const handler: Handler = (req) => ({ status: 200, body: req.body });
  const s = await listen(handler);
  t.teardown(s.close);
  const socket = net.connect(s.port, "127.0.0.1");
  await once(socket, "connect");
  socket.write("PUT /x HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n");
  const interim = await readUntil(socket, "\r\n\r\n");
  t.equal(interim, "HTTP/1.1 100 Continue\r\n\r\n");
  socket.write("data");
  const final = await readUntil(socket, "data");
  t.match(final, /^HTTP\/1\.1 200 OK\r\n/);
  socket.destroy();
});

t.test("a protocol error over a socket is answered, then the server closes", async (t) => {
  const s = await listen(createApp({ store: createMemoryStore() }).handle);
  t.teardown(s.close);
  const out = await talk(s.port, ["GET /api/v2/status HTTP/1.1\r\nHost: t\nX: y\r\n\r\n"]);
  const [r] = splitResponses(out);
  t.equal(r!.status, 400);
  t.equal(JSON.parse(r!.body).code, "BARE_LF");
});

t.test("headers timeout: an unfinished head gets a 408 and the connection closes", async (t) => {
  const s = await listen(createApp({ store: createMemoryStore() }).handle, { headersTimeoutMs: 100 });
  t.teardown(s.close);
  const out = await talk(s.port, ["GET /api/v2/status HTTP/1.1\r\nHost: t\r\n"]);
  const [r] = splitResponses(out);
  t.equal(r!.status, 408);
  t.equal(r!.headers.connection, "close");
  // The server's own default would also end it, later: the detail says which limit did.
  t.match(JSON.parse(r!.body).detail, /^The request head was not complete 100 ms\b/, "the detail names the timeout the server was given");
});

t.test("body timeout: a stalled body gets a 408", async (t) => {
  const handler: Handler = () => ({ status: 200 });
  const s = await listen(handler, { bodyTimeoutMs: 100 });
  t.teardown(s.close);
  const out = await talk(s.port, ["POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc"]);
  const [r] = splitResponses(out);
  t.equal(r!.status, 408);
  t.match(JSON.parse(r!.body).detail, /^The request body stalled for 100 ms\b/, "the detail names the timeout the server was given");
});

t.test("request timeout: a body trickled a byte at a time cannot outlast REQUEST_TIMEOUT_MS", async (t) => {
  let handled = 0;
  const handler: Handler = () => {
    handled++;
    return { status: 200 };
  };
  // Each byte comes well inside the body timeout, so only the whole-request deadline can end this.
  const s = await listen(handler, { bodyTimeoutMs: 10_000, headersTimeoutMs: 10_000, requestTimeoutMs: 300 });
  t.teardown(s.close);
  const socket = net.connect(s.port, "127.0.0.1");
  await once(socket, "connect");
  socket.write("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\n");
  let sent = 0;
  // The stimulus, not a wait: a byte every 20 ms until the server answers (1000 bytes would take 20 s).
  const trickle = setInterval(() => {
    if (!socket.destroyed && sent < 1000) socket.write(Buffer.from([0x61]), () => sent++);
  }, 20);
  t.teardown(() => clearInterval(trickle));
  // The problem body is one flat JSON object: its closing brace ends the response.
  const response = await readUntil(socket, "}");
  clearInterval(trickle);
  t.match(response, /^HTTP\/1\.1 408 /, "408 Request Timeout");
  t.match(response, /after its first byte/, "the detail names the whole-request deadline");
  t.ok(sent < 1000, `answered before the body was complete (${sent} of 1000 bytes sent)`);
  t.equal(handled, 0, "the handler never saw the request");
  socket.destroy();
});

t.test("a request line that can only be refused is answered at once, without waiting for its CRLF", async (t) => {
  const s = await listen(() => ({ status: 200 }), { headersTimeoutMs: 60_000, requestTimeoutMs: 60_000 });
  t.teardown(s.close);
  for (const [prefix, status] of [
    ["GET / HTTP/5.6", 505],
    [`POST / HTTP/1.1\r\nHost: t\r\nContent-Length: ${"9".repeat(25)}`, 413],
    ["GET / HTTP/1.1\r\n Host: t", 400],
  ] as const) {
    const socket = net.connect(s.port, "127.0.0.1");
    await once(socket, "connect");
    socket.write(prefix);
    const response = await readUntil(socket, "}");
    t.match(response, new RegExp(`^HTTP/1\\.1 ${status} `), `${JSON.stringify(prefix.slice(0, 30))}: ${status} before any CRLF`);
    socket.destroy();
  }
});

t.test("idle keep-alive timeout: a quiet connection is closed without a response", async (t) => {
  // A second timer of the same server, 30 times the one under test and shorter than its default (5 s):
  // a server that ignored keepAliveTimeoutMs would end the other connection first. An order, not a time.
  const s = await listen(createApp({ store: createMemoryStore() }).handle, { keepAliveTimeoutMs: 100, headersTimeoutMs: 3000 });
  t.teardown(s.close);
  const order: string[] = [];
  const socket = net.connect(s.port, "127.0.0.1");
  await once(socket, "connect");
  const closed = receivedUntilClose(socket).then((out) => (order.push("idle"), out));
  socket.write("GET /api/v2/status HTTP/1.1\r\nHost: t\r\n\r\n");
  await readUntil(socket, "is up.");
  // Started once the idle one is answered: it is older, and its deadline (100 ms) nearer, whatever the machine's pace.
  const unfinished = talk(s.port, ["GET /api/v2/status HTTP/1.1\r\n"]).then(() => order.push("unfinished head"));
  const rs = splitResponses(await closed);
  t.equal(rs.length, 1, "the one request is answered, then the idle connection is closed");
  t.equal(rs[0]!.status, 200);
  await unfinished;
  t.same(order, ["idle", "unfinished head"], "closed by its own timeout, before the longer headers timeout ended the other");
});

t.test("back-pressure: a client that pipelines and never reads cannot make the server buffer without bound", async (t) => {
  let handled = 0;
  const big = Buffer.alloc(64 * 1024, 0x61);
  const handler: Handler = () => {
    handled++;
    return { status: 200, body: big };
  };
  const s = await listen(handler);
  t.teardown(s.close);
  const socket = net.connect(s.port, "127.0.0.1");
  await once(socket, "connect");
  socket.pause(); // never read until the end
  const total = 3000; // 3000 x 64 KiB = 187 MiB of responses if nothing pushed back
  const request = "GET / HTTP/1.1\r\nHost: t\r\n\r\n";
  // The last request asks to close, so the server's FIN marks the end of every answer.
  socket.write(request.repeat(total - 1) + "GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  // Wait until the server's progress stops: it must have stopped reading.
  await happens(t, stopsMoving(() => handled), "the server handles requests, then stops");
  t.ok(handled < total / 4, `server stopped after ${handled} of ${total} requests while the client did not read`);
  // Now read everything: every response arrives, in order, complete.
  let bytes = 0;
  const expected = total * (big.length + 200);
  socket.on("data", (d: Buffer) => {
    bytes += d.length;
  });
  const ended = once(socket, "end");
  socket.resume();
  await ended;
  t.equal(handled, total, "after the client reads, every request is answered");
  t.ok(bytes >= total * big.length && bytes <= expected, `every body arrived, once (${bytes} bytes)`);
  socket.destroy();
});

t.test("graceful close: idle connections close, in-flight requests finish with Connection: close", async (t) => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let entered!: () => void;
  const inHandler = new Promise<void>((r) => (entered = r));
  const handler: Handler = async () => {
    entered();
    await gate;
    return { status: 200, body: "finished" };
  };
  // No timeout of the server's may close the idle connection within the hang detector's bound: only close() may.
  const s = await listen(handler, { keepAliveTimeoutMs: 60_000, headersTimeoutMs: 60_000 });
  const idle = net.connect(s.port, "127.0.0.1");
  await once(idle, "connect");
  const busy = net.connect(s.port, "127.0.0.1");
  await once(busy, "connect");
  const received: Buffer[] = [];
  busy.on("data", (d: Buffer) => received.push(d));
  busy.write("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n");
  await inHandler;
  const closing = s.server.close(60_000); // nor may the grace run out first
  await happens(t, once(idle, "close"), "server.close() closes the idle connection at once");
  const refused = net.connect(s.port, "127.0.0.1");
  const [err] = (await once(refused, "error")) as [NodeJS.ErrnoException];
  t.equal(err.code, "ECONNREFUSED", "no new connections are accepted");
  release();
  await once(busy, "close");
  await closing;
  const [r] = splitResponses(Buffer.concat(received));
  t.equal(r!.body, "finished");
  t.equal(r!.headers.connection, "close");
});

t.test("graceful close with two answers in the making: no request after them is read, the last answer closes", async (t) => {
  // /a and /b are in the making (maxUnanswered 2) and /c has arrived when close() is called. Each answer out
  // used to let the parser take the next request, so a client that kept pipelining held the close for good.
  const handled: string[] = [];
  const answers: (() => void)[] = [];
  let twoInMaking!: () => void;
  const two = new Promise<void>((resolve) => (twoInMaking = resolve));
  const handler: Handler = (request) => {
    handled.push(request.path);
    return new Promise((resolve) => {
      answers.push(() => resolve({ status: 200, body: request.path }));
      if (answers.length === 2) twoInMaking();
    });
  };
  let cArrived!: () => void;
  const cIn = new Promise<void>((resolve) => (cArrived = resolve));
  const quiet = () => {};
  const trace = (): ConnectionTrace => ({
    span: quiet,
    received: (chunk) => chunk.includes("/c") && cArrived(),
    head: quiet,
    request: quiet,
    error: quiet,
    response: quiet,
    closed: quiet,
  });
  const s = await listen(handler, { maxUnanswered: 2, trace, keepAliveTimeoutMs: 60_000 });
  const socket = net.connect(s.port, "127.0.0.1");
  await once(socket, "connect");
  const all = receivedUntilClose(socket);
  socket.write("GET /a HTTP/1.1\r\nHost: t\r\n\r\nGET /b HTTP/1.1\r\nHost: t\r\n\r\n");
  await happens(t, two, "/a and /b are in the making");
  socket.write("GET /c HTTP/1.1\r\nHost: t\r\n\r\n");
  await happens(t, cIn, "/c has arrived");
  const closing = s.server.close(60_000); // the grace must not be what ends it
  for (const answer of answers.splice(0)) answer();
  await happens(t, closing, "close() resolves once the answers in the making are out");
  const rs = splitResponses(await all);
  t.same(handled, ["/a", "/b"], "/c, which arrived before close() but was not begun, is not read");
  t.same(rs.map((r) => r.body), ["/a", "/b"]);
  t.equal(rs[1]!.headers.connection, "close", "the last answer says the connection closes");
});

t.test("connection cap: past it, new connections get a 503 problem and close; open ones are served", async (t) => {
  const s = await listen(createApp({ store: createMemoryStore() }).handle, { maxConnections: 2 });
  t.teardown(s.close);
  const open: net.Socket[] = [];
  for (let i = 0; i < 2; i++) {
    const c = net.connect(s.port, "127.0.0.1");
    await once(c, "connect");
    c.write("GET /api/v2/status HTTP/1.1\r\nHost: t\r\n\r\n");
    await readUntil(c, "is up.");
    open.push(c);
  }
  const [refused] = splitResponses(await talk(s.port, []));
  t.equal(refused!.status, 503);
  t.equal(refused!.headers["retry-after"], "1");
  t.equal(JSON.parse(refused!.body).type, "/problems/too-many-connections");
  open[0]!.write("GET /api/v2/status HTTP/1.1\r\nHost: t\r\n\r\n");
  await happens(t, readUntil(open[0]!, "is up."), "an existing connection is still served");
  // A connection that closes gives its place back.
  open[0]!.destroy();
  await happens(t, connectionsCount(s.server, (n) => n < 2), "the server counts the closed connection out");
  const [served] = splitResponses(await talk(s.port, ["GET /api/v2/status HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"]));
  t.equal(served!.status, 200, "a new connection is served in its place");
  for (const c of open) c.destroy();
});

