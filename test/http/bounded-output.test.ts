// A connection holds at most its request's bytes plus a fixed output budget
// (OUTPUT_BUDGET, src/http/connection/send-body.ts), however large the
// response and however long the client does not read: a body is handed to
// the socket a piece at a time, each once the socket wants more. And a
// client cut for not reading is reset, so that the kernel drops what it
// still queued for it.

import t from "tap";
import net from "node:net";
import { readFileSync } from "node:fs";
import { once } from "node:events";
import { Duplex } from "node:stream";
import { Connection } from "../../src/http/connection/connection.js";
import { DEFAULT_CONNECTION_OPTIONS } from "../../src/http/connection/options.js";
import { OUTPUT_BUDGET } from "../../src/http/connection/send-body.js";
import type { Handler, Service } from "../../src/http/connection/service.js";
import type { Response } from "../../src/http/message/response.js";
import { DEFAULT_LIMITS } from "../../src/http/parse/parser.js";
import { docsApp } from "../helpers/app.js";
import { happens } from "../helpers/hang.js";
import { stopsMoving } from "../helpers/quiet.js";
import { dechunk, listen } from "../helpers/wire.js";

const MiB = 1024 * 1024;

/**
 * A client whose kernel buffers take `takes` bytes and which then stops
 * reading: later writes are never acknowledged until read(). Records the
 * most the connection ever had queued on it (writableLength).
 */
function stallingClient(takes: number) {
  let room = takes;
  let most = 0;
  let writes = 0;
  // What arrived, in one buffer that doubles when full: the tests look at all of it whenever the
  // connection waits, and joining the pieces again at each look (tens of MiB, scores of times) cost more
  // CPU than everything else in this file.
  let received = Buffer.allocUnsafe(MiB);
  let length = 0;
  const held: (() => void)[] = [];
  const take = (chunk: Buffer | string, callback: () => void) => {
    writes++;
    most = Math.max(most, wire.writableLength);
    // A copy, as the kernel takes one: once a write is acknowledged, its producer may reuse the bytes.
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    if (length + bytes.length > received.length) {
      const larger = Buffer.allocUnsafe(Math.max(2 * received.length, length + bytes.length));
      received.copy(larger, 0, 0, length);
      received = larger;
    }
    bytes.copy(received, length);
    length += bytes.length;
    if (room >= bytes.length) {
      room -= bytes.length;
      callback();
    } else {
      room = 0;
      held.push(callback);
    }
  };
  const wire = new Duplex({
    allowHalfOpen: true,
    read() {},
    write(chunk: Buffer, _encoding, callback) {
      take(chunk, callback);
    },
    writev(items, callback) {
      for (let i = 0; i < items.length - 1; i++) take(items[i]!.chunk as Buffer, () => {});
      take(items[items.length - 1]!.chunk as Buffer, callback);
    },
  });
  return {
    wire,
    most: () => Math.max(most, wire.writableLength),
    /** Turns of the event loop until 20 pass with no write: the connection waits for the client. */
    async quiet(): Promise<void> {
      let seen = -1;
      let still = 0;
      while (still < 20) {
        await new Promise((r) => setImmediate(r));
        if (writes === seen) still++;
        else [seen, still] = [writes, 0];
      }
    },
    /** The client reads everything from now on; resolves with all it got once `done` says the answer is whole. */
    async readAll(done: (bytes: Buffer) => boolean): Promise<Buffer> {
      room = Infinity;
      for (const callback of held.splice(0)) callback();
      // Looked at whenever a turn passes with no write: the connection then waits for something.
      let seen = -1;
      for (;;) {
        await new Promise((r) => setImmediate(r));
        if (writes === seen) {
          const all = received.subarray(0, length);
          if (done(all)) return all;
        }
        seen = writes;
      }
    },
  };
}

function connect(service: Handler | Service, client: ReturnType<typeof stallingClient>, request: string | Buffer): void {
  new Connection(client.wire, service, { ...DEFAULT_CONNECTION_OPTIONS, limits: { ...DEFAULT_LIMITS, maxBodyBytes: 4 * MiB } }, { onHandlerError: () => {}, onClose: () => {} });
  client.wire.push(request);
}

const GET = "GET /big HTTP/1.1\r\nHost: t\r\n\r\n";
/** Head and body of one response, however framed. */
function body(bytes: Buffer): Buffer | null {
  const end = bytes.indexOf("\r\n\r\n");
  if (end === -1) return null;
  const head = bytes.toString("latin1", 0, end);
  if (/\r\nTransfer-Encoding: chunked/i.test(head)) {
    try {
      return dechunk(bytes, end + 4).content;
    } catch {
      return null;
    }
  }
  const length = Number(/\r\nContent-Length: (\d+)/i.exec(head)![1]);
  return bytes.length >= end + 4 + length ? bytes.subarray(end + 4, end + 4 + length) : null;
}

const STATUS = "HTTP/1.1 200";
/** How many responses' status lines are in `bytes`. */
function answers(bytes: Buffer): number {
  let count = 0;
  for (let at = bytes.indexOf(STATUS); at !== -1; at = bytes.indexOf(STATUS, at + STATUS.length)) count++;
  return count;
}

/**
 * For readAll: true once `n` responses have come, the last one whole. It looks for status lines only in
 * the bytes it has not seen (readAll gives all of them at every look: tens of MiB, searched scores of times).
 */
function whole(n: number): (bytes: Buffer) => boolean {
  let count = 0;
  let last = -1;
  let from = 0;
  return (bytes) => {
    for (let at = bytes.indexOf(STATUS, from); at !== -1; at = bytes.indexOf(STATUS, at + STATUS.length)) [count, last] = [count + 1, at];
    // A status line may have arrived in part: looked for again from where it could begin.
    from = Math.max(last === -1 ? 0 : last + STATUS.length, bytes.length - STATUS.length + 1);
    return count === n && body(bytes.subarray(last)) !== null;
  };
}

const KERNEL = 256 * 1024;
/**
 * How many large answers the in-process pipelines ask for: thirteen times what the budget lets be made
 * while the client reads nothing (about 2.4 of 1 MiB), so a server that made them as it read the
 * requests is seen to; twice as many only made the file slower.
 */
const DEPTH = 32;

/** The most a TCP socket's send or receive buffer may grow to on this machine (Linux: min, default, max). */
function kernelMax(which: "tcp_wmem" | "tcp_rmem"): number {
  return Number(readFileSync(`/proc/sys/net/ipv4/${which}`, "utf8").trim().split(/\s+/)[2]);
}

t.test("whatever the response's size and kind, what waits for a client that stopped reading stays within OUTPUT_BUDGET", async (t) => {
  const cases: [string, () => Response["body"], number][] = [
    ["an 8 MiB string", () => "x".repeat(8 * MiB), 8 * MiB],
    ["6 MiB of 3-byte characters", () => "€".repeat(2 * MiB), 6 * MiB],
    ["8 MiB of bytes", () => Buffer.alloc(8 * MiB, 0x61), 8 * MiB],
    [
      "a stream of 1 MiB pieces, 16 of them",
      () =>
        (async function* () {
          for (let i = 0; i < 16; i++) yield "y".repeat(MiB);
        })(),
      16 * MiB,
    ],
  ];
  for (const [name, make, size] of cases) {
    const client = stallingClient(KERNEL);
    connect(() => ({ status: 200, body: make() }), client, GET);
    await client.quiet();
    t.ok(client.most() <= OUTPUT_BUDGET, `${name}: at most ${client.most()} bytes queued while the client does not read (budget ${OUTPUT_BUDGET})`);
    const got = body(await client.readAll((b) => body(b) !== null))!;
    t.equal(got.length, size, `${name}: all of it, once the client reads`);
  }
});

t.test("a stream is asked for its next piece only when the socket wants it", async (t) => {
  let pulled = 0;
  const client = stallingClient(KERNEL);
  connect(
    () => ({
      status: 200,
      body: (async function* () {
        for (let i = 0; i < 1000; i++) {
          pulled++;
          yield "z".repeat(64 * 1024);
        }
      })(),
    }),
    client,
    GET,
  );
  await client.quiet();
  // The kernel's share, the budget, and the piece being written.
  t.ok(pulled <= (KERNEL + OUTPUT_BUDGET) / (64 * 1024) + 1, `${pulled} of 1000 pieces made while the client does not read`);
  t.ok(client.most() <= OUTPUT_BUDGET);
});

t.test("the echo of 1 MiB of control bytes (6 MB of JSON) is rendered as the client reads it", async (t) => {
  const { app } = await docsApp();
  const client = stallingClient(KERNEL);
  const content = Buffer.alloc(MiB, 0x01);
  connect(app, client, Buffer.concat([Buffer.from(`POST /api/echo HTTP/1.1\r\nHost: t\r\nContent-Length: ${MiB}\r\n\r\n`, "latin1"), content]));
  await client.quiet();
  t.ok(client.most() <= OUTPUT_BUDGET, `at most ${client.most()} bytes queued`);
  const echoed = JSON.parse(body(await client.readAll((b) => body(b) !== null))!.toString("utf8"));
  t.equal(echoed.body.content, content.toString("utf8"));
});

t.test("pipelined responses just under a piece each: the client's back-pressure stops the reading, the budget holds", async (t) => {
  const client = stallingClient(KERNEL);
  const piece = "p".repeat(20 * 1024);
  connect(() => ({ status: 200, body: piece }), client, GET.repeat(64));
  await client.quiet();
  t.ok(client.most() <= OUTPUT_BUDGET, `at most ${client.most()} bytes queued`);
  const all = await client.readAll(whole(64));
  t.equal(all.toString("latin1").split(piece).length - 1, 64, "every response, once the client reads");
});

t.test("over a socket: a client cut for not reading is reset, and the kernel drops what it queued for it", async (t) => {
  // A paused client socket does not see its peer go; the trace hook's closed() is the server's side gone.
  let serverClosed!: () => void;
  const cut = new Promise<void>((resolve) => (serverClosed = resolve));
  const quiet = () => {};
  const trace = () => ({ span: quiet, received: quiet, head: quiet, request: quiet, error: quiet, response: quiet, closed: () => serverClosed() });
  const running = await listen(() => ({ status: 200, body: "r".repeat(32 * MiB) }), { sendTimeoutMs: 100, trace });
  t.teardown(() => running.close());
  const socket = net.connect(running.port, "127.0.0.1");
  await once(socket, "connect");
  socket.pause();
  let received = 0;
  socket.on("data", (d: Buffer) => (received += d.length));
  socket.on("error", () => {});
  socket.write(GET);
  await happens(t, cut, "the server cuts the client that does not read");
  socket.resume();
  await once(socket, "close");
  // Closed gracefully, the server's kernel would still deliver its send queue (megabytes on loopback)
  // before the FIN; reset, the client has only what had reached its own receive buffer.
  t.ok(received < MiB, `the client got ${received} bytes after the cut, not the server's queue`);
});

t.test("pipelined requests for large answers, from a client that does not read: the answers waiting behind the one being sent stay within a budget too", async (t) => {
  // DEPTH requests of 31 bytes each, in one write, each asking for a fresh 1 MiB
  // answer (as /api/lab/bytes/1048576 does), and a client that reads nothing:
  // every answer made while the client reads nothing is held whole in memory
  // (the one being sent, and those queued behind it in order). The requests
  // cost 1 KiB; what waits for the client must stay near the budget, not grow
  // with the pipeline's depth (32 MiB here), whether the handler answers at
  // once or later.
  for (const kind of ["sync", "async"] as const) {
    let made = 0;
    const handler: Handler = () => {
      made++;
      const response: Response = { status: 200, body: Buffer.alloc(MiB, 0x62) };
      return kind === "sync" ? response : Promise.resolve(response);
    };
    const client = stallingClient(KERNEL);
    connect(handler, client, GET.repeat(DEPTH));
    await client.quiet();
    const bound = (KERNEL + OUTPUT_BUDGET) / MiB + 2;
    t.ok(made <= bound, `${kind} handler: ${made} answers of 1 MiB made while the client reads nothing (at most ${bound} held: the one being sent and the next)`);
    const all = await client.readAll(whole(DEPTH));
    t.equal(answers(all), DEPTH, `${kind}: every answer, once the client reads`);
  }
});

t.test("large answers pipelined behind one that comes later are not made before it: nothing waits whole behind an answer not yet known", async (t) => {
  // The first request's handler answers later (a slow store, /api/lab/delay);
  // the DEPTH - 1 behind it answer at once with 1 MiB each. Made as they were
  // read, all 31 would wait whole in memory behind the first (31 MiB for 1 KiB
  // of requests), before anything could be sent.
  let later!: (response: Response) => void;
  let made = 0;
  const handler: Handler = (request) => {
    if (request.path === "/slow") return new Promise<Response>((resolve) => (later = resolve));
    made++;
    return { status: 200, body: Buffer.alloc(MiB, 0x62) };
  };
  const client = stallingClient(KERNEL);
  connect(handler, client, "GET /slow HTTP/1.1\r\nHost: t\r\n\r\n" + GET.repeat(DEPTH - 1));
  await client.quiet();
  t.equal(made, 0, "no answer is made behind one still being made");
  later({ status: 200, body: "slow" });
  await client.quiet();
  const bound = (KERNEL + OUTPUT_BUDGET) / MiB + 2;
  t.ok(made <= bound, `${made} answers of 1 MiB made once the first is out, while the client reads nothing (at most ${bound})`);
  const all = await client.readAll(whole(DEPTH));
  t.equal(answers(all), DEPTH, "every answer, in order, once the client reads");
  t.match(all.toString("latin1", 0, 200), /\r\n\r\nslow/, "the first answer first");
});

t.test("over a socket: large answers pipelined behind one that comes later are made only as the client reads", async (t) => {
  let later!: (response: Response) => void;
  let slowRuns!: () => void;
  const running = new Promise<void>((resolve) => (slowRuns = resolve));
  let made = 0;
  const handler: Handler = (request) => {
    if (request.path === "/slow") {
      slowRuns();
      return new Promise<Response>((resolve) => (later = resolve));
    }
    made++;
    return { status: 200, body: Buffer.alloc(MiB, 0x62) };
  };
  // The answers go out until the kernel's buffers on both sides are full (at most their sizes' maxima), then
  // nothing more is made: at most `bound`. Twice as many are asked for, so that a server making them as it
  // reads them is seen to, whatever this machine's buffers.
  const bound = Math.ceil((kernelMax("tcp_wmem") + kernelMax("tcp_rmem")) / MiB) + 2;
  const asked = 2 * bound + 1;
  const s = await listen(handler);
  t.teardown(s.close);
  const socket = net.connect(s.port, "127.0.0.1");
  await once(socket, "connect");
  socket.pause(); // reads nothing until the end
  // The last asks to close: the server's FIN marks the end of every answer.
  socket.write("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n" + GET.repeat(asked - 1) + "GET /big HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  await happens(t, running, "the first handler runs");
  later({ status: 200, body: "slow" });
  const stalled = await happens(t, stopsMoving(() => made), "the server makes answers, then stops");
  t.ok(stalled <= bound, `${stalled} answers of 1 MiB made while the client reads nothing: at most what the kernel holds and two (${bound}), of ${asked} asked for`);
  let bytes = 0;
  socket.on("data", (d: Buffer) => (bytes += d.length));
  const ended = once(socket, "end");
  socket.resume();
  await happens(t, ended, "every answer, then the server's FIN");
  t.equal(made, asked, "every request answered once the client reads");
  t.ok(bytes > asked * MiB, `every body arrived (${bytes} bytes)`);
  socket.destroy();
});
