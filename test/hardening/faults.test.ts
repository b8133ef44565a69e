// Handler faults over real sockets: a handler that throws, rejects, or returns
// something the writer cannot send gives a 500 problem with no message or
// stack in it, the error goes to the log, and the connection and the server
// keep working. test/http/connection.test.ts covers the in-memory part; here
// it is over TCP, with the server's default logger, and in a separate server
// process (the built dist/, as `npm test` builds it first), so that a fault
// that would take the process down is seen as such.

import t, { type Test } from "tap";
import net from "node:net";
import { once } from "node:events";
import { spawn } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { Handler } from "../../src/http/connection/service.js";
import type { Response } from "../../src/http/message/response.js";
import { listen, readUntil, splitResponses, type RawResponse } from "../helpers/wire.js";
import { ROOT } from "../helpers/root.js";

/**
 * Open a connection, send `chunks`, half-close if asked, and collect
 * everything until the server closes; a reset ends it too (no throw).
 */
async function talk(port: number, chunks: readonly string[]): Promise<Buffer> {
  const socket = net.connect(port, "127.0.0.1");
  const received: Buffer[] = [];
  socket.on("error", () => {});
  socket.on("data", (d: Buffer) => received.push(d));
  const closed = once(socket, "close");
  await once(socket, "connect").catch(() => {});
  for (const c of chunks) socket.write(c);
  await closed;
  return Buffer.concat(received);
}

const get = (p: string, extra = "") => `GET ${p} HTTP/1.1\r\nHost: t\r\n${extra}\r\n`;
const SECRET = "secret-internals /srv/app/handler.js:12";

/** Every way a handler can fail, by path. */
const faulty: Handler = (req): Response | Promise<Response> => {
  switch (req.path) {
    case "/throw":
      throw new Error(SECRET);
    case "/reject":
      return Promise.reject(new Error(SECRET));
    case "/async-throw":
      return (async () => {
        await null;
        throw new TypeError(SECRET);
      })();
    case "/throw-string":
      throw SECRET; // eslint-disable-line no-throw-literal
    case "/throw-null":
      throw null; // eslint-disable-line no-throw-literal
    case "/reject-undefined":
      return Promise.reject(undefined); // eslint-disable-line prefer-promise-reject-errors
    case "/undefined":
      return undefined as unknown as Response;
    case "/bad-header":
      return { status: 200, headers: { "X-Leak": `a\r\nSet-Cookie: ${SECRET}` }, body: "x" };
    case "/bad-status":
      return { status: 1000, body: SECRET };
    case "/status-103":
      // A 1xx is an interim response: written as the answer, the client would take the next response as this one's.
      return { status: 103, headers: { Link: "</x>; rel=preload" } };
    case "/number-body":
      return { status: 200, body: 42 as unknown as string };
    case "/object-body":
      return { status: 200, body: { secret: SECRET } as unknown as string };
    default:
      return { status: 200, headers: { "Content-Type": "text/plain" }, body: `ok ${req.path}` };
  }
};
const FAULTS = ["/throw", "/reject", "/async-throw", "/throw-string", "/throw-null", "/reject-undefined", "/undefined", "/bad-header", "/bad-status"];

function checkInternalError(t: Test, r: RawResponse | undefined, path: string): void {
  t.equal(r?.status, 500, `${path}: 500`);
  t.equal(r?.headers["content-type"], "application/problem+json", `${path}: a problem`);
  const body = JSON.parse(r?.body ?? "{}");
  t.equal(body.status, 500);
  t.equal(body.instance, path, `${path}: instance`);
  t.notMatch(r?.body ?? "", /secret|handler\.js|Set-Cookie|\bat \w/, `${path}: no message or stack trace in the body`);
  t.notOk(r?.headers["set-cookie"], `${path}: nothing injected`);
}

t.test("every kind of handler fault: 500 problem, logged, and the same connection keeps serving", async (t) => {
  const logged: { error: unknown; target: string | undefined }[] = [];
  const s = await listen(faulty, { onHandlerError: (error, request) => logged.push({ error, target: request?.target }) });
  t.teardown(s.close);
  // All pipelined on one keep-alive connection, each fault followed by a good request.
  const socket = net.connect(s.port, "127.0.0.1");
  await once(socket, "connect");
  const received: Buffer[] = [];
  socket.on("data", (d: Buffer) => received.push(d));
  socket.write(FAULTS.map((p) => get(p) + get(`/after${p}`)).join(""));
  await readUntil(socket, `ok /after${FAULTS[FAULTS.length - 1]}`);
  // Still open: one more request on the same connection, which then closes it.
  socket.write(get("/last", "Connection: close\r\n"));
  await once(socket, "close");
  const rs = splitResponses(Buffer.concat(received));
  t.equal(rs.length, FAULTS.length * 2 + 1, "one response per request, in order");
  FAULTS.forEach((p, i) => {
    checkInternalError(t, rs[2 * i], p);
    t.equal(rs[2 * i + 1]?.body, `ok /after${p}`, `the request after ${p} is served`);
    t.notOk(rs[2 * i]?.headers.connection, `${p}: the connection is not closed for it`);
  });
  t.equal(rs[rs.length - 1]?.body, "ok /last");
  t.same(
    logged.map((l) => l.target).sort(),
    [...FAULTS].sort(),
    "each fault reaches the error log once, with its request (rejections are logged when they settle)",
  );
  t.match(String((logged.find((l) => l.target === "/throw")?.error as Error).message), SECRET, "the log gets the error itself");
  // A new connection is served too.
  t.equal(splitResponses(await talk(s.port, [get("/fresh", "Connection: close\r\n")]))[0]?.body, "ok /fresh");
});

t.test("a handler response the writer cannot send as a final response is a 500, never written", async (t) => {
  const logged: unknown[] = [];
  const s = await listen(faulty, { onHandlerError: (error) => logged.push(error) });
  t.teardown(s.close);
  const paths = ["/status-103", "/number-body", "/object-body"];
  const bytes = await talk(s.port, [paths.map((p) => get(p) + get(`/after${p}`)).join("") + get("/last", "Connection: close\r\n")]);
  const text = bytes.toString("latin1");
  t.notMatch(text, /Content-Length: (undefined|NaN)/, "never a Content-Length that is not a number");
  t.notMatch(text, /HTTP\/1\.1 1\d\d /, "never a 1xx in place of the final response");
  const rs = splitResponses(bytes);
  t.same(
    rs.map((r) => r.status),
    [500, 200, 500, 200, 500, 200, 200],
    "a 500 for each, and the request after each answered by its own response",
  );
  t.same(
    rs.filter((r) => r.status === 200).map((r) => r.body),
    [...paths.map((p) => `ok /after${p}`), "ok /last"],
    "the responses stay in step with the requests",
  );
  t.equal(logged.length, 3, "each is logged");
});

t.test("the default logger writes the error, with the request, to stderr", async (t) => {
  const lines: unknown[][] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => void lines.push(args);
  t.teardown(() => {
    console.error = original;
  });
  const s = await listen(faulty, { onHandlerError: undefined });
  t.teardown(s.close);
  const rs = splitResponses(await talk(s.port, [get("/throw") + get("/reject", "Connection: close\r\n")]));
  console.error = original;
  checkInternalError(t, rs[0], "/throw");
  checkInternalError(t, rs[1], "/reject");
  t.equal(lines.length, 2, "two log entries");
  t.match(String(lines[0]?.[0]), /^startline: handler error while handling GET \/throw:/);
  t.match((lines[0]?.[1] as Error).message, SECRET, "the error, stack and all, goes to the log");
  t.match(String(lines[1]?.[0]), /^startline: handler error while handling GET \/reject:/);
});

// ---- A separate server process with the default logger ----


const SERVER_JS = pathToFileURL(path.join(ROOT, "dist", "src", "http", "connection", "server.js")).href;

/**
 * Handlers throwing values that are awkward to log: the log line must not be
 * able to take the server down. Runs in the child process (no imports).
 */
const CHILD = `
import { createServer } from ${JSON.stringify(SERVER_JS)};
const hostile = {
  "/stack-getter": () => { const e = new Error("x"); Object.defineProperty(e, "stack", { get() { throw new Error("stack getter"); } }); return e; },
  "/message-getter": () => { const e = new Error("x"); Object.defineProperty(e, "message", { get() { throw new Error("message getter"); } }); return e; },
  "/inspect-throws": () => ({ [Symbol.for("nodejs.util.inspect.custom")]() { throw new Error("inspect"); } }),
  "/proxy": () => new Proxy({}, { get() { throw new Error("trap"); }, ownKeys() { throw new Error("trap"); }, getPrototypeOf() { throw new Error("trap"); } }),
  "/plain": () => new Error("plain"),
};
const server = createServer(async (req) => {
  const make = hostile[req.path];
  if (make === undefined) return { status: 200, body: "ok " + req.path };
  if (req.query === "async") { await null; throw make(); }
  throw make();
});
const address = await server.listen(0, "127.0.0.1");
console.log("port " + address.port);
`;

t.test("a server process survives handler errors that cannot be logged", async (t) => {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== "NODE_OPTIONS"));
  const child = spawn(process.execPath, ["--input-type=module", "-e", CHILD], { env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  t.teardown(() => {
    if (child.exitCode === null) child.kill("SIGKILL");
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const [line] = (await once(child.stdout, "data")) as [Buffer];
  const port = Number(/port (\d+)/.exec(line.toString())![1]);
  for (const p of ["/plain", "/stack-getter", "/message-getter", "/inspect-throws", "/proxy"]) {
    for (const query of ["", "?async"]) {
      const target = `${p}${query}`;
      const bytes = await talk(port, [get(target) + get("/next", "Connection: close\r\n")]).catch(() => Buffer.alloc(0));
      const rs = bytes.length === 0 ? [] : splitResponses(bytes);
      t.equal(rs[0]?.status, 500, `${target}: 500`);
      t.equal(rs[1]?.body, "ok /next", `${target}: the connection keeps serving`);
      t.equal(child.exitCode, null, `${target}: the server process is still running`);
      if (child.exitCode !== null) {
        t.fail(`the server process exited (code ${child.exitCode}); its stderr:\n${stderr.slice(0, 2000)}`);
        return;
      }
    }
  }
  t.match(stderr, /startline: handler error while handling GET \/plain:/, "logged");
  child.kill("SIGTERM");
  await exited;
});
