// The server binary's own defaults, read through the binary: every other test
// starts servers with the engine's defaults (createServer's) or names its
// settings, so a default that src/config.ts gets wrong for `npm start` alone
// (bare LF accepted, a limit twice what docs/settings.md says) would pass
// them all. Each limit is probed on both sides of its documented default.

import t, { type Test } from "tap";
import { startServer } from "./helpers/process.js";
import { splitResponses, talk } from "./helpers/wire.js";

async function binary(t: Test, env: Record<string, string> = {}): Promise<number> {
  const server = startServer({ QUIET: "1", ...env });
  t.teardown(async () => {
    server.child.kill("SIGTERM");
    await server.exited();
  });
  return Number(new URL(await server.url()).port);
}

async function statusOf(port: number, bytes: string): Promise<number> {
  const [response] = splitResponses(await talk(port, [bytes]));
  return response!.status;
}

const tail = "Host: x\r\nConnection: close\r\n\r\n";

t.test("with no settings: bare LF refused, and each limit where docs/settings.md puts it", async (t) => {
  const port = await binary(t);
  t.equal(await statusOf(port, "GET /api/v2/status HTTP/1.1\nHost: x\nConnection: close\n\n"), 400, "ALLOW_BARE_LF is off: a bare LF ends no line");

  // MAX_REQUEST_LINE_BYTES 8192, CR LF excluded.
  const line = (n: number) => {
    const start = "GET /api/echo?";
    const end = " HTTP/1.1";
    return `${start}${"a".repeat(n - start.length - end.length)}${end}\r\n`;
  };
  t.equal(await statusOf(port, line(8192) + tail), 200, "a request line of 8192 bytes is read");
  t.equal(await statusOf(port, line(8193) + tail), 414, "8193 is one too many");

  // MAX_HEADER_COUNT 100 (Host and Connection are two of them).
  const fields = (n: number) => Array.from({ length: n - 2 }, (_, i) => `X-F${i}: v\r\n`).join("");
  t.equal(await statusOf(port, `GET /api/v2/status HTTP/1.1\r\n${fields(100)}${tail}`), 200, "100 fields");
  t.equal(await statusOf(port, `GET /api/v2/status HTTP/1.1\r\n${fields(101)}${tail}`), 431, "101 fields");

  // MAX_HEADER_BYTES 16384: a section well inside and one just past it.
  const section = (bytes: number) => `X-Fill: ${"f".repeat(bytes - tail.length - 10)}\r\n`;
  t.equal(await statusOf(port, `GET /api/v2/status HTTP/1.1\r\n${section(16384 - 64)}${tail}`), 200, "a header section just under 16 KiB");
  t.equal(await statusOf(port, `GET /api/v2/status HTTP/1.1\r\n${section(16384 + 64)}${tail}`), 431, "one just over");

  // MAX_BODY_BYTES 1048576: decided from Content-Length, so the body itself need not be sent.
  const post = (length: number) => `POST /api/echo HTTP/1.1\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n${tail}`;
  const [cont] = splitResponses(await talk(port, [post(1048576)], { halfClose: true }));
  t.equal(cont!.status, 100, "a body of 1 MiB is asked for (100 Continue)");
  t.equal(await statusOf(port, post(1048577)), 413, "one byte more is refused from the head");

  // MAX_CHUNK_EXTENSION_BYTES 4096, over the message.
  const chunked = (extension: number) => `POST /api/echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n${tail}1;x=${"e".repeat(extension - 2)}\r\na\r\n0\r\n\r\n`;
  t.equal(await statusOf(port, chunked(4096 - 64)), 200, "chunk extensions just under 4 KiB");
  t.equal(await statusOf(port, chunked(4096 + 64)), 400, "just over");
});

t.test("ALLOW_BARE_LF=1 turns it on, through the binary", async (t) => {
  const port = await binary(t, { ALLOW_BARE_LF: "1" });
  t.equal(await statusOf(port, "GET /api/v2/status HTTP/1.1\nHost: x\nConnection: close\n\n"), 200);
});
