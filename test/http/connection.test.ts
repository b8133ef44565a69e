// Connection behaviour, in-process: the real Connection over an in-memory
// stream (inject), so every rule of ordering, keep-alive and error handling
// is checked byte for byte without a port.

import t from "tap";
import { once } from "node:events";
import { Connection } from "../../src/http/connection/connection.js";
import { DEFAULT_CONNECTION_OPTIONS } from "../../src/http/connection/options.js";
import type { Handler } from "../../src/http/connection/service.js";
import { DEFAULT_LIMITS } from "../../src/http/parse/parser.js";
import { inject } from "../../src/http/connection/inject.js";
import { createServer } from "../../src/http/connection/server.js";
import type { Request } from "../../src/http/message/request.js";
import type { Response } from "../../src/http/message/response.js";
import { happens } from "../helpers/hang.js";
import { memorySocket } from "../helpers/memory-socket.js";
import { listen, splitResponses, talk } from "../helpers/wire.js";

const echo: Handler = (req: Request): Response => ({
  status: 200,
  headers: { "Content-Type": "text/plain" },
  body: `${req.method} ${req.target} ${req.body.toString("latin1")}`,
});

const get = (path: string, extra = "") => `GET ${path} HTTP/1.1\r\nHost: t\r\n${extra}\r\n`;

t.test("pipelined requests in one write are answered in order", async (t) => {
  const { output } = await inject(echo, get("/a") + get("/b") + get("/c"));
  const rs = splitResponses(output);
  t.same(rs.map((r) => r.body), ["GET /a ", "GET /b ", "GET /c "]);
  t.ok(rs.every((r) => r.headers.connection === undefined), "keep-alive needs no Connection field in 1.1");
});

t.test("a valid request followed by an invalid one: the valid one is answered first", async (t) => {
  const { output } = await inject(echo, get("/ok") + "GET /bad HTTP/1.1\r\nHost : t\r\n\r\n" + get("/never"));
  const rs = splitResponses(output);
  t.equal(rs.length, 2, "nothing after the error is answered");
  t.equal(rs[0]!.body, "GET /ok ");
  t.equal(rs[1]!.status, 400);
  t.equal(rs[1]!.headers.connection, "close");
  t.equal(rs[1]!.headers["content-type"], "application/problem+json");
  const problem = JSON.parse(rs[1]!.body);
  t.equal(problem.type, "/problems/whitespace-before-colon");
  t.equal(problem.status, 400);
  t.equal(problem.instance, "/bad");
  t.match(problem.detail, /RFC 9112 §5\.1/);
});

t.test("pipelined requests: by default, a handler starts once the answer before it is out", async (t) => {
  // Made before /slow's answer is known, /next's answer could only wait for it, whole, in memory.
  const started: string[] = [];
  let release!: () => void;
  let slowRuns!: () => void;
  const running = new Promise<void>((resolve) => (slowRuns = resolve));
  const handler: Handler = (req) => {
    started.push(req.path);
    if (req.path !== "/slow") return { status: 200, body: req.path };
    slowRuns();
    return new Promise<Response>((resolve) => (release = () => resolve({ status: 200, body: req.path })));
  };
  // One read holds both requests: taken as it was parsed, /next would run at once.
  const result = inject(handler, get("/slow") + get("/next"));
  await happens(t, running, "the first handler runs");
  t.same(started, ["/slow"], "the request behind it is not taken yet");
  release();
  const { output } = await result;
  t.same(started, ["/slow", "/next"]);
  t.same(splitResponses(output).map((r) => r.body), ["/slow", "/next"], "both answered, in order");
});

t.test("async handlers that finish out of order still answer in order (maxUnanswered 3: three in the making at once)", async (t) => {
  // Each handler waits for its own release; the test releases them in the
  // opposite order to their arrival, once all three are waiting.
  const release = new Map<string, () => void>();
  let allWaiting!: () => void;
  const waiting = new Promise<void>((resolve) => (allWaiting = resolve));
  const finished: string[] = [];
  const handler: Handler = async (req) => {
    await new Promise<void>((resolve) => {
      release.set(req.path, resolve);
      if (release.size === 3) allWaiting();
    });
    finished.push(req.path);
    return { status: 200, body: req.path };
  };
  const result = inject(handler, get("/slow") + get("/fast") + get("/mid"), { maxUnanswered: 3 });
  await waiting;
  for (const path of ["/fast", "/mid", "/slow"]) {
    release.get(path)!();
    await null; // let that handler finish before the next is released
  }
  const { output } = await result;
  t.same(finished, ["/fast", "/mid", "/slow"], "the handlers finished out of order");
  t.same(splitResponses(output).map((r) => r.body), ["/slow", "/fast", "/mid"], "the responses left in request order");
});

t.test("Connection: close is honoured and nothing after it is read", async (t) => {
  const { output, exchanges } = await inject(echo, get("/a", "Connection: close\r\n") + get("/b"));
  const rs = splitResponses(output);
  t.equal(rs.length, 1);
  t.equal(rs[0]!.headers.connection, "close");
  t.equal(exchanges.length, 1);
});

t.test("HTTP/1.0 closes unless it asks for keep-alive", async (t) => {
  const plain = splitResponses((await inject(echo, "GET /a HTTP/1.0\r\n\r\nGET /b HTTP/1.0\r\n\r\n")).output);
  t.equal(plain.length, 1);
  t.equal(plain[0]!.headers.connection, "close");
  t.equal(plain[0]!.statusLine, "HTTP/1.1 200 OK", "answered as HTTP/1.1 (RFC 9110 §6.2)");

  const kept = splitResponses((await inject(echo, "GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /b HTTP/1.0\r\n\r\n")).output);
  t.equal(kept.length, 2);
  t.equal(kept[0]!.headers.connection, "keep-alive");
  t.equal(kept[1]!.headers.connection, "close");
});

t.test("HEAD gets GET's fields, including Content-Length, and no body", async (t) => {
  const handler: Handler = () => ({ status: 200, headers: { "Content-Type": "text/plain" }, body: "twelve bytes" });
  const { output } = await inject(handler, `HEAD / HTTP/1.1\r\nHost: t\r\n\r\n` + get("/"));
  const rs = splitResponses(output, [true, false]);
  t.equal(rs[0]!.headers["content-length"], "12");
  t.equal(rs[0]!.body, "");
  t.equal(rs[1]!.body, "twelve bytes", "the next response starts right after the head");
});

t.test("one frozen answer, written from memory, is framed as each request on the connection asks", async (t) => {
  // As the status endpoints answer: the same frozen object every time, so the writer keeps its bytes.
  const answer: Response = Object.freeze({ status: 200, headers: Object.freeze({ "Content-Type": "text/plain" }), body: "ok!" });
  const requests = [
    get("/"),
    "HEAD / HTTP/1.1\r\nHost: t\r\n\r\n",
    get("/"),
    "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
    get("/"),
    get("/", "Connection: close\r\n"),
  ];
  // What each response says of its framing, field by field.
  const framing = (rs: ReturnType<typeof splitResponses>) => ({
    bodies: rs.map((r) => r.body),
    lengths: rs.map((r) => r.headers["content-length"]),
    connection: rs.map((r) => r.headers.connection),
    server: rs.map((r) => r.headers["x-server"]),
  });
  const expected = (server: string | undefined) => ({
    bodies: ["ok!", "", "ok!", "ok!", "ok!", "ok!"],
    lengths: ["3", "3", "3", "3", "3", "3"],
    connection: [undefined, undefined, undefined, "keep-alive", undefined, "close"],
    server: Array(6).fill(server),
  });
  t.same(framing(splitResponses((await inject(() => answer, requests.join(""))).output, [false, true])), expected(undefined));
  // Over a socket, one request per write, with fields the server adds to every response.
  const s = await listen(() => answer, { responseFields: "X-Server: test\r\n" });
  t.teardown(s.close);
  t.same(framing(splitResponses(await talk(s.port, requests), [false, true])), expected("test"), "over a socket, with the server's own fields");
});

t.test("Expect: 100-continue gets an interim 100 before the body is read", async (t) => {
  const { output } = await inject(echo, [
    "POST /up HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n",
    "hello",
  ]);
  const text = output.toString("latin1");
  t.ok(text.startsWith("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"), text);
  t.match(text, /POST \/up hello$/);
});

t.test("Expect: 100-continue past the limit a service set from the head: a 413 and no 100 Continue", async (t) => {
  // The service admits the head with a lower limit (as a route that takes small bodies does); the parser refuses it.
  const service = { handle: echo, admit: () => ({ maxBodyBytes: 10 }) };
  const { output } = await inject(service, "POST /small HTTP/1.1\r\nHost: t\r\nContent-Length: 11\r\nExpect: 100-continue\r\n\r\n");
  const text = output.toString("latin1");
  t.notMatch(text, /100 Continue/, "no invitation to send a body that is refused");
  const rs = splitResponses(output);
  t.equal(rs[0]!.status, 413);
  t.match(JSON.parse(rs[0]!.body).detail, /\/small takes at most 10/);
  const within = (await inject(service, ["POST /small HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n", "0123456789"])).output.toString("latin1");
  t.ok(within.startsWith("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"), within);
});

t.test("an expectation other than 100-continue is a 417", async (t) => {
  const rs = splitResponses((await inject(echo, get("/", "Expect: teapot\r\n"))).output);
  t.equal(rs[0]!.status, 417);
  t.equal(rs[0]!.headers.connection, "close");
});

t.test("a handler that throws gives a 500 without details, and the connection lives on", async (t) => {
  const errors: unknown[] = [];
  const handler: Handler = (req) => {
    if (req.path === "/boom") throw new Error("secret internals at /srv/app.js:12");
    return { status: 200, body: "fine" };
  };
  const { output } = await inject(handler, get("/boom") + get("/after"), { onHandlerError: (e) => errors.push(e) });
  const rs = splitResponses(output);
  t.equal(rs[0]!.status, 500);
  t.equal(rs[0]!.headers["content-type"], "application/problem+json");
  t.notMatch(rs[0]!.body, /secret|app\.js|at /, "no message or stack in the body");
  t.equal(rs[1]!.body, "fine", "the next request on the connection is served");
  t.equal(errors.length, 1, "the error is reported to the log");
});

t.test("a handler whose promise rejects gives a 500", async (t) => {
  const handler: Handler = async () => {
    throw new Error("nope");
  };
  const rs = splitResponses((await inject(handler, get("/"))).output);
  t.equal(rs[0]!.status, 500);
});

t.test("header injection is impossible: a value with CR LF is refused at the writer", async (t) => {
  const errors: unknown[] = [];
  const handler: Handler = (req): Response =>
    req.path === "/inject"
      ? { status: 200, headers: { "X-Name": "a\r\nSet-Cookie: stolen=1" }, body: "x" }
      : { status: 200, headers: { "Content-Length": "1" }, body: "x" };
  const { output } = await inject(handler, get("/inject") + get("/framing"), { onHandlerError: (e) => errors.push(e) });
  const text = output.toString("latin1");
  t.notMatch(text, /Set-Cookie/);
  const rs = splitResponses(output);
  t.same(rs.map((r) => r.status), [500, 500], "a handler may not set framing fields either");
  t.equal(errors.length, 2);
});

t.test("1xx-free statuses without content: 204 and 304 carry no Content-Length and no body", async (t) => {
  const handler: Handler = (req) => ({ status: req.path === "/204" ? 204 : 304, body: "ignored" });
  const { output } = await inject(handler, get("/204") + get("/304"));
  const text = output.toString("latin1");
  t.notMatch(text, /Content-Length/i);
  t.notMatch(text, /ignored/);
  t.equal(splitResponses(output).length, 2);
});

t.test("every response carries Date and the body length in bytes, not characters", async (t) => {
  const handler: Handler = () => ({ status: 200, body: "ação" });
  const rs = splitResponses((await inject(handler, get("/"))).output);
  t.match(rs[0]!.headers.date, /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
  t.equal(rs[0]!.headers["content-length"], "6");
});

t.test("a half-closed client still gets every response it asked for", async (t) => {
  // The handlers answer only once the client's half-close has reached the
  // connection (the stream's "end", which the Connection hears first, as it
  // subscribed first), so every response is written after it.
  const { socket: wire, written } = memorySocket();
  const closed = once(wire, "finish");
  const halfClosed = new Promise<void>((resolve) => wire.once("end", resolve));
  const handler: Handler = async (req) => {
    await halfClosed;
    return { status: 200, body: req.path };
  };
  new Connection(wire, handler, { ...DEFAULT_CONNECTION_OPTIONS, limits: DEFAULT_LIMITS }, { onExchange() {}, onHandlerError() {}, onClose() {} });
  wire.once("end", () => t.equal(written().length, 0, "nothing was written before the half-close arrived"));
  wire.push(get("/1"));
  wire.push(get("/2"));
  wire.push(null);
  await closed;
  const rs = splitResponses(written());
  t.same(rs.map((r) => r.body), ["/1", "/2"]);
  t.equal(rs[1]!.headers.connection, "close", "the last response says the connection closes");
});

t.test("a request cut short by the client's close is dropped, earlier ones answered", async (t) => {
  const { output } = await inject(echo, get("/whole") + "POST /cut HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc");
  const rs = splitResponses(output);
  t.same(rs.map((r) => r.body), ["GET /whole "]);
});

t.test("a body larger than the limit is refused from Content-Length, before it is read", async (t) => {
  const { output } = await inject(echo, ["POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 2000\r\nExpect: 100-continue\r\n\r\n"], {
    limits: { maxBodyBytes: 1000 },
  });
  const text = output.toString("latin1");
  t.notMatch(text, /100 Continue/, "no 100 Continue for a body that will be refused");
  const rs = splitResponses(output);
  t.equal(rs[0]!.status, 413);
});

t.test("maxUnanswered must be a whole number, 1 or more: 0 would answer nothing, NaN bound nothing", async (t) => {
  for (const bad of [0, -1, 1.5, Number.NaN, Infinity]) {
    t.throws(() => createServer(echo, { maxUnanswered: bad }), RangeError, `createServer refuses ${bad}`);
    t.throws(() => inject(echo, get("/a"), { maxUnanswered: bad }), RangeError, `inject refuses ${bad}`);
  }
  const { output } = await inject(echo, get("/a") + get("/b"), { maxUnanswered: 2 });
  t.same(splitResponses(output).map((r) => r.status), [200, 200], "2 is taken");
});
