// A request the client had begun when the server started shutting down is
// still read (Connection.drain lets it finish, as the last one), and is
// timed as it would be outside a shutdown: a head not complete within the
// headers timeout, a body that stalls for the body timeout, a request not
// whole within the request timeout get the same 408 and close. Without that,
// a client that trickled or stopped sending was timed by nothing but the
// shutdown's grace, and then cut without an answer. Draining while only the
// server's own work is left stays untimed, as outside a shutdown.
//
// In process, the deadlines are checked at chosen instants (no clock is
// waited for); over a real socket, the server's own sweep ends it, with a
// grace far longer than the hang detector's bound.

import t from "tap";
import net from "node:net";
import { once } from "node:events";
import { Connection } from "../../src/http/connection/connection.js";
import { DEFAULT_CONNECTION_OPTIONS, type ConnectionOptions } from "../../src/http/connection/options.js";
import type { Handler } from "../../src/http/connection/service.js";
import type { ConnectionTrace } from "../../src/http/connection/trace-hook.js";
import type { SpanKind } from "../../src/http/parse/spans.js";
import type { Response } from "../../src/http/message/response.js";
import { DEFAULT_LIMITS } from "../../src/http/parse/parser.js";
import { happens } from "../helpers/hang.js";
import { memorySocket } from "../helpers/memory-socket.js";
import { listen, receivedUntilClose, splitResponses } from "../helpers/wire.js";

const LONG = 3_600_000;
const ok: Handler = () => ({ status: 200, body: "ok" });

/** A Connection over an in-memory stream: what the client sends, and everything the server wrote. */
function open(handler: Handler, timeouts: Partial<ConnectionOptions>) {
  const { socket, written, output } = memorySocket();
  const options: ConnectionOptions = {
    ...DEFAULT_CONNECTION_OPTIONS,
    limits: DEFAULT_LIMITS,
    headersTimeoutMs: LONG,
    bodyTimeoutMs: LONG,
    requestTimeoutMs: LONG,
    keepAliveTimeoutMs: LONG,
    ...timeouts,
  };
  const connection = new Connection(socket, handler, options, { onHandlerError: () => {}, onClose: () => {} });
  return {
    connection,
    /** Sends `bytes`; resolves once the connection has read them (its listener runs before this one's). */
    async send(bytes: string): Promise<void> {
      const read = once(socket, "data");
      socket.push(bytes);
      await read;
    },
    /** The server ended its side: everything it wrote, as text. */
    ended: once(socket, "finish").then(output),
    written: () => written().length,
  };
}

function problemOf(output: string) {
  const [r] = splitResponses(Buffer.from(output, "latin1"));
  return { status: r!.status, connection: r!.headers.connection, detail: JSON.parse(r!.body).detail as string };
}

t.test("in process: a head begun before the shutdown keeps its headers deadline, and gets the 408 when it runs out", async (t) => {
  const c = open(ok, { headersTimeoutMs: 1_000 });
  await c.send("GET / HTTP/1.1\r\nHost: t\r\n");
  const deadline = c.connection.deadline;
  t.ok(deadline <= Date.now() + 1_000, "timed from the head's first byte");
  c.connection.drain();
  t.equal(c.connection.deadline, deadline, "the shutdown neither lifts nor extends it");
  await c.send("X-Slow: 1\r\n"); // a byte trickled in after the shutdown
  t.equal(c.connection.deadline, deadline, "nor does a trickled byte, as outside a shutdown");
  c.connection.checkDeadline(deadline - 1);
  t.equal(c.written(), 0, "before the deadline, nothing is cut");
  c.connection.checkDeadline(deadline);
  const p = problemOf(await happens(t, c.ended, "the connection answers and ends its side"));
  t.equal(p.status, 408);
  t.equal(p.connection, "close");
  t.match(p.detail, /^The request head was not complete 1000 ms\b/);
});

t.test("in process: a body begun before the shutdown that stalls gets the 408 of the body timeout", async (t) => {
  let handled = 0;
  const c = open(() => (handled++, { status: 200 }), { bodyTimeoutMs: 1_000 });
  await c.send("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc");
  const deadline = c.connection.deadline;
  c.connection.drain();
  t.equal(c.connection.deadline, deadline, "the shutdown does not restart the body's timer, nor lift it");
  await c.send("d");
  const restarted = c.connection.deadline;
  t.ok(restarted >= deadline && restarted <= Date.now() + 1_000, "a byte of body restarts it, as outside a shutdown");
  c.connection.checkDeadline(restarted);
  const p = problemOf(await happens(t, c.ended, "the connection answers and ends its side"));
  t.equal(p.status, 408);
  t.equal(p.connection, "close");
  t.match(p.detail, /^The request body stalled for 1000 ms\b/);
  t.equal(handled, 0, "the handler never saw the request");
});

t.test("in process: a body trickled after the shutdown cannot outlast the whole-request deadline", async (t) => {
  const c = open(ok, { requestTimeoutMs: 1_000 });
  await c.send("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\na");
  c.connection.drain();
  await c.send("b");
  c.connection.checkDeadline(Date.now() + 1_000); // the body timeout is an hour: only the whole-request deadline is past
  const p = problemOf(await happens(t, c.ended, "the connection answers and ends its side"));
  t.equal(p.status, 408);
  t.match(p.detail, /after its first byte/);
});

t.test("in process: draining while only the server's work is left is untimed, and the answer closes the connection", async (t) => {
  let answer!: (response: Response) => void;
  const c = open(() => new Promise<Response>((resolve) => (answer = resolve)), { headersTimeoutMs: 1_000, bodyTimeoutMs: 1_000, requestTimeoutMs: 1_000 });
  await c.send("GET / HTTP/1.1\r\nHost: t\r\n\r\n");
  c.connection.drain();
  t.equal(c.connection.deadline, Infinity, "no deadline while the handler works");
  c.connection.checkDeadline(Date.now() + LONG);
  t.equal(c.written(), 0, "nothing expired");
  answer({ status: 200, body: "late" });
  const [r] = splitResponses(Buffer.from(await happens(t, c.ended, "the answer goes out and the connection ends its side"), "latin1"));
  t.equal(r!.status, 200);
  t.equal(r!.body, "late");
  t.equal(r!.headers.connection, "close");
});

/**
 * A server whose trace reports what its parser takes: `parsed(kind)` resolves once the parser has taken a part
 * of that kind (spans.ts). Not the read's arrival: while connections arrive, a read waits for its turn
 * (turns.ts), and bytes not yet taken are no begun request.
 */
async function server(timeouts: Partial<ConnectionOptions>) {
  const waiting: { kind: SpanKind; resolve: () => void }[] = [];
  const quiet = () => {};
  const trace = (): ConnectionTrace => ({
    // Resolved here, in the parse: the waiter runs after the read is parsed whole, before any sweep.
    span: (kind) => {
      for (const w of waiting) if (w.kind === kind) w.resolve();
    },
    received: quiet,
    head: quiet,
    request: quiet,
    error: quiet,
    response: quiet,
    closed: quiet,
  });
  const s = await listen(ok, { trace, ...timeouts });
  return { s, parsed: (kind: SpanKind) => new Promise<void>((resolve) => waiting.push({ kind, resolve })) };
}

for (const [what, timeouts, sent, last, detail] of [
  ["a head", { headersTimeoutMs: 200 }, "GET / HTTP/1.1\r\nHost: t\r\n", "field-line", /^The request head was not complete 200 ms\b/],
  ["a body", { bodyTimeoutMs: 200 }, "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc", "body", /^The request body stalled for 200 ms\b/],
] as const) {
  t.test(`over a socket: ${what} half sent when close() is called gets its 408 within its timeout, not at the grace's end`, async (t) => {
    const { s, parsed } = await server(timeouts);
    const socket = net.connect(s.port, "127.0.0.1");
    t.teardown(() => socket.destroy());
    await once(socket, "connect");
    const received = receivedUntilClose(socket);
    const taken = parsed(last);
    socket.write(sent);
    await happens(t, taken, "the server has begun reading the request");
    const closing = s.server.close(LONG); // the grace cannot be what ends it
    const p = problemOf((await happens(t, received, "the server answers and closes")).toString("latin1"));
    t.equal(p.status, 408);
    t.equal(p.connection, "close");
    t.match(p.detail, detail);
    await happens(t, closing, "close() resolves: nothing is left");
  });
}
