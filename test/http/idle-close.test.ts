// An idle keep-alive connection is closed once its keep-alive timeout has
// passed since it became idle, and not before: in process, the deadline is
// checked at chosen instants, so no clock is waited for (test/http/socket.test.ts
// checks the same over a real socket, by order). And a wait for a close that
// never comes is reported as a hang, naming what it waited for, rather than
// left to the runner's timeout.

import { once } from "node:events";
import net from "node:net";
import t from "tap";
import { Connection } from "../../src/http/connection/connection.js";
import { DEFAULT_CONNECTION_OPTIONS } from "../../src/http/connection/options.js";
import { DEFAULT_LIMITS } from "../../src/http/parse/parser.js";
import { happens } from "../helpers/hang.js";
import { memorySocket } from "../helpers/memory-socket.js";
import { receivedUntilClose } from "../helpers/wire.js";

const KEEP_ALIVE = 1_000;

function idleConnection() {
  const memory = memorySocket();
  const connection = new Connection(
    memory.socket,
    () => ({ status: 200, body: "ok" }),
    { ...DEFAULT_CONNECTION_OPTIONS, limits: DEFAULT_LIMITS, keepAliveTimeoutMs: KEEP_ALIVE },
    { onHandlerError: () => {}, onClose: () => {} },
  );
  return { ...memory, connection, ended: once(memory.socket, "finish") };
}

t.test("in process: after a response, the connection is kept for the keep-alive timeout, then closed", async (t) => {
  const { socket, output, until, connection, ended } = idleConnection();
  socket.push("GET / HTTP/1.1\r\nHost: t\r\n\r\n");
  await happens(t, until(() => output().endsWith("ok")), "the response is out");
  const idleSince = Date.now();
  connection.checkDeadline(idleSince + KEEP_ALIVE / 2);
  t.notOk(socket.writableEnded, "half the timeout on: still open, for the next request");
  connection.checkDeadline(Date.now() + KEEP_ALIVE + 1);
  await happens(t, ended, "closed once the timeout has passed");
  t.equal(output().match(/HTTP\/1\.1 /g)?.length, 1, "nothing was written for the close: no 408 to a client that asked nothing");
});

t.test("in process: a connection that never sends a byte is idle from its start", async (t) => {
  const { socket, output, connection, ended } = idleConnection();
  connection.checkDeadline(Date.now() + KEEP_ALIVE / 2);
  t.notOk(socket.writableEnded, "within the timeout");
  connection.checkDeadline(Date.now() + KEEP_ALIVE + 1);
  await happens(t, ended, "closed");
  t.equal(output(), "", "silently");
});

t.test("a wait for a close that never comes fails as a hang, with what was received", async (t) => {
  // A server that answers and then keeps the connection open for ever: the bug this bound catches.
  const server = net.createServer((socket) => socket.write("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  t.teardown(() => server.close());
  const socket = net.connect((server.address() as net.AddressInfo).port, "127.0.0.1");
  await once(socket, "connect");
  await t.rejects(receivedUntilClose(socket, 200), /^hang: the server has not closed the connection 0\.2 s on; it sent 38 bytes: "HTTP\/1\.1 200 OK/);
  t.ok(socket.destroyed, "the socket is let go");
});
