// While an answer is in the making, the connection reads no further request
// (maxUnanswered); what the client sends meanwhile waits in the kernel, not in
// the server: the parser keeps at most the read that came behind it, and the
// socket, paused then, reads again only once the parser has taken all it
// held. Resumed before that, the socket took one more read (64 KiB) at every
// answer while the parser took one request (30 bytes) from what it held: a
// client pipelining small requests to a handler that answers later had all
// it sent read into the server, and copied again at every answer.

import t from "tap";
import net from "node:net";
import { once } from "node:events";
import { Duplex } from "node:stream";
import { Connection } from "../../src/http/connection/connection.js";
import type { ConnectionTrace } from "../../src/http/connection/trace-hook.js";
import { DEFAULT_CONNECTION_OPTIONS } from "../../src/http/connection/options.js";
import type { Handler } from "../../src/http/connection/service.js";
import type { Response } from "../../src/http/message/response.js";
import { DEFAULT_LIMITS } from "../../src/http/parse/parser.js";
import { happens } from "../helpers/hang.js";
import { listen } from "../helpers/wire.js";

const REQUEST = "GET /x HTTP/1.1\r\nHost: t\r\n\r\n";
const MiB = 1024 * 1024;
const READ = 64 * 1024;
/** Enough answers to use up 8 reads of requests: a socket that stayed paused for good would hang here. */
const ANSWERS = Math.ceil((8 * READ) / REQUEST.length);
/** 4 MiB of pipelined requests. */
const PIPELINE = REQUEST.repeat(Math.ceil((4 * MiB) / REQUEST.length));

/**
 * A handler that answers on the next turn, and records after each answer how
 * far `taken()` (bytes the server took from the client) runs ahead of what it
 * has answered; `reached` resolves at the ANSWERS-th answer.
 */
function laterHandler(taken: () => number) {
  let answered = 0;
  let most = 0;
  let reach!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const handler: Handler = () =>
    new Promise<Response>((resolve) =>
      setImmediate(() => {
        answered++;
        most = Math.max(most, taken() - answered * REQUEST.length);
        if (answered === ANSWERS) reach();
        resolve({ status: 200, body: "" });
      }),
    );
  return { handler, reached, most: () => most };
}

t.test("in process: a client pipelining 4 MiB of small requests to a handler that answers later is read only a read or two ahead of its answers", async (t) => {
  const source = Buffer.from(PIPELINE, "latin1");
  let pulled = 0;
  // A kernel: a read of at most 64 KiB, whenever the stream asks for one.
  const wire = new Duplex({
    allowHalfOpen: true,
    read() {
      if (pulled >= source.length) return;
      const chunk = source.subarray(pulled, pulled + READ);
      pulled += chunk.length;
      this.push(chunk);
    },
    write(_chunk, _encoding, callback) {
      callback();
    },
  });
  const later = laterHandler(() => pulled);
  new Connection(wire, later.handler, { ...DEFAULT_CONNECTION_OPTIONS, limits: DEFAULT_LIMITS }, { onHandlerError: () => {}, onClose: () => {} });
  await happens(t, later.reached, `${ANSWERS} answers`);
  wire.destroy();
  t.ok(later.most() <= 4 * READ, `at most ${later.most()} bytes taken ahead of what was answered (4 reads: ${4 * READ}; all 4 MiB before)`);
});

t.test("over a socket: the same, counted by what the server reads from its socket", async (t) => {
  let read = 0;
  const quiet = () => {};
  const trace = (): ConnectionTrace => ({ span: quiet, received: (chunk) => (read += chunk.length), head: quiet, request: quiet, error: quiet, response: quiet, closed: quiet });
  const later = laterHandler(() => read);
  const s = await listen(later.handler, { trace });
  t.teardown(s.close);
  const socket = net.connect(s.port, "127.0.0.1");
  await once(socket, "connect");
  socket.on("data", () => {}); // reads every answer
  socket.on("error", () => {});
  socket.write(PIPELINE);
  await happens(t, later.reached, `${ANSWERS} answers`);
  socket.destroy();
  t.ok(later.most() <= MiB, `at most ${later.most()} bytes read from the client ahead of what was answered (all 4 MiB before)`);
});
