// Bytes allocated per request on the hot path, measured in process.
//
//   npm run bench:alloc -- [--path /api/v1/status] [--requests N] [--warmup N] [--windows N]
//   (npm run bench -- --alloc: node --expose-gc --min-semi-space-size=S --max-semi-space-size=S dist/bench/alloc.js ...,
//   where S is 256 (MB) for 4,096 requests or more, the default among them, and 64 KB a request below that)
//
// Runs N requests through the real Connection (parser, router, handler,
// writer) over an in-memory socket whose output is dropped, twice: one
// request per read (a client that waits for each response) and 10 per read
// (pipelining). The young generation is made large enough that no
// collection runs during a measurement (checked: a collection would free
// garbage and hide it), so the heap's growth divided by N is what one
// request allocated (the median of --windows such windows, three unless
// told, after --warmup requests, 5,000 unless told, that compile the path). The same is
// measured for a trivial server over the same in-memory socket (one canned
// write per read): what the stream machinery costs, which a real socket
// costs as well; startline's own share is the difference.
//
// Then a bare listener (`res.end("hi")` to GET /), three ways over the same
// in-memory socket: on startline/node (src/node/: node:http's interface on
// the engine, its own Connection as it listens), on node:http itself (its
// Server takes any Duplex as a connection), and the engine's own answer to
// the same request (a handler that returns "hi"), so that what the adapter
// costs a request on top of the engine, and against node:http, is printed;
// then Express 5 and Koa 3 answering "hi", on startline/node and on node:http.
// The latest figures are in docs/benchmarks.md. Where the bytes are
// allocated, V8's sampling heap profiler says when it is asked to keep the
// objects later collected (node:inspector's HeapProfiler.startSampling with
// includeObjectsCollectedByMinorGC and ...MajorGC, around a run like these):
// node --heap-prof reports only what is still alive when it stops.

import http from "node:http";
import { PerformanceObserver } from "node:perf_hooks";
import { Duplex } from "node:stream";
import { createApp } from "../src/app.js";
import { Connection } from "../src/http/connection/connection.js";
import { DEFAULT_CONNECTION_OPTIONS } from "../src/http/connection/options.js";
import { DEFAULT_LIMITS } from "../src/http/parse/limits.js";
import type { Service } from "../src/http/connection/service.js";
import type { HttpServer } from "../src/http/connection/server.js";
import { createServer as createOnStartline } from "../src/node/index.js";
import { createMemoryStore } from "../src/store/memory.js";
import { seed } from "../src/store/seed.js";
import { option } from "./option.js";

const maybeGc = (globalThis as { gc?: () => void }).gc;
if (maybeGc === undefined) throw new Error("run with node --expose-gc --min-semi-space-size=256 --max-semi-space-size=256 (npm run bench -- --alloc does)");
const gc: () => void = maybeGc;


/** When each collection began (performance.now()): the observer reports them a while later, the forced ones included. */
const collections: number[] = [];
new PerformanceObserver((list) => collections.push(...list.getEntries().map((e) => e.startTime))).observe({ entryTypes: ["gc"] });

const byteLength = (chunk: string | Uint8Array) => (typeof chunk === "string" ? Buffer.byteLength(chunk) : chunk.byteLength);

/** An in-memory socket as net.Socket behaves for the writer (strings are not turned into Buffers); counts the bytes written. */
function memorySocket(onBytes: (n: number) => void): Duplex {
  return new Duplex({
    decodeStrings: false,
    read() {},
    write(chunk: string | Uint8Array, _encoding, callback) {
      onBytes(byteLength(chunk));
      callback();
    },
    writev(chunks: Array<{ chunk: string | Uint8Array }>, callback) {
      for (const { chunk } of chunks) onBytes(byteLength(chunk));
      callback();
    },
  });
}

/** A server on an in-memory socket. */
type Serve = (socket: Duplex) => void;

/**
 * Sends `requests` requests, `perRead` to a read, and resolves with the bytes
 * written once `expectBytes` were (or at once, when it is 0, with what the
 * first turn wrote).
 */
function run(serve: Serve, request: Buffer, requests: number, perRead: number, expectBytes = 0): Promise<number> {
  return new Promise((resolve) => {
    const reads = Math.ceil(requests / perRead);
    let written = 0;
    const socket = memorySocket((n) => {
      written += n;
      if (written === expectBytes) resolve(written);
    });
    serve(socket);
    if (expectBytes === 0) setImmediate(() => resolve(written));
    const chunk = Buffer.concat(Array.from({ length: perRead }, () => request));
    let sent = 0;
    // A few hundred reads per turn of the event loop, so that callbacks queued by the writes run in between.
    const step = () => {
      for (let i = 0; i < 256 && sent < reads; i++, sent++) socket.push(chunk);
      if (sent < reads) setImmediate(step);
    };
    step();
  });
}

/**
 * How many windows a measurement takes the median of: three unless told (one window differs from the next by
 * up to 100 bytes, as V8 compiles or recompiles something in it). Each begins with a forced full collection,
 * sixty of them in a run of three: a test that asks only that the command line arrives takes one.
 */
const WINDOWS = Number(option("--windows", "3"));
if (!Number.isInteger(WINDOWS) || WINDOWS < 1) throw new Error(`--windows: a whole number of windows, 1 or more, not ${option("--windows", "3")}`);

/** Bytes allocated per request, the median of WINDOWS windows, or an error when a collection ran meanwhile. */
async function measure(serve: Serve, request: Buffer, requests: number, perRead: number, warmup: number): Promise<number> {
  const perResponse = await run(serve, request, 1, 1);
  await run(serve, request, warmup, perRead, warmup * perResponse); // warm up: compile the path
  const windows = [];
  for (let i = 0; i < WINDOWS; i++) windows.push(await window(serve, request, requests, perRead, perResponse));
  return windows.sort((a, b) => a - b)[Math.floor(WINDOWS / 2)]!;
}

async function window(serve: Serve, request: Buffer, requests: number, perRead: number, perResponse: number): Promise<number> {
  gc();
  await new Promise((resolve) => setTimeout(resolve, 10));
  const from = performance.now();
  const before = process.memoryUsage().heapUsed;
  await run(serve, request, requests, perRead, requests * perResponse);
  const after = process.memoryUsage().heapUsed;
  const to = performance.now();
  // Collections are reported later, by when they began: the forced one before `from` is not counted, however late it comes.
  await new Promise((resolve) => setTimeout(resolve, 100));
  if (collections.some((at) => at >= from && at <= to)) throw new Error("a garbage collection ran during the measurement: raise --min-semi-space-size, or lower --requests");
  return (after - before) / requests;
}

async function main(): Promise<void> {
  const requests = Number(option("--requests", "20000"));
  // Twenty measurements warm up first: at 5,000 requests each, most of a short run (the tests' --requests 300).
  const warmup = Number(option("--warmup", "5000"));
  const path = option("--path", "/api/v1/status");
  const store = createMemoryStore();
  await seed(store);
  const app: Service = createApp({ store });
  // What wrk and autocannon send.
  const request = Buffer.from(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n`, "latin1");

  // As the server runs it with QUIET=1: no access log, so no onExchange hook.
  const startline: Serve = (socket) => {
    new Connection(socket, app, { ...DEFAULT_CONNECTION_OPTIONS, limits: DEFAULT_LIMITS }, {
      onHandlerError: (e) => console.error(e),
      onClose: () => {},
    });
  };
  // The least a server can do over the same socket: one canned write per read (256 bytes a request), no parsing.
  const canned = [1, 10].map((n) => Buffer.alloc(256 * n, 0x61));
  const trivialFor =
    (sent: Buffer): Serve =>
    (socket) =>
      socket.on("data", (chunk: Buffer) => socket.write(canned[chunk.length === sent.length ? 0 : 1]!));
  const trivial = trivialFor(request);

  for (const perRead of [1, 10]) {
    const total = await measure(startline, request, requests, perRead, warmup);
    const base = await measure(trivial, request, requests, perRead, warmup);
    console.log(
      `${path}, ${perRead} request${perRead === 1 ? "" : "s"} per read: ${total.toFixed(0)} bytes allocated per request; ` +
        `the in-memory socket's own share ${base.toFixed(0)}, startline's ${(total - base).toFixed(0)} (${requests} requests)`,
    );
  }

  // A bare listener, as bench/servers/node-apps.ts serves it (APP=bare), and the engine's answer to the same request.
  const bare = Buffer.from("GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n", "latin1");
  const listener = (_req: http.IncomingMessage, res: http.ServerResponse) => res.end("hi");
  const adapter = onStartline(listener);
  const nodeHttp = onNodeHttp(listener);
  const engineHandler = () => ({ status: 200, headers: { "content-type": "text/plain" }, body: "hi" });
  const engineBare: Serve = (socket) => {
    new Connection(socket, { handle: engineHandler }, { ...DEFAULT_CONNECTION_OPTIONS, limits: DEFAULT_LIMITS }, {
      onHandlerError: (e) => console.error(e),
      onClose: () => {},
    });
  };
  for (const perRead of [1, 10]) {
    const [onAdapter, onEngine, onHttp, base] = [
      await measure(adapter, bare, requests, perRead, warmup),
      await measure(engineBare, bare, requests, perRead, warmup),
      await measure(nodeHttp, bare, requests, perRead, warmup),
      await measure(trivialFor(bare), bare, requests, perRead, warmup),
    ];
    console.log(
      `bare listener, ${perRead} request${perRead === 1 ? "" : "s"} per read, bytes allocated per request: ` +
        `startline/node ${onAdapter.toFixed(0)}, node:http ${onHttp.toFixed(0)}, the engine's own answer ${onEngine.toFixed(0)}; ` +
        `less the in-memory socket's share (${base.toFixed(0)}): ${(onAdapter - base).toFixed(0)}, ${(onHttp - base).toFixed(0)}, ${(onEngine - base).toFixed(0)} (${requests} requests)`,
    );
  }

  // Express 5 and Koa 3 answering "hi", as bench/servers/node-apps.ts serves them (APP=express, APP=koa), on
  // startline/node and on node:http. A tenth as many requests: each allocates 10 to 25 KB, and no collection may
  // run during a window.
  const express = (await import("express")).default;
  const expressApp = express();
  expressApp.get("/", (_req, res) => {
    res.send("hi");
  });
  const Koa = (await import("koa")).default;
  const koaApp = new Koa();
  koaApp.use((ctx) => {
    ctx.body = "hi";
  });
  const apps: [string, Listener][] = [
    ["Express 5", expressApp as unknown as Listener],
    ["Koa 3", koaApp.callback() as unknown as Listener],
  ];
  const few = Math.max(1, Math.round(requests / 10));
  for (const [name, app] of apps) {
    const [ours, nodes] = [onStartline(app), onNodeHttp(app)];
    for (const perRead of [1, 10]) {
      const [onAdapter, onHttp] = [await measure(ours, bare, few, perRead, warmup), await measure(nodes, bare, few, perRead, warmup)];
      console.log(
        `${name}, ${perRead} request${perRead === 1 ? "" : "s"} per read, bytes allocated per request: ` +
          `startline/node ${onAdapter.toFixed(0)}, node:http ${onHttp.toFixed(0)} (${few} requests)`,
      );
    }
  }
}

type Listener = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/**
 * `listener` on startline/node: the engine's server behind it, made as
 * listen() makes it (with its options), never listening; a socket emitted as
 * its listener's 'connection' is served as an accepted one is.
 */
function onStartline(listener: Listener): Serve {
  const engine = (createOnStartline(listener) as unknown as { start(): HttpServer }).start();
  return (socket) => void engine.listener.emit("connection", socket);
}

/** `listener` on node:http, which takes any Duplex as a connection. */
function onNodeHttp(listener: Listener): Serve {
  const server = http.createServer(listener);
  return (socket) => void server.emit("connection", socket);
}

// A run that never sees its bytes leaves nothing for the event loop to wait on: node would exit quietly, with 0.
let finished = false;
process.on("beforeExit", () => {
  if (finished) return;
  console.error("a measurement never saw the bytes it expected: a server answered differently, or not at all");
  process.exitCode = 1;
});

main().then(() => (finished = true), (error: unknown) => {
  console.error(error);
  process.exit(1);
});
