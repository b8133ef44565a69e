// One connection's deep pipeline does not hold up the others: after
// REQUESTS_PER_TURN requests of one read, a connection waits for the next
// turn of the event loop. In process, over in-memory streams, the order is
// exact; over real sockets, the burst is answered whole and in order.

import t from "tap";
import net from "node:net";
import { once } from "node:events";
import { Duplex } from "node:stream";
import { Connection } from "../../src/http/connection/connection.js";
import { DEFAULT_CONNECTION_OPTIONS } from "../../src/http/connection/options.js";
import type { Handler } from "../../src/http/connection/service.js";
import { REQUESTS_PER_TURN } from "../../src/http/connection/turns.js";
import { DEFAULT_LIMITS } from "../../src/http/parse/parser.js";
import { listen, splitResponses } from "../helpers/wire.js";

const get = (path: string, close = false) => `GET ${path} HTTP/1.1\r\nHost: t\r\n${close ? "Connection: close\r\n" : ""}\r\n`;
const DEEP = 1000;
const turn = () => new Promise((resolve) => setImmediate(resolve));

/** A handler that records the order it is called in, and answers with the path. */
function recording(): { handler: Handler; seen: string[] } {
  const seen: string[] = [];
  return { seen, handler: (req) => (seen.push(req.path), { status: 200, body: req.path }) };
}

function memorySocket(): { socket: Duplex; output: () => Buffer } {
  const chunks: Buffer[] = [];
  const socket = new Duplex({
    read() {},
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk);
      callback();
    },
  });
  return { socket, output: () => Buffer.concat(chunks) };
}

t.test("in process: a read of 1000 pipelined requests yields after REQUESTS_PER_TURN; another connection's request is answered in between", async (t) => {
  const { handler, seen } = recording();
  const options = { ...DEFAULT_CONNECTION_OPTIONS, limits: DEFAULT_LIMITS };
  const hooks = { onHandlerError: (e: unknown) => t.fail(String(e)), onClose: () => {} };
  const deep = memorySocket();
  const other = memorySocket();
  new Connection(deep.socket, handler, options, hooks);
  new Connection(other.socket, handler, options, hooks);

  deep.socket.push(Buffer.from(Array.from({ length: DEEP }, (_, i) => get(`/deep/${i}`)).join("")));
  other.socket.push(Buffer.from(get("/other")));
  // Each stream starts flowing on the next tick, the deep one first.
  await turn();
  t.equal(seen.indexOf("/other"), REQUESTS_PER_TURN, `the other connection was served right after ${REQUESTS_PER_TURN} of the deep one's requests`);

  // The deep connection goes on, turn after turn, until all are answered in order.
  while (seen.length < DEEP + 1) await turn();
  const answers = splitResponses(deep.output()).map((r) => r.body);
  t.equal(answers.length, DEEP);
  t.ok(answers.every((body, i) => body === `/deep/${i}`), "every deep request answered, in order");
  t.same(splitResponses(other.output()).map((r) => r.body), ["/other"]);
});

t.test("over a socket: a 1000-request burst, taken in turns, is answered whole and in order", async (t) => {
  const { handler } = recording();
  const running = await listen(handler);
  t.teardown(() => running.close());
  const socket = net.connect(running.port, "127.0.0.1");
  await once(socket, "connect");
  const chunks: Buffer[] = [];
  socket.on("data", (chunk: Buffer) => chunks.push(chunk));
  const ended = once(socket, "end");
  // The last request closes, so the server's FIN marks the end of every answer.
  socket.write(Array.from({ length: DEEP }, (_, i) => get(`/deep/${i}`, i === DEEP - 1)).join(""));
  await ended;
  const answers = splitResponses(Buffer.concat(chunks)).map((r) => r.body);
  t.equal(answers.length, DEEP);
  t.ok(answers.every((body, i) => body === `/deep/${i}`), "every answer, in order");
  socket.destroy();
});
