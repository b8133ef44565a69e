// A drip in flight at shutdown (docs/lab.md): the server, stopped with
// SIGTERM, waits for it up to the grace and then cuts it like any response
// in flight. The client gets the head and no last chunk, so it can tell the
// body is incomplete, and the process exits 0 without waiting for the rest of
// the drip's 30 s. (Runs the compiled server: `npm run build` first.)

import net from "node:net";
import { once } from "node:events";
import t from "tap";
import { startServer } from "../helpers/process.js";

t.test("SIGTERM cuts a drip in flight at the end of the grace, and the process exits 0", async (t) => {
  const server = startServer({ SHUTDOWN_GRACE_MS: "300", QUIET: "1" });
  const { port } = new URL(await server.url());
  const socket = net.connect(Number(port), "127.0.0.1");
  await once(socket, "connect");
  const received: Buffer[] = [];
  socket.on("data", (d: Buffer) => received.push(d));
  const closed = once(socket, "close");
  socket.write(`GET /api/lab/drip?numbytes=3&duration=30 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
  // The head is out: the drip is a response in flight (its first byte is due in 10 s).
  while (!Buffer.concat(received).includes("\r\n\r\n")) await once(socket, "data");
  server.child.kill("SIGTERM");
  // Only a bound on a hang: the drip alone would last 30 s.
  const hang = setTimeout(() => server.child.kill("SIGKILL"), 20_000);
  t.teardown(() => clearTimeout(hang));
  t.equal(await server.exited(), 0, "the process exits 0");
  await closed;
  const text = Buffer.concat(received).toString("latin1");
  t.match(text, /^HTTP\/1\.1 200 OK\r\n[\s\S]*Transfer-Encoding: chunked\r\n/, "the drip had started");
  t.notOk(text.endsWith("0\r\n\r\n"), "no last chunk: the client can tell the body was cut");
  t.notMatch(text.slice(text.indexOf("\r\n\r\n") + 4), /\*/, "none of the drip's bytes, whose first was 10 s away");
});
