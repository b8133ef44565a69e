// The connection's trace hook (src/http/connection/trace-hook.ts): one trace per
// connection, told the bytes received before the parser reads them, every
// span, the parser's verdicts, and every response exactly as written.

import net from "node:net";
import { once } from "node:events";
import t from "tap";
import type { ConnectionTrace } from "../../src/http/connection/trace-hook.js";
import { listen, readUntil } from "../helpers/wire.js";

t.test("a trace is told, in order, what the connection read, what the parser made of it, and what was written", async (t) => {
  const calls: string[] = [];
  let received = "";
  let peers = 0;
  const trace = (peer: { remoteAddress?: string | undefined }): ConnectionTrace => {
    peers++;
    calls.push(`open ${peer.remoteAddress}`);
    return {
      received: (chunk) => void ((received += chunk.toString("latin1")), calls.push(`received ${chunk.length}`)),
      // An error span is empty: it marks a byte, and reads as "error ".
      span: (kind, start, end) => void calls.push(`${kind} ${received.slice(start, end)}`),
      head: (head) => void calls.push(`head ${head.method} ${head.framing.kind}`),
      request: (request) => void calls.push(`request ${request.body.toString("latin1")}`),
      error: (error) => void calls.push(`error ${error.code} ${error.offset}`),
      response: (head, body) => void calls.push(`response ${head.split("\r\n")[0]} ${typeof body === "string" ? body : body === undefined ? "-" : Buffer.from(body).toString()}`),
      closed: () => void calls.push("closed"),
    };
  };
  const server = await listen(
    (request) => ({ status: 200, headers: { "Content-Type": "text/plain" }, body: `got ${request.body.length}` }),
    { trace },
  );
  t.teardown(() => server.close());
  const socket = net.connect(server.port, "127.0.0.1");
  await once(socket, "connect");
  const closed = once(socket, "close");
  const answer = readUntil(socket, "HTTP/1.1 400");
  const head = "POST /a HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n";
  socket.write(head);
  await readUntil(socket, "100 Continue\r\n\r\n");
  socket.write("hiGET /b HTTP/1.1\r\nHost : h\r\n\r\n");
  const text = await answer;
  await closed;
  await server.close();
  t.equal(peers, 1, "one trace for the connection");
  t.same(calls.filter((c) => !c.startsWith("received")), [
    "open 127.0.0.1",
    "method POST",
    "target /a",
    "version HTTP/1.1",
    "request-line POST /a HTTP/1.1\r\n",
    "field-name Host",
    "field-value h",
    "field-line Host: h\r\n",
    "field-name Expect",
    "field-value 100-continue",
    "field-line Expect: 100-continue\r\n",
    "field-name Content-Length",
    "field-value 2",
    "field-line Content-Length: 2\r\n",
    "blank-line \r\n",
    "head POST length",
    "response HTTP/1.1 100 Continue -",
    "body hi",
    "request hi",
    "response HTTP/1.1 200 OK got 2",
    "method GET",
    "target /b",
    "version HTTP/1.1",
    "request-line GET /b HTTP/1.1\r\n",
    "error ",
    "error WHITESPACE_BEFORE_COLON 21",
    `response HTTP/1.1 400 Bad Request ${Buffer.from(text.slice(text.lastIndexOf("\r\n\r\n") + 4), "latin1").toString("utf8")}`,
    "closed",
  ]);
  // Each span's text above was read from the bytes told so far: they were told before the parser reported on them.
  t.match(calls[1], /^received /, "the bytes come first");
  t.equal(received, "POST /a HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhiGET /b HTTP/1.1\r\nHost : h\r\n\r\n");
});
