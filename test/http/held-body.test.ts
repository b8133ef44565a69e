// A body the server itself stopped reading is not late. With two answers in
// the making at once (maxUnanswered 2), a POST's head and the start of its
// body are read while the answer before it is made; that answer then leaves
// in pieces, slowly, and the server reads nothing more until it is out (an
// answer made behind it could only wait, whole). The rest of the POST's body
// has come meanwhile and waits in the server: timed as a body the client is
// slow to send, it got a 408 "The request body stalled", which was untrue.
//
// The answer in front takes a few times the body timeout: this test is about
// a timeout, so time must pass; the hang bound is the usual one.

import t from "tap";
import net from "node:net";
import { once } from "node:events";
import type { Handler } from "../../src/http/connection/service.js";
import { happens } from "../helpers/hang.js";
import { listen } from "../helpers/wire.js";

const BODY_TIMEOUT = 100;
const PIECES = 10;

t.test("a body whose reading the server paused (a slow answer in pieces before it) is answered, not cut by the body timeout", async (t) => {
  const handler: Handler = (request) => {
    if (request.path !== "/slow") return { status: 200, body: `got ${request.body.toString("latin1")}` };
    // Answered later, in pieces a body timeout apart: reading stays stopped for PIECES times the timeout.
    return Promise.resolve({
      status: 200,
      body: (async function* () {
        for (let i = 0; i < PIECES; i++) {
          await new Promise((resolve) => setTimeout(resolve, BODY_TIMEOUT));
          yield "piece ";
        }
      })(),
    });
  };
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
  socket.write("GET /slow HTTP/1.1\r\nHost: t\r\n\r\nPOST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\nConnection: close\r\n\r\n12345");
  await happens(t, once(socket, "close"), "the server answers both and closes");
  t.notMatch(received, /408 Request Timeout/, "no 408 for a body the server had stopped reading", { received });
  t.match(received, /got 1234567890/, "the upload, whole, answered after the slow answer");
});
