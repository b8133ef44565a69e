// The lab's brotli answer is coded with the server's own settings (quality
// 5), not brotli's default (quality 11), which cost 2 s of CPU per MiB of
// echo in libuv's thread pool, where every other compressed answer waited:
// eight 1 MiB requests to /api/lab/brotli held a gzip'd article for 5.9 s.

import { brotliCompressSync, brotliDecompressSync } from "node:zlib";
import t from "tap";
import { inject } from "../../src/http/connection/inject.js";
import { BROTLI_OPTIONS } from "../../src/http/message/compression.js";
import { docsApp } from "../helpers/app.js";

t.test("/api/lab/brotli gives the bytes brotli gives at the server's quality, not at its default", async (t) => {
  const { app } = await docsApp();
  const body = Buffer.from("a small body to echo, ".repeat(200));
  const head = `POST /api/lab/brotli HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
  const { output } = await inject(app, Buffer.concat([Buffer.from(head, "latin1"), body]));
  const end = output.indexOf("\r\n\r\n");
  t.match(output.toString("latin1", 0, end), /\r\nContent-Encoding: br\r\n/);
  const coded = output.subarray(end + 4);
  const text = brotliDecompressSync(coded);
  t.match(JSON.parse(text.toString("utf8")), { brotli: true, method: "POST", headers: { "Content-Type": "text/plain" } });
  t.ok(coded.equals(brotliCompressSync(text, BROTLI_OPTIONS)), "quality 5");
});
