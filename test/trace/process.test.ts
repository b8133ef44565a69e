// TRACE=1 on the real server (node dist/src/main.js), over real sockets: a
// pipelined pair of requests and a malformed one, printed part by part. The
// server's output is a pipe here, not a terminal: the trace is plain text.

import net from "node:net";
import { once } from "node:events";
import t from "tap";
import { startServer, type ServerProcess } from "../helpers/process.js";

/** Sends `raw` on a connection of its own; resolves with what came back once `done` says it is all there (or the server closed). */
async function send(port: number, raw: string, done: (text: string) => boolean): Promise<string> {
  const socket = net.connect(port, "127.0.0.1");
  await once(socket, "connect");
  let text = "";
  const finished = new Promise<void>((resolve) => {
    socket.on("data", (d: Buffer) => {
      text += d.toString("latin1");
      if (done(text)) resolve();
    });
    socket.on("close", () => resolve());
  });
  socket.write(Buffer.from(raw, "latin1"));
  await finished;
  socket.destroy();
  return text;
}

async function stop(server: ServerProcess): Promise<void> {
  server.child.kill("SIGTERM");
  await server.exited();
}

t.test("TRACE=1: every part of a pipelined pair and of a malformed request, CR LF shown, decisions and the rule broken", async (t) => {
  const server = startServer({ TRACE: "1", QUIET: "1" });
  t.teardown(() => stop(server));
  const port = Number(new URL(await server.url()).port);

  const fact = "Traced over a socket.";
  const pair =
    "GET /api/v2/status HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\n\r\n" +
    `POST /api/v2/facts HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: ${fact.length}\r\n\r\n${fact}`;
  const answers = await send(port, pair, (text) => text.includes("201 Created") && text.endsWith("}"));
  t.match(answers, /^HTTP\/1\.1 200 OK\r\n[\s\S]*HTTP\/1\.1 201 Created\r\n/, "both answered");
  await server.line(/^#1 \* response 201: the connection stays open/);

  const malformed = "GET /api/v2/status HTTP/1.1\r\nHost : x\r\n\r\n";
  t.match(await send(port, malformed, () => false), /^HTTP\/1\.1 400 Bad Request\r\n/);
  await server.line(/^#2 \* connection closed/);

  const lines = server.lines;
  const has = (line: string | RegExp, what: string) =>
    t.ok(
      lines.some((l) => (typeof line === "string" ? l === line : line.test(l))),
      what,
    );
  // The first request, part by part: byte ranges, the parser's names for the parts, the bytes with CR LF made visible.
  has("#1 > 0-28        request-line    GET /api/v2/status HTTP/1.1\\r\\n", "the request line, with its CR LF");
  has("#1 >                             method GET, target /api/v2/status, version HTTP/1.1", "what is inside it");
  has("#1 > 29-37       field-line      Host: x\\r\\n", "a field line");
  has("#1 > 38-63       field-line      Accept: application/json\\r\\n", "another");
  has("#1 > 64-65       blank-line      \\r\\n", "the blank line");
  has("#1 * request 1: framing none: Neither Content-Length nor Transfer-Encoding: the request has no body (RFC 9112 §6.3)", "the framing decision");
  has("#1 * request 1: keep-alive: HTTP/1.1 without Connection: close: the connection stays open for the next request (RFC 9112 §9.3)", "the keep-alive decision");
  has("#1 < HTTP/1.1 200 OK\\r\\n", "the response's status line");
  has(/^#1 < Content-Length: 32\\r\\n$/, "its fields");
  has('#1 < {"response":"The server is up."}', "its body");
  // The second, pipelined behind it: offsets go on counting from the connection's first byte.
  const at = (text: string) => {
    const start = pair.indexOf(text);
    return `${start}-${start + text.length - 1}`.padEnd(11);
  };
  has(`#1 > ${at("POST /api/v2/facts HTTP/1.1\r\n")} request-line    POST /api/v2/facts HTTP/1.1\\r\\n`, "the second request line, at its offset in the stream");
  has(`#1 > ${at("Content-Length: 21\r\n")} field-line      Content-Length: 21\\r\\n`, "its Content-Length");
  has("#1 * request 2: framing content-length 21: Content-Length: the 21 bytes after the blank line are the body (RFC 9112 §6.3)", "its framing");
  has(`#1 > ${at(fact)} body            Traced over a socket.  (21 bytes)`, "its body");
  has("#1 < HTTP/1.1 201 Created\\r\\n", "its status line");
  // The malformed one: the rule, its RFC section, the fix, the offset, and the byte itself.
  has("#2 ! WHITESPACE_BEFORE_COLON at byte 33 (byte 33 of request 1): 400 Whitespace in a field name, or before its colon (RFC 9112 §5.1)", "the error code and offset");
  has("#2 !   fix: A field name is a token, so it holds no space or tab, and its colon follows it directly. If you meant `Name: value`, write it so: not `Name : value`, and not `My Header: value` (a name of several words takes hyphens: `My-Header`).", "the fix");
  has("#2 !   Host : x\\r\\n", "the line it is in");
  has("#2 !       ^ byte 33", "the byte, marked");
  has("#2 < HTTP/1.1 400 Bad Request\\r\\n", "the 400");
  has("#2 * response 400: Connection: close, the connection closes after it (RFC 9112 §9.6)", "and the close");
  t.notOk(
    lines.some((l) => l.includes("\x1b")),
    "plain text: the output is not a terminal",
  );
});

t.test("without TRACE nothing is traced; --trace is the same switch", async (t) => {
  const quiet = startServer({ QUIET: "1" });
  const traced = startServer({ QUIET: "1", TRACE_BODY_BYTES: "4" }, ["--trace"]);
  t.teardown(async () => {
    await stop(quiet);
    await stop(traced);
  });
  const request = "GET /api/v2/status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  for (const server of [quiet, traced]) {
    const port = Number(new URL(await server.url()).port);
    t.match(await send(port, request, () => false), /^HTTP\/1\.1 200 OK\r\n/);
  }
  await traced.line(/^#1 \* connection closed/);
  t.ok(traced.lines.includes('#1 < {"re ... (28 more bytes)'), "--trace traces, and TRACE_BODY_BYTES cuts the body");
  // The quiet server's exit is the event: everything it printed is in by then.
  await stop(quiet);
  t.same(
    quiet.lines.filter((l) => l.startsWith("#")),
    [],
    "no trace line without TRACE",
  );
});
