// Streamed response bodies: an async iterable sent as it is produced, with
// chunked framing, in order with pipelined responses, and with an honest end
// when the producer fails or the client leaves.

import t from "tap";
import net from "node:net";
import { once } from "node:events";
import type { Handler } from "../../src/http/connection/service.js";
import { inject } from "../../src/http/connection/inject.js";
import { listen, readUntil, splitResponses, talk } from "../helpers/wire.js";
import { happens } from "../helpers/hang.js";
import { stopsMoving } from "../helpers/quiet.js";

const get = (path: string, extra = "") => `GET ${path} HTTP/1.1\r\nHost: t\r\n${extra}\r\n`;

async function* pieces(parts: readonly string[]): AsyncGenerator<string> {
  for (const p of parts) {
    await Promise.resolve();
    yield p;
  }
}

/** Decodes a chunked body: the pieces and whether the last chunk came. */
function dechunk(raw: string): { body: string; complete: boolean } {
  let body = "";
  let i = 0;
  for (;;) {
    const eol = raw.indexOf("\r\n", i);
    if (eol === -1) return { body, complete: false };
    const size = parseInt(raw.slice(i, eol), 16);
    if (size === 0) return { body, complete: raw.slice(eol, eol + 4) === "\r\n\r\n" };
    body += raw.slice(eol + 2, eol + 2 + size);
    i = eol + 2 + size + 2;
  }
}

t.test("a streamed body goes out chunked, and a pipelined request is answered after it", async (t) => {
  const handler: Handler = (req) =>
    req.path === "/stream" ? { status: 200, headers: { "Content-Type": "text/plain" }, body: pieces(["one ", "two ", "", "three"]) } : { status: 200, body: "next" };
  const { output, exchanges } = await inject(handler, get("/stream") + get("/after", "Connection: close\r\n"));
  const text = output.toString("latin1");
  const split = text.indexOf("HTTP/1.1 200 OK", 1);
  const first = text.slice(0, split);
  t.match(first, /\r\nTransfer-Encoding: chunked\r\n/);
  t.notMatch(first, /Content-Length/);
  const { body, complete } = dechunk(first.slice(first.indexOf("\r\n\r\n") + 4));
  t.equal(body, "one two three", "the pieces in order; the empty one is skipped, not sent as a last chunk");
  t.ok(complete, "ends with the last chunk");
  t.match(text.slice(split), /\r\n\r\nnext$/, "the next response follows the stream, not inside it");
  t.equal(exchanges[0]!.bodyBytes, 13, "the access log counts the bytes sent");
});

t.test("HEAD of a streamed resource: the head only, and the producer never starts", async (t) => {
  let started = false;
  async function* lazy() {
    started = true;
    yield "never";
  }
  const { output } = await inject(() => ({ status: 200, body: lazy() }), "HEAD / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  const [r] = splitResponses(output, [true]);
  t.equal(r!.status, 200);
  t.equal(r!.headers["transfer-encoding"], "chunked", "the fields a GET would carry");
  t.equal(r!.body, "");
  t.notOk(started);
});

t.test("HTTP/1.0: no chunked coding; the body ends with the connection", async (t) => {
  const s = await listen(() => ({ status: 200, body: pieces(["a", "b", "c"]) }));
  t.teardown(s.close);
  const out = (await talk(s.port, ["GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"])).toString("latin1");
  t.notMatch(out, /Transfer-Encoding/i);
  t.match(out, /\r\nConnection: close\r\n/);
  t.match(out, /\r\n\r\nabc$/);
});

t.test("a producer that fails after the status line: the connection is cut, never a complete-looking body", async (t) => {
  const errors: unknown[] = [];
  async function* failing() {
    yield "partial";
    throw new Error("cursor broke");
  }
  const s = await listen((req) => (req.path === "/fail" ? { status: 200, body: failing() } : { status: 200, body: "after" }), {
    onHandlerError: (e) => errors.push(e),
  });
  t.teardown(s.close);
  const out = (await talk(s.port, [get("/fail") + get("/after")])).toString("latin1");
  const { body, complete } = dechunk(out.slice(out.indexOf("\r\n\r\n") + 4));
  t.equal(body, "partial");
  t.notOk(complete, "no last chunk: the client can tell the body is cut short");
  t.notMatch(out, /after/, "nothing after the broken response");
  t.equal(errors.length, 1, "the failure is logged");
});

t.test("a client that leaves mid-stream releases the producer", async (t) => {
  let released!: () => void;
  const releasedP = new Promise<void>((r) => (released = r));
  async function* endless() {
    try {
      for (let i = 0; ; i++) {
        await Promise.resolve();
        yield `piece ${i} `.repeat(100);
      }
    } finally {
      released();
    }
  }
  const s = await listen(() => ({ status: 200, body: endless() }));
  t.teardown(s.close);
  const socket = net.connect(s.port, "127.0.0.1");
  await once(socket, "connect");
  socket.write(get("/"));
  await readUntil(socket, "piece 1 ");
  socket.destroy();
  await happens(t, releasedP, "the iterable's finally ran after the client left: a cursor would be closed");
});

t.test("a large stream ready at once still lets another client through", async (t) => {
  const big = "x".repeat(64 * 1024);
  let sent = 0;
  async function* fast() {
    for (; sent < 400; sent++) yield big; // 25 MiB, every piece ready at once
  }
  const s = await listen((req) => (req.path === "/big" ? { status: 200, body: fast() } : { status: 200, body: "ok" }));
  t.teardown(s.close);
  const reader = net.connect(s.port, "127.0.0.1");
  await once(reader, "connect");
  reader.write(get("/big"));
  await readUntil(reader, "xxxx");
  const out = await talk(s.port, [get("/status", "Connection: close\r\n")]);
  t.match(out.toString("latin1"), /\r\n\r\nok$/);
  t.ok(sent < 400, `answered while the stream was still being produced (${sent} of 400 pieces)`);
  reader.destroy();
});

/**
 * A body of `count` pieces of `size` bytes, each written into the same
 * buffer (piece i is all letter i): what a producer may do, since a piece is
 * taken before the next is asked for (stream-body.ts). `made` counts the
 * pieces produced so far.
 */
function reusing(count: number, size: number) {
  const letter = (i: number) => 0x61 + (i % 26);
  const expected = Buffer.concat(Array.from({ length: count }, (_, i) => Buffer.alloc(size, letter(i))));
  const state = { made: 0 };
  async function* body() {
    const buffer = Buffer.alloc(size);
    for (let i = 0; i < count; i++) {
      buffer.fill(letter(i));
      state.made++;
      yield buffer;
    }
  }
  return { expected, body, state };
}

/** The content of a chunked response's body, as bytes. */
function content(output: Buffer): Buffer {
  const parts: Buffer[] = [];
  let i = output.indexOf("\r\n\r\n") + 4;
  for (;;) {
    const eol = output.indexOf("\r\n", i);
    const size = parseInt(output.toString("latin1", i, eol), 16);
    if (size === 0) return Buffer.concat(parts);
    parts.push(output.subarray(eol + 2, eol + 2 + size));
    i = eol + 2 + size + 2;
  }
}

t.test("a producer that writes every piece into one buffer: each piece is taken before the next is asked for", async (t) => {
  const request = get("/", "Connection: close\r\n");
  for (const stepwise of [false, true]) {
    const { expected, body } = reusing(300, 5000);
    const { output } = await inject(() => ({ status: 200, body: body() }), request, { stepwise });
    t.ok(content(output).equals(expected), `inject${stepwise ? ", stepwise" : ""}: every piece as it was when yielded`);
  }

  // Over a socket whose client stops reading: the kernel takes pieces in part, and the rest waits for it.
  const { expected, body, state } = reusing(4000, 8000);
  const s = await listen(() => ({ status: 200, body: body() }), { sendTimeoutMs: 60_000 });
  t.teardown(s.close);
  const socket = net.connect(s.port, "127.0.0.1");
  await once(socket, "connect");
  const received: Buffer[] = [];
  socket.on("data", (d: Buffer) => received.push(d));
  socket.pause();
  socket.write(request);
  // Until pieces stop being made (helpers/quiet.ts): the server waits for the client.
  await happens(t, stopsMoving(() => state.made), "the server makes pieces, then stops");
  t.ok(state.made < 4000, `the server waits for the client (${state.made} of 4000 pieces made)`);
  socket.resume();
  await happens(t, once(socket, "close"), "the whole body arrives once the client reads");
  t.ok(content(Buffer.concat(received)).equals(expected), "over a socket: every piece as it was when yielded");
});
