// A body the server itself stopped reading is not late. With two answers in
// the making at once (maxUnanswered 2), a POST's head and the start of its
// body are read while the answer before it is made; that answer then leaves
// in pieces, slowly, and the server reads nothing more until it is out (an
// answer made behind it could only wait, whole). The rest of the POST's body
// has come meanwhile and waits in the server: timed as a body the client is
// slow to send, it got a 408 "The request body stalled", which was untrue.
//
// In process, the answer's pieces are let out by the test and the deadline
// is checked at a chosen instant, far past the body timeout: nothing waits
// for a clock. Over a real socket, time must pass: the answer in front takes
// a few body timeouts, each long enough that a machine too busy to run the
// server for a while does not turn a body already sent into a late one.

import t from "tap";
import net from "node:net";
import { once } from "node:events";
import { Connection } from "../../src/http/connection/connection.js";
import { DEFAULT_CONNECTION_OPTIONS } from "../../src/http/connection/options.js";
import type { Handler } from "../../src/http/connection/service.js";
import { DEFAULT_LIMITS } from "../../src/http/parse/parser.js";
import { happens } from "../helpers/hang.js";
import { memorySocket } from "../helpers/memory-socket.js";
import { listen } from "../helpers/wire.js";

const REQUESTS = "GET /slow HTTP/1.1\r\nHost: t\r\n\r\nPOST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\nConnection: close\r\n\r\n12345";

/**
 * /slow answers later, in PIECES pieces, each once `next` resolves; any other
 * path answers at once with the body it got.
 */
function slowThenEcho(pieces: number, next: () => Promise<void>): Handler {
  return (request) => {
    if (request.path !== "/slow") return { status: 200, body: `got ${request.body.toString("latin1")}` };
    return Promise.resolve({
      status: 200,
      body: (async function* () {
        for (let i = 0; i < pieces; i++) {
          await next();
          yield "piece ";
        }
      })(),
    });
  };
}

t.test("in process: while the answer in front leaves in pieces, the body behind it is not timed", async (t) => {
  const BODY_TIMEOUT = 100;
  const PIECES = 3;
  const { socket, output, until } = memorySocket();
  // The slow answer's pieces, let out one by one by the test: a piece is made once the test has allowed it.
  let allowed = 0;
  let released = 0;
  let waiting: (() => void) | null = null;
  const allow = () => {
    allowed++;
    waiting?.();
    waiting = null;
  };
  const handler = slowThenEcho(PIECES, async () => {
    if (released === allowed) await new Promise<void>((resolve) => (waiting = resolve));
    released++;
  });
  const connection = new Connection(
    socket,
    handler,
    { ...DEFAULT_CONNECTION_OPTIONS, limits: DEFAULT_LIMITS, maxUnanswered: 2, bodyTimeoutMs: BODY_TIMEOUT, requestTimeoutMs: 3_600_000 },
    { onHandlerError: () => {}, onClose: () => {} },
  );
  const ended = once(socket, "finish");
  socket.push(REQUESTS);
  await happens(t, until(() => output().includes("HTTP/1.1 200 OK")), "the slow answer's head is out");
  // The client sends the rest of the body now; the server, sending the answer in front, does not read it yet.
  socket.push("67890");
  // Ten body timeouts on: a 408 given now would be queued behind the answer in front, and show at the end.
  connection.checkDeadline(Date.now() + 10 * BODY_TIMEOUT);
  for (let piece = 1; piece <= PIECES; piece++) {
    allow();
    await happens(t, until(() => released >= piece), `piece ${piece} let out`);
  }
  await happens(t, ended, "the server answers both and closes");
  t.notMatch(output(), /408 Request Timeout/, "no 408 for a body the server had stopped reading");
  t.match(output(), /got 1234567890/, "the upload, whole, answered after the slow answer");
});

t.test("over a socket: a body whose reading the server paused (a slow answer in pieces before it) is answered, not cut by the body timeout", async (t) => {
  const BODY_TIMEOUT = 1_000;
  const PIECES = 3;
  // Answered later, in pieces a body timeout apart: reading stays stopped for PIECES times the timeout.
  const handler = slowThenEcho(PIECES, () => new Promise((resolve) => setTimeout(resolve, BODY_TIMEOUT)));
  const s = await listen(handler, { maxUnanswered: 2, bodyTimeoutMs: BODY_TIMEOUT, requestTimeoutMs: 60_000 });
  t.teardown(s.close);
  const socket = net.connect(s.port, "127.0.0.1");
  await once(socket, "connect");
  let received = "";
  let sentRest = false;
  socket.on("data", (d: Buffer) => {
    received += d.toString("latin1");
    // The rest of the body goes as soon as the slow answer has begun: the server holds it from then on.
    if (!sentRest && received.includes("HTTP/1.1 200 OK")) {
      sentRest = true;
      socket.write("67890");
    }
  });
  socket.on("error", () => {});
  socket.write(REQUESTS);
  await happens(t, once(socket, "close"), "the server answers both and closes");
  t.notMatch(received, /408 Request Timeout/, "no 408 for a body the server had stopped reading", { received });
  t.match(received, /got 1234567890/, "the upload, whole, answered after the slow answer");
});
