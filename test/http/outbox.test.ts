// The Outbox: what one read of the socket produces leaves in one write, in
// order, and no more than the socket's high-water mark waits in it, so the
// socket's back-pressure still sees the responses.

import t from "tap";
import { Duplex, Writable } from "node:stream";
import { Connection } from "../../src/http/connection/connection.js";
import { DEFAULT_CONNECTION_OPTIONS } from "../../src/http/connection/options.js";
import type { Handler } from "../../src/http/connection/service.js";
import { Outbox } from "../../src/http/connection/outbox.js";
import { DEFAULT_LIMITS } from "../../src/http/parse/parser.js";
import { splitResponses } from "../helpers/wire.js";

/** Stream methods that record each write handed down (a writev counts as one write). */
function recording(writes: Buffer[][]) {
  return {
    write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void) {
      writes.push([chunk]);
      callback();
    },
    writev(chunks: Array<{ chunk: unknown }>, callback: () => void) {
      writes.push(chunks.map((c) => c.chunk as Buffer));
      callback();
    },
  };
}

function recorder(highWaterMark = 16 * 1024): { sink: Writable; writes: Buffer[][]; ended: () => boolean } {
  const writes: Buffer[][] = [];
  let ended = false;
  const sink = new Writable({
    highWaterMark,
    ...recording(writes),
    final(callback) {
      ended = true;
      callback();
    },
  });
  return { sink, writes, ended: () => ended };
}

const text = (writes: Buffer[][]) => writes.map((w) => Buffer.concat(w).toString("latin1"));

t.test("a held run of text, then bytes, then text leaves in one write of one Buffer, in the order sent", async (t) => {
  const { sink, writes } = recorder();
  const out = new Outbox(sink);
  out.hold();
  out.send("a é ");
  out.send(Buffer.from([0xff, 0x00]));
  out.send("€ c");
  t.equal(writes.length, 0, "nothing is written while held");
  out.release();
  t.equal(writes.length, 1, "one write");
  t.equal(writes[0]!.length, 1, "of one piece: the stream's cork buffer and writev are not used");
  t.same(writes[0]![0], Buffer.concat([Buffer.from("a é "), Buffer.from([0xff, 0x00]), Buffer.from("€ c")]), "text as UTF-8 and the bytes as they are, in order");
});

t.test("mixed pieces past Buffer.poolSize's half leave as one corked burst, the bytes handed down uncopied", async (t) => {
  const { sink, writes } = recorder();
  const out = new Outbox(sink);
  const body = Buffer.alloc(Buffer.poolSize >>> 1, 0x62);
  out.hold();
  out.send("head ");
  out.send(body);
  out.release();
  t.equal(writes.length, 1, "one write");
  t.equal(writes[0]!.length, 2, "a writev of the two pieces");
  t.equal(writes[0]![1], body, "the body itself, not a copy");
  t.equal(Buffer.concat(writes[0]!).toString("latin1"), "head " + "b".repeat(body.length));
});

t.test("text only leaves as one string; bytes only as one Buffer; outside a hold, at once", async (t) => {
  const { sink, writes } = recorder();
  const out = new Outbox(sink);
  out.hold();
  out.send("x");
  out.send("y");
  out.release();
  out.hold();
  out.send(Buffer.from("1"));
  out.send(Buffer.from("2"));
  out.release();
  out.send("now");
  t.same(text(writes), ["xy", "12", "now"]);
});

t.test("pending pieces past the high-water mark are written before the hold ends, so back-pressure sees them", async (t) => {
  const { sink, writes } = recorder(1024);
  const out = new Outbox(sink);
  out.hold();
  for (let i = 0; i < 10; i++) out.send("z".repeat(300));
  t.ok(writes.length >= 2, `written during the hold (${writes.length} writes of the 10 pieces)`);
  const during = writes.length;
  out.release();
  t.equal(text(writes).join("").length, 3000, "every byte, once");
  t.ok(writes.length <= during + 1, "the rest at release, in one write");
});

t.test("end() writes what is pending, then ends the stream", async (t) => {
  const { sink, writes, ended } = recorder();
  const out = new Outbox(sink);
  out.hold();
  out.send("last words");
  out.end();
  await new Promise((resolve) => sink.on("finish", resolve));
  t.same(text(writes), ["last words"]);
  t.ok(ended());
});

t.test("a Connection answers ten pipelined requests of one read in one socket write, with no access-log hook", async (t) => {
  const writes: Buffer[][] = [];
  const socket = new Duplex({ read() {}, ...recording(writes) });
  const handler: Handler = (req) => ({ status: 200, body: req.path });
  new Connection(socket, handler, { ...DEFAULT_CONNECTION_OPTIONS, limits: DEFAULT_LIMITS }, { onHandlerError: (e) => t.fail(String(e)), onClose: () => {} });
  socket.push(Buffer.from(Array.from({ length: 10 }, (_, i) => `GET /${i} HTTP/1.1\r\nHost: t\r\n\r\n`).join("")));
  while (writes.length === 0) await new Promise((resolve) => setImmediate(resolve));
  t.equal(writes.length, 1, "one write");
  t.equal(writes[0]!.length, 1, "of one piece, not a writev");
  t.same(splitResponses(Buffer.concat(writes[0]!)).map((r) => r.body), Array.from({ length: 10 }, (_, i) => `/${i}`), "all ten, in order");
});

t.test("ten pipelined GETs side by side, answered in later microtasks (as Koa answers), leave in one write", async (t) => {
  const writes: Buffer[][] = [];
  const socket = new Duplex({ read() {}, ...recording(writes) });
  // A chain of awaits, longer for the later requests: each answer comes in a microtask of its own, the first first
  // (written at once, it would leave alone), all within one run of the microtask queue.
  const handler: Handler = async (req) => {
    for (let i = Number(req.path.slice(1)); i >= 0; i--) await null;
    return { status: 200, body: req.path };
  };
  const options = { ...DEFAULT_CONNECTION_OPTIONS, limits: DEFAULT_LIMITS, maxUnanswered: 16 };
  new Connection(socket, handler, options, { onHandlerError: (e) => t.fail(String(e)), onClose: () => {} });
  socket.push(Buffer.from(Array.from({ length: 10 }, (_, i) => `GET /${i} HTTP/1.1\r\nHost: t\r\n\r\n`).join("")));
  while (writes.length === 0) await new Promise((resolve) => setImmediate(resolve));
  t.equal(writes.length, 1, "one write");
  t.same(splitResponses(Buffer.concat(writes[0]!)).map((r) => r.body), Array.from({ length: 10 }, (_, i) => `/${i}`), "all ten, in order");
});

t.test("back-pressure between two requests of one read: a socket that stops taking bytes stops the parsing", async (t) => {
  const written: number[] = [];
  // A socket whose writes never complete: past its high-water mark it needs a drain that never comes.
  const socket = new Duplex({ read() {}, write: (chunk: Buffer) => void written.push(chunk.length) });
  let handled = 0;
  const body = Buffer.alloc(64 * 1024, 0x61);
  const handler: Handler = () => {
    handled++;
    return { status: 200, body };
  };
  new Connection(socket, handler, { ...DEFAULT_CONNECTION_OPTIONS, limits: DEFAULT_LIMITS }, { onHandlerError: (e) => t.fail(String(e)), onClose: () => {} });
  // Forty requests in one read, fewer than a turn's 64: only back-pressure can stop the read early.
  socket.push(Buffer.from("GET / HTTP/1.1\r\nHost: t\r\n\r\n".repeat(40)));
  while (written.length === 0) await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(handled, 1, "the first response filled the socket's buffer; the other 39 requests wait, unparsed");
  t.ok(socket.writableNeedDrain, "the socket asks for a drain");
});
