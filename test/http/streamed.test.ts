// A streamed service (src/http/connection/streamed.ts), on the real
// Connection over an in-memory socket, step by step: each request at its
// head with its fields' names as sent, the body in pieces and its trailers,
// the reading stopped while the reader is full, an answer before the body is
// whole, the hand-over of the socket with the bytes read past the head
// (after which nothing is timed), and protocol errors the service answers
// itself.

import { Duplex } from "node:stream";
import t from "tap";
import { Connection } from "../../src/http/connection/connection.js";
import { DEFAULT_CONNECTION_OPTIONS } from "../../src/http/connection/options.js";
import type { Link, Streamed, StreamedService } from "../../src/http/connection/streamed.js";
import { DEFAULT_LIMITS } from "../../src/http/parse/parser.js";
import type { Request, RequestHead } from "../../src/http/message/request.js";
import type { Response } from "../../src/http/message/response.js";
import { memorySocket } from "../helpers/memory-socket.js";
import { splitResponses } from "../helpers/wire.js";

interface Seen {
  head: RequestHead;
  link: Link;
  pieces: Buffer[];
  ended: Request | null;
  aborted: boolean;
  /** What abort() said: the client went. */
  gone: boolean | null;
  answer(response: Response): void;
}

/** A connection whose streamed service records what it is given; `onHead` may act at the head. */
function streamedConnection(onHead: (seen: Seen) => void = () => {}, clientError?: StreamedService["clientError"]) {
  const memory = memorySocket();
  const seen: Seen[] = [];
  const service: StreamedService = {
    streamed(head, link): Streamed {
      let answer!: (response: Response) => void;
      const response = new Promise<Response>((resolve) => (answer = resolve));
      const entry: Seen = { head, link, pieces: [], ended: null, aborted: false, gone: null, answer };
      seen.push(entry);
      onHead(entry);
      return {
        response,
        body: (piece) => entry.pieces.push(Buffer.from(piece)),
        end: (request) => (entry.ended = request),
        abort: (clientGone) => {
          entry.aborted = true;
          entry.gone = clientGone;
        },
      };
    },
    ...(clientError === undefined ? {} : { clientError }),
  };
  let closed = 0;
  const connection = new Connection(memory.socket, service, { ...DEFAULT_CONNECTION_OPTIONS, limits: DEFAULT_LIMITS }, { onHandlerError: () => {}, onClose: () => closed++ });
  /** One read of the socket; the Duplex emits it on the next tick, which a turn of the event loop follows. */
  const push = async (text: string | Buffer) => {
    memory.socket.push(typeof text === "string" ? Buffer.from(text, "latin1") : text);
    await new Promise(setImmediate);
  };
  return { memory, connection, seen, push, closed: () => closed };
}

t.test("the head at once, with its names as sent; the body in pieces; trailers at its end", async (t) => {
  const { seen, push } = streamedConnection();
  await push("POST /up HTTP/1.1\r\nHost: a\r\nX-Mixed-Case: 1\r\nTransfer-Encoding: chunked\r\n\r\n");
  t.equal(seen.length, 1, "handed on at its head, before any body byte");
  t.same(seen[0]!.head.rawNames, ["Host", "X-Mixed-Case", "Transfer-Encoding"]);
  t.same(seen[0]!.head.fields, ["host", "a", "x-mixed-case", "1", "transfer-encoding", "chunked"]);
  await push("3\r\nabc\r\n");
  await push("2\r\nde\r\n0\r\nX-Sum: 5\r\nx-more: yes\r\n\r\n");
  t.same(Buffer.concat(seen[0]!.pieces).toString(), "abcde", "each piece as it came, none gathered");
  t.same(seen[0]!.ended?.trailers, ["X-Sum", "5", "x-more", "yes"]);
  t.equal(seen[0]!.ended?.body.length, 0, "no whole body is kept");
});

t.test("a body larger than the server's whole-body limit streams", async (t) => {
  const { seen, push } = streamedConnection();
  const size = DEFAULT_LIMITS.maxBodyBytes + 10;
  await push(`POST / HTTP/1.1\r\nHost: a\r\nContent-Length: ${size}\r\n\r\n`);
  await push(Buffer.alloc(size, 1));
  t.equal(Buffer.concat(seen[0]!.pieces).length, size);
  t.ok(seen[0]!.ended !== null);
});

t.test("a full reader stops the reading: the socket pauses, and reads again when it has room", async (t) => {
  const { seen, push, memory } = streamedConnection();
  await push("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 30\r\n\r\n");
  await push("0123456789");
  seen[0]!.link.holdBody(true);
  await push("abcdefghij");
  t.equal(Buffer.concat(seen[0]!.pieces).toString(), "0123456789", "held: the next read waits");
  t.equal(memory.socket.isPaused(), true, "and the socket is paused behind it");
  await push("ABCDEFGHIJ");
  seen[0]!.link.holdBody(false);
  // The socket emits what it kept on the next tick.
  await new Promise(setImmediate);
  t.equal(Buffer.concat(seen[0]!.pieces).toString(), "0123456789abcdefghijABCDEFGHIJ", "the held reads, in order");
  t.equal(memory.socket.isPaused(), false);
  t.ok(seen[0]!.ended !== null);
});

t.test("an answer before the body is whole: written at once, the body still read, then the next request", async (t) => {
  const { seen, push, memory } = streamedConnection();
  await push("POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\n\r\nabc");
  seen[0]!.answer({ status: 413, body: "too much" });
  await memory.until(() => memory.output().includes("too much"));
  await push("def");
  t.ok(seen[0]!.ended !== null, "the body's end is still heard");
  await push("GET /b HTTP/1.1\r\nHost: a\r\n\r\n");
  t.equal(seen.length, 2, "the next request is told from the body's end");
  t.equal(seen[1]!.head.path, "/b");
  seen[1]!.answer({ status: 200, body: "b" });
  await memory.until(() => memory.output().endsWith("b"));
  t.same(
    splitResponses(memory.written()).map((r) => r.status),
    [413, 200],
  );
});

t.test("the client goes mid-body: the reader hears abort", async (t) => {
  const { seen, push, memory } = streamedConnection();
  await push("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc");
  memory.socket.destroy();
  await new Promise((resolve) => memory.socket.once("close", resolve));
  t.equal(seen[0]!.aborted, true);
  t.equal(seen[0]!.gone, true, "because the client went");
  t.equal(seen[0]!.ended, null);
});

t.test("a hand-over at the head: the bytes past it are returned, and the connection lets go of the socket", async (t) => {
  let rest: Buffer | null = null;
  const { seen, push, memory, connection, closed } = streamedConnection((entry) => {
    if (entry.head.path === "/up") rest = entry.link.handOver();
  });
  await push("GET /up HTTP/1.1\r\nHost: a\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\nfirst bytes of another protocol");
  t.equal(rest!.toString(), "first bytes of another protocol");
  t.equal(connection.handedOver, true);
  await push("more");
  t.equal(seen.length, 1, "nothing more is parsed");
  t.equal(memory.output(), "", "nothing is written");
  t.equal(memory.socket.read()?.toString(), "more", "later bytes wait, unread, for the new protocol's reader");
  connection.checkDeadline(Date.now() + 24 * 3600 * 1000);
  t.equal(memory.socket.destroyed, false, "no deadline applies, a day on");
  t.equal(memory.output(), "");
  memory.socket.destroy();
  await new Promise((resolve) => memory.socket.once("close", resolve));
  t.equal(closed(), 1, "its close is still counted");
});

t.test("a hand-over is refused outside the head's call", async (t) => {
  const { seen, push } = streamedConnection();
  await push("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
  t.equal(seen[0]!.link.handOver(), null);
});

t.test("a protocol error the service answers itself: the socket is its, the connection writes nothing", async (t) => {
  const errors: string[] = [];
  const { memory, push, connection } = streamedConnection(undefined, (error, link) => {
    errors.push(error.code);
    link.socket.write("mine");
    return true;
  });
  await push("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n");
  t.same(errors, ["DUPLICATE_HOST"]);
  t.equal(memory.output(), "mine");
  t.equal(connection.handedOver, true);
});

t.test("a protocol error the service leaves: the engine's own problem", async (t) => {
  const { memory, push } = streamedConnection(undefined, () => false);
  await push("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n");
  await memory.until(() => memory.output().includes("problem+json"));
  t.match(memory.output(), /^HTTP\/1\.1 400 Bad Request\r\n/);
});

t.test("names as sent survive a head recalled from the parser's memory", async (t) => {
  const { seen, push } = streamedConnection((entry) => entry.answer({ status: 204 }));
  const head = "GET /same HTTP/1.1\r\nHost: a\r\nX-Case: 1\r\n\r\n";
  for (let i = 0; i < 6; i++) {
    await push(head);
  }
  t.equal(seen.length, 6);
  for (const entry of seen) t.same(entry.head.rawNames, ["Host", "X-Case"]);
});

t.test("once handed over, a socket whose client reads nothing is the new protocol's: the engine's send timeout does not cut it", async (t) => {
  // A socket whose writes are never taken: what is written stays queued, as towards a client that stopped reading.
  const socket = new Duplex({ allowHalfOpen: true, read() {}, write() {} });
  const service: StreamedService = {
    streamed(_head, link) {
      link.handOver();
      return { response: new Promise<Response>(() => {}), body() {}, end() {}, abort() {} };
    },
  };
  const connection = new Connection(socket, service, { ...DEFAULT_CONNECTION_OPTIONS, limits: DEFAULT_LIMITS }, { onHandlerError: () => {}, onClose: () => {} });
  socket.push(Buffer.from("GET / HTTP/1.1\r\nHost: a\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\n"));
  await new Promise(setImmediate);
  t.equal(connection.handedOver, true);
  socket.write("the new protocol's bytes, never read");
  t.ok(socket.writableLength > 0);
  const now = Date.now();
  connection.checkDeadline(now);
  connection.checkDeadline(now + DEFAULT_CONNECTION_OPTIONS.sendTimeoutMs + 1);
  t.equal(socket.destroyed, false, "still open past the send timeout");
});

t.test("a 100 Continue the handler holds goes out only when it says", async (t) => {
  const { seen, push, memory } = streamedConnection((entry) => entry.link.holdContinue());
  await push("POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n");
  t.equal(memory.output(), "", "no 100 Continue yet");
  seen[0]!.link.sendContinue();
  t.equal(memory.output(), "HTTP/1.1 100 Continue\r\n\r\n");
  await push("hi");
  t.equal(Buffer.concat(seen[0]!.pieces).toString(), "hi");
  seen[0]!.answer({ status: 200, body: "ok" });
  await memory.until(() => memory.output().endsWith("ok"));
  t.equal(memory.output().match(/100 Continue/g)?.length, 1, "one 100 Continue");
});

t.test("answered without the 100 Continue it held: none is sent, the body is never read, the connection closes", async (t) => {
  const { seen, push, memory } = streamedConnection((entry) => entry.link.holdContinue());
  await push("POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n");
  seen[0]!.answer({ status: 417, body: "no" });
  await memory.until(() => memory.output().endsWith("no"));
  const [answer] = splitResponses(memory.written());
  t.equal(answer!.status, 417);
  t.equal(answer!.headers.connection, "close");
  t.notMatch(memory.output(), /100 Continue/);
  t.equal(seen[0]!.aborted, true, "its reader hears the body will not come");
  t.equal(seen[0]!.gone, false, "though the client is still there, to read the answer");
});

t.test("a body that breaks a rule after its request was answered: nothing more is answered, and the connection closes", async (t) => {
  const { seen, push, memory } = streamedConnection();
  await push("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n");
  seen[0]!.answer({ status: 200, body: "early" });
  await memory.until(() => memory.output().endsWith("early"));
  await push("zz\r\n");
  t.equal(memory.socket.writableEnded, true, "the connection ends its side");
  t.same(
    splitResponses(memory.written()).map((r) => r.status),
    [200],
    "its answer is out already: no 400 follows it",
  );
  t.equal(seen[0]!.aborted, true);
  t.equal(seen[0]!.gone, false);
});
