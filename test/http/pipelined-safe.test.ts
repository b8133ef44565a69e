// Pipelined requests run side by side only while every one in flight is safe
// (RFC 9112 §9.3.2, protocol.ts): GET, GET, UPDATE, GET in one write, with
// answers in the making at once allowed (maxUnanswered 16). The two GETs'
// handlers run at once; the UPDATE's starts only once both GETs are
// answered, even when they answer out of order; the last GET's only once the
// UPDATE is answered, however late; the answers leave in request order.
//
// Every handler waits for the test to release it, and every start and
// answer goes into one log, so the order is read from the log, not from a
// clock. The same run goes through inject() and over a real socket.

import t from "tap";
import type { Test } from "tap";
import net from "node:net";
import { once } from "node:events";
import { inject } from "../../src/http/connection/inject.js";
import type { Handler } from "../../src/http/connection/service.js";
import type { Response } from "../../src/http/message/response.js";
import { happens } from "../helpers/hang.js";
import { listen, receivedUntilClose, splitResponses } from "../helpers/wire.js";

const REQUESTS =
  "GET /1 HTTP/1.1\r\nHost: t\r\n\r\n" +
  "GET /2 HTTP/1.1\r\nHost: t\r\n\r\n" +
  "UPDATE /3 HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\n\r\nbody" +
  "GET /4 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";

/** Handlers that wait to be released, and the log of what started and what was answered. */
function recorder() {
  const log: string[] = [];
  const releases = new Map<string, () => void>();
  const started = new Map<string, () => void>();
  const starts = new Map<string, Promise<void>>();
  for (const path of ["/1", "/2", "/3", "/4"]) starts.set(path, new Promise((resolve) => started.set(path, resolve)));
  const handler: Handler = (request) => {
    log.push(`start ${request.path}`);
    started.get(request.path)!();
    return new Promise<Response>((resolve) =>
      releases.set(request.path, () => {
        log.push(`answer ${request.path}`);
        resolve({ status: 200, body: `${request.method} ${request.path} ${request.body.toString("latin1")}` });
      }),
    );
  };
  return { log, handler, starts, release: (path: string) => releases.get(path)!() };
}

/** Drives the handlers through the run, `output` being everything the server wrote by the time it closed. */
async function drive(t: Test, r: ReturnType<typeof recorder>, output: Promise<Buffer>): Promise<void> {
  await happens(t, Promise.all([r.starts.get("/1"), r.starts.get("/2")]), "both GETs' handlers run at once");
  t.same(r.log, ["start /1", "start /2"], "the second GET's handler started before the first was answered, and nothing else did");
  // Answered out of order, and in separate turns, the later one first.
  r.release("/2");
  await new Promise((resolve) => setImmediate(resolve));
  r.release("/1");
  await happens(t, r.starts.get("/3")!, "the UPDATE's handler runs");
  // Answered late: a few turns after its start.
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
  r.release("/3");
  await happens(t, r.starts.get("/4")!, "the last GET's handler runs");
  r.release("/4");
  const rs = splitResponses(await output);
  t.same(
    r.log,
    ["start /1", "start /2", "answer /2", "answer /1", "start /3", "answer /3", "start /4", "answer /4"],
    "the UPDATE started only once both GETs were answered, the last GET only once the UPDATE was",
  );
  t.same(
    rs.map((x) => x.body),
    ["GET /1 ", "GET /2 ", "UPDATE /3 body", "GET /4 "],
    "the answers left in request order",
  );
}

t.test("in process (inject)", async (t) => {
  const r = recorder();
  const result = inject(r.handler, REQUESTS, { maxUnanswered: 16 });
  await drive(
    t,
    r,
    result.then((x) => x.output),
  );
});

t.test("over a socket", async (t) => {
  const r = recorder();
  const s = await listen(r.handler, { maxUnanswered: 16 });
  t.teardown(() => s.close());
  const socket = net.connect(s.port, "127.0.0.1");
  await once(socket, "connect");
  const received = receivedUntilClose(socket);
  socket.write(REQUESTS);
  await drive(t, r, received);
});
