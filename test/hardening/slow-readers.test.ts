// Slow readers: a client that reads its responses slowly, but steadily, must
// get every byte of them. The idle (keep-alive), headers and linger timeouts
// are about a client that sends nothing; they must not fire while the server
// itself still has response bytes to deliver, nor while it has stopped reading
// because of back-pressure (the requests were whole; the server is the one
// waiting).
//
// The timeouts are set to 100 ms and the responses are large (tens of MiB,
// more than the kernel's socket buffers hold), so that delivering them at
// about 20 MB/s takes more than a second: ten times any of the timeouts.

import t from "tap";
import net from "node:net";
import { once } from "node:events";
import type { Handler } from "../../src/http/connection/service.js";
import { listen } from "../helpers/wire.js";

const MiB = 1024 * 1024;
const SHORT = { keepAliveTimeoutMs: 100, lingerMs: 100, headersTimeoutMs: 100, bodyTimeoutMs: 100 } as const;

/**
 * Send `request`, then read at most `perTick` bytes every `tickMs` until the
 * server closes the connection; returns every byte received.
 */
async function readSlowly(port: number, request: string, perTick: number, tickMs: number): Promise<{ bytes: Buffer; error: string | null }> {
  const socket = net.connect(port, "127.0.0.1");
  await once(socket, "connect");
  const received: Buffer[] = [];
  let error: string | null = null;
  let thisTick = 0;
  socket.on("error", (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
  socket.on("data", (d: Buffer) => {
    received.push(d);
    thisTick += d.length;
    if (thisTick >= perTick) socket.pause();
  });
  const tick = setInterval(() => {
    thisTick = 0;
    socket.resume();
  }, tickMs);
  socket.write(request);
  await once(socket, "close");
  clearInterval(tick);
  return { bytes: Buffer.concat(received), error };
}

/** Status lines and body lengths of a stream of Content-Length-framed responses. */
function frame(bytes: Buffer): { status: number; length: number; complete: boolean }[] {
  const out: { status: number; length: number; complete: boolean }[] = [];
  let pos = 0;
  while (pos < bytes.length) {
    const end = bytes.indexOf("\r\n\r\n", pos, "latin1");
    if (end === -1) break;
    const head = bytes.toString("latin1", pos, end);
    const length = Number(/\r\nContent-Length: (\d+)/i.exec(head)?.[1] ?? "0");
    const available = Math.min(length, bytes.length - end - 4);
    out.push({ status: Number(head.split(" ")[1]), length: available, complete: available === length });
    pos = end + 4 + length;
  }
  return out;
}

t.test("a large response read slowly but steadily arrives whole", async (t) => {
  const body = Buffer.alloc(32 * MiB, 0x61);
  const handler: Handler = () => ({ status: 200, body });
  const s = await listen(handler, SHORT);
  t.teardown(s.close);
  const started = Date.now();
  const { bytes, error } = await readSlowly(s.port, "GET / HTTP/1.1\r\nHost: t\r\n\r\n", 512 * 1024, 25);
  const took = Date.now() - started;
  const responses = frame(bytes);
  t.equal(responses.length, 1);
  t.equal(responses[0]?.length, body.length, `all ${body.length} body bytes arrived (took ${took} ms, timeouts 100 ms)`);
  t.equal(error, null, "no reset");
});

t.test("pipelined requests, answered to a slow reader: every response whole, no 408", async (t) => {
  const body = Buffer.alloc(12 * MiB, 0x62);
  let handled = 0;
  const handler: Handler = () => {
    handled++;
    return { status: 200, body };
  };
  const s = await listen(handler, SHORT);
  t.teardown(s.close);
  const get = "GET / HTTP/1.1\r\nHost: t\r\n\r\n";
  const { bytes, error } = await readSlowly(s.port, get + get + get + "GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", 512 * 1024, 25);
  const responses = frame(bytes);
  t.same(
    responses.map((r) => r.status),
    [200, 200, 200, 200],
    "four complete requests, four 200s (a 408 would say a head was late; they all arrived at once)",
  );
  t.ok(responses.every((r) => r.complete && r.length === body.length), "every body whole");
  t.equal(handled, 4);
  t.equal(error, null, "no reset");
});

t.test("a client that stops reading is cut off once its response has made no progress for the send timeout", async (t) => {
  const body = Buffer.alloc(32 * MiB, 0x63);
  // A paused client socket does not see its peer close; the trace hook tells when the server's side is gone.
  let serverClosed!: () => void;
  const closed = new Promise<void>((resolve) => (serverClosed = resolve));
  const quiet = () => {};
  const trace = () => ({ span: quiet, received: quiet, head: quiet, request: quiet, error: quiet, response: quiet, closed: () => serverClosed() });
  const s = await listen(() => ({ status: 200, body }), { ...SHORT, sendTimeoutMs: 200, trace });
  t.teardown(s.close);
  const socket = net.connect(s.port, "127.0.0.1");
  await once(socket, "connect");
  socket.pause(); // never reads: the response fills the kernel's buffers and stops there
  socket.on("error", () => {});
  socket.write("GET / HTTP/1.1\r\nHost: t\r\n\r\n");
  // Without the send watch nothing would end this connection: the other timers wait while a response is leaving.
  await closed;
  socket.resume();
  await once(socket, "close");
  t.ok(socket.bytesRead < body.length, `the connection closed with the response unread (${socket.bytesRead} of ${body.length} bytes)`);
});
