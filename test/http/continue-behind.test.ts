// A request that asks for 100 Continue and waits for it, as RFC 9110 §10.1.1
// tells a client to, behind an earlier request on the same connection whose
// answer takes a while: its 100 Continue is owed only once the answers before
// it are out (they go in order), so until then the client is waiting on the
// server, not stalling. Timing its body from its head (BODY_TIMEOUT_MS,
// REQUEST_TIMEOUT_MS) answers 408 "the request body stalled" before the
// server ever said to send it. Found over a socket against `npm start` with
// BODY_TIMEOUT_MS=1000: GET /api/lab/delay/3 then a POST with Expect:
// 100-continue, pipelined: the delay's 200, then a 408 and no 100 Continue.
//
// The answer is held for a few times the timeout under test: these tests are
// about timeouts, so time must pass; the hang bound is the usual one.
//
// By default (maxUnanswered 1) the upload's head is not even read until the
// slow answer is out; with two answers in the making at once it is read
// first, and its 100 Continue waits behind the slow answer. Both are run.

import t from "tap";
import type { Test } from "tap";
import net from "node:net";
import { once } from "node:events";
import type { Handler } from "../../src/http/connection/service.js";
import { happens } from "../helpers/hang.js";
import { listen } from "../helpers/wire.js";

const TIMEOUT = 100;

/**
 * `split`: the upload's head starts in the read that carries the slow request
 * and ends in a later one (sent once the slow handler has been called, so
 * after that read), so its whole-request deadline starts with its first byte,
 * long before the 100 Continue; and the client sends its body `bodyDelayMs`
 * after the 100, long enough for the server's sweep to see a deadline that
 * had run out, well within one that starts again at the 100.
 */
async function pipelinedContinue(
  t: Test,
  options: { bodyTimeoutMs: number; requestTimeoutMs: number; maxUnanswered: number },
  split: { slowMs: number; bodyDelayMs: number } | null = null,
): Promise<void> {
  const splitHead = split !== null;
  let slowCalled!: () => void;
  const slowSeen = new Promise<void>((resolve) => (slowCalled = resolve));
  const handler: Handler = (request) => {
    if (request.target !== "/slow") return { status: 200, body: `got ${request.body.toString("latin1")}` };
    slowCalled();
    return new Promise((resolve) => setTimeout(() => resolve({ status: 200, body: "slow" }), split?.slowMs ?? 5 * TIMEOUT));
  };
  const s = await listen(handler, { ...options, headersTimeoutMs: 60_000 });
  t.teardown(s.close);
  const socket = net.connect(s.port, "127.0.0.1");
  await once(socket, "connect");
  let received = "";
  let sentBody = false;
  socket.on("data", (d: Buffer) => {
    received += d.toString("latin1");
    // The client sends the body when, and only when, it is told to continue.
    if (!sentBody && received.includes("HTTP/1.1 100 Continue\r\n\r\n")) {
      sentBody = true;
      if (split === null) socket.write("hello");
      else setTimeout(() => socket.write("hello"), split.bodyDelayMs);
    }
  });
  socket.on("error", () => {});
  const upload = "POST /upload HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\nConnection: close\r\n\r\n";
  const cut = splitHead ? upload.indexOf("Host") : upload.length;
  socket.write("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n" + upload.slice(0, cut));
  if (splitHead) {
    await happens(t, slowSeen, "the slow request reaches its handler");
    socket.write(upload.slice(cut));
  }
  await happens(t, once(socket, "close"), "the server answers both and closes");
  t.notMatch(received, /408 Request Timeout/, "no 408 for a body the server had not yet asked for", { received });
  t.match(received, /HTTP\/1\.1 200 OK[\s\S]*slow[\s\S]*HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK[\s\S]*got hello/, "the slow answer, then 100 Continue, then the upload's answer");
}

for (const maxUnanswered of [1, 2]) {
  const making = `maxUnanswered ${maxUnanswered}`;
  t.test(`${making}: pipelined behind a slow answer, a request waiting for its 100 Continue is not cut by the body timeout`, (t) =>
    pipelinedContinue(t, { bodyTimeoutMs: TIMEOUT, requestTimeoutMs: 60_000, maxUnanswered }));

  t.test(`${making}: nor by the whole-request timeout`, (t) => pipelinedContinue(t, { bodyTimeoutMs: 60_000, requestTimeoutMs: TIMEOUT, maxUnanswered }));

  t.test(`${making}: nor by the whole-request timeout when the head began long before the 100 Continue: it runs again from the 100`, (t) =>
    // The sweep looks every 250 ms (a quarter of 1,000); the body comes 300 ms after the 100, past a sweep, and
    // 700 ms inside the deadline that starts again at the 100, so that a loaded machine's late timer is not a 408.
    pipelinedContinue(t, { bodyTimeoutMs: 60_000, requestTimeoutMs: 1000, maxUnanswered }, { slowMs: 2500, bodyDelayMs: 300 }));
}
