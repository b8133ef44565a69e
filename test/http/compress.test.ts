// Content codings: br or gzip for bodies worth it, when asked; each coding
// with its own entity tag, and revalidation through it.

import t from "tap";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import net from "node:net";
import zlib from "node:zlib";
import { createApp } from "../../src/app.js";
import { MIN_COMPRESS_BYTES, chooseCoding, negotiateCoding, withCompression } from "../../src/http/message/compression.js";
import { inject } from "../../src/http/connection/inject.js";
import { createMemoryStore } from "../../src/store/memory.js";
import { seed } from "../../src/store/seed.js";
import { happens } from "../helpers/hang.js";
import { dechunk, listen, splitResponses, type RawResponse } from "../helpers/wire.js";

async function app() {
  const store = createMemoryStore();
  await seed(store);
  return createApp({ store });
}

async function one(server: Awaited<ReturnType<typeof app>>, method: string, path: string, headers: Record<string, string> = {}): Promise<{ r: RawResponse; raw: Buffer }> {
  let head = `${method} ${path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n`;
  for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
  const { output } = await inject(server, head + "\r\n");
  const [r] = splitResponses(output, [method === "HEAD"]);
  const raw = output.subarray(output.indexOf("\r\n\r\n") + 4);
  return { r: r!, raw };
}

t.test("chooseCoding follows the client's weights; br wins ties; q=0 refuses", async (t) => {
  t.equal(chooseCoding(undefined), null);
  t.equal(chooseCoding("identity"), null);
  t.equal(chooseCoding("gzip, deflate, br"), "br");
  t.equal(chooseCoding("gzip, br;q=0.5"), "gzip");
  t.equal(chooseCoding("*"), "br");
  t.equal(chooseCoding("*, br;q=0"), "gzip");
  t.equal(chooseCoding("gzip;q=0, br;q=0"), null);
  t.equal(chooseCoding("gzip;q=0.001"), "gzip");
});

t.test("the OpenAPI document goes out gzip-coded when asked, and decodes to the very same bytes", async (t) => {
  const server = await app();
  const plain = await one(server, "GET", "/api/openapi.json");
  const gz = await one(server, "GET", "/api/openapi.json", { "Accept-Encoding": "gzip" });
  t.equal(gz.r.headers["content-encoding"], "gzip");
  t.match(gz.r.headers.vary, /Accept-Encoding/);
  t.ok(gz.raw.length < plain.raw.length / 3, `${gz.raw.length} bytes instead of ${plain.raw.length}`);
  t.ok(zlib.gunzipSync(gz.raw).equals(plain.raw), "the same document");
  t.equal(gz.r.headers["content-length"], String(gz.raw.length));
  t.not(gz.r.headers.etag, plain.r.headers.etag, "each coding is its own representation");
  t.match(plain.r.headers.vary, /Accept-Encoding/, "even uncoded, caches are told the answer depends on Accept-Encoding");
});

t.test("br is chosen when preferred; the page decodes to the same HTML", async (t) => {
  const server = await app();
  const plain = await one(server, "GET", "/");
  const br = await one(server, "GET", "/", { "Accept-Encoding": "gzip, br" });
  t.equal(br.r.headers["content-encoding"], "br");
  t.ok(zlib.brotliDecompressSync(br.raw).equals(plain.raw));
});

t.test("a small body is never coded", async (t) => {
  const server = await app();
  const { r } = await one(server, "GET", "/api/v2/status", { "Accept-Encoding": "gzip, br" });
  t.equal(r.headers["content-encoding"], undefined);
});

t.test("the size limit is in UTF-8 bytes, not characters: 2- and 3-byte characters either side of it", async (t) => {
  const request = { fields: ["accept-encoding", "gzip"] } as unknown as Parameters<typeof negotiateCoding>[0];
  const coded = async (body: string) => {
    const response = await negotiateCoding(request, { status: 200, headers: { "Content-Type": "text/plain; charset=utf-8" }, body });
    return response.headers?.["Content-Encoding"] === "gzip";
  };
  const twoByte = "é"; // U+00E9: 2 bytes in UTF-8
  const threeByte = "€"; // U+20AC: 3 bytes
  t.equal(Buffer.byteLength(twoByte.repeat(MIN_COMPRESS_BYTES / 2)), MIN_COMPRESS_BYTES);
  t.equal(await coded(twoByte.repeat(MIN_COMPRESS_BYTES / 2)), true, "512 characters, 1024 bytes: coded");
  t.equal(await coded(twoByte.repeat(MIN_COMPRESS_BYTES / 2 - 1) + "a"), false, "1023 bytes: not coded");
  t.equal(await coded(threeByte.repeat(342)), true, "342 characters, 1026 bytes: coded");
  t.equal(await coded(threeByte.repeat(341)), false, "341 characters, 1023 bytes: not coded");
  t.equal(await coded("a".repeat(MIN_COMPRESS_BYTES)), true, "1024 ASCII characters: coded");
  t.equal(await coded("a".repeat(MIN_COMPRESS_BYTES - 1)), false, "1023 ASCII characters: not coded");
});

t.test("revalidation through a coded tag: 304 carrying that tag; HEAD announces the coded length", async (t) => {
  const server = await app();
  const gz = await one(server, "GET", "/api/openapi.json", { "Accept-Encoding": "gzip" });
  const again = await one(server, "GET", "/api/openapi.json", { "Accept-Encoding": "gzip", "If-None-Match": gz.r.headers.etag! });
  t.equal(again.r.status, 304);
  t.equal(again.r.headers.etag, gz.r.headers.etag);
  t.equal(again.r.headers["content-encoding"], undefined, "no coding on a 304 (it has no body)");
  const head = await one(server, "HEAD", "/api/openapi.json", { "Accept-Encoding": "gzip" });
  t.equal(head.r.headers["content-length"], gz.r.headers["content-length"]);
  t.equal(head.raw.length, 0);
});

t.test("a list of posts is compressed too, and its If-None-Match through the coded tag works", async (t) => {
  const server = await app();
  const body = JSON.stringify({ title: "Compressible", body: "words ".repeat(400) });
  const post = `POST /api/v1/post/zip HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
  t.equal(splitResponses((await inject(server, post)).output)[0]!.status, 201);
  const gz = await one(server, "GET", "/api/v1/post/zip", { "Accept-Encoding": "gzip" });
  t.equal(gz.r.headers["content-encoding"], "gzip");
  const again = await one(server, "GET", "/api/v1/post/zip", { "Accept-Encoding": "gzip", "If-None-Match": gz.r.headers.etag! });
  t.equal(again.r.status, 304);
});

/** A handler whose body is a stream of `pieces`, tagged; `closed` resolves when the stream was closed (finished or abandoned). */
function streaming(pieces: readonly string[]) {
  let closed!: () => void;
  const done = new Promise<void>((resolve) => (closed = resolve));
  const handler = withCompression({
    handle: () => ({
      status: 200,
      headers: { "Content-Type": "application/json", ETag: '"list-1"' },
      body: (async function* () {
        try {
          for (const piece of pieces) yield piece;
        } finally {
          closed();
        }
      })(),
    }),
  });
  return { handler, closed: done };
}

const PIECES = Array.from({ length: 40 }, (_, i) => JSON.stringify({ i, text: "streamed and coded ".repeat(200) }));

for (const [coding, decode] of [
  ["gzip", zlib.gunzipSync],
  ["br", zlib.brotliDecompressSync],
] as const) {
  t.test(`a body sent in pieces goes out ${coding}-coded, chunked, with the coding's own tag, and decodes to the pieces`, async (t) => {
    const { handler, closed } = streaming(PIECES);
    const { output } = await inject(handler, `GET / HTTP/1.1\r\nHost: t\r\nAccept-Encoding: ${coding}\r\nConnection: close\r\n\r\n`);
    const [r] = splitResponses(output);
    t.equal(r!.status, 200);
    t.equal(r!.headers["content-encoding"], coding);
    t.equal(r!.headers["transfer-encoding"], "chunked");
    t.equal(r!.headers["content-length"], undefined);
    t.equal(r!.headers.etag, `"list-1+${coding}"`);
    t.match(r!.headers.vary, /Accept-Encoding/);
    const { content } = dechunk(output, output.indexOf("\r\n\r\n") + 4);
    t.equal(decode(content).toString(), PIECES.join(""), "the coded body decodes to every piece, in order");
    t.ok(content.length < PIECES.join("").length / 4, `it is compressed (${content.length} bytes)`);
    await closed;
  });
}

t.test("a body sent in pieces is not coded for a client that does not ask, and says it could be", async (t) => {
  const { handler } = streaming(PIECES);
  const { output } = await inject(handler, "GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  const [r] = splitResponses(output);
  t.equal(r!.headers["content-encoding"], undefined);
  t.equal(r!.headers.etag, '"list-1"');
  t.match(r!.headers.vary, /Accept-Encoding/);
  t.equal(dechunk(output, output.indexOf("\r\n\r\n") + 4).content.toString(), PIECES.join(""));
});

t.test("a client that goes away during a coded stream: the stream is closed, its source released", async (t) => {
  // Random text barely compresses, so the coded body outgrows the socket buffers and the server must wait for the client.
  const noise = Array.from({ length: 400 }, () => randomBytes(48 * 1024).toString("base64"));
  const { handler, closed } = streaming(noise);
  const s = await listen(handler, { sendTimeoutMs: 60_000 });
  t.teardown(s.close);
  const socket = net.connect(s.port, "127.0.0.1");
  await once(socket, "connect");
  socket.write("GET / HTTP/1.1\r\nHost: t\r\nAccept-Encoding: gzip\r\n\r\n");
  await once(socket, "data");
  socket.destroy();
  await happens(t, closed, "the stream's source was closed after the client went away");
});

t.test("a coded stream whose producer writes every piece into one buffer: the coder consumed each before the next is asked for", async (t) => {
  const letter = (i: number) => 0x61 + (i % 26);
  const count = 200;
  const size = 20_000;
  const expected = Buffer.concat(Array.from({ length: count }, (_, i) => Buffer.alloc(size, letter(i))));
  for (const [coding, decode] of [
    ["gzip", zlib.gunzipSync],
    ["br", zlib.brotliDecompressSync],
  ] as const) {
    const handler = withCompression({
      handle: () => ({
        status: 200,
        headers: { "Content-Type": "text/plain" },
        body: (async function* () {
          const buffer = Buffer.alloc(size);
          for (let i = 0; i < count; i++) yield buffer.fill(letter(i));
        })(),
      }),
    });
    const { output } = await inject(handler, `GET / HTTP/1.1\r\nHost: t\r\nAccept-Encoding: ${coding}\r\nConnection: close\r\n\r\n`);
    t.equal(splitResponses(output)[0]!.headers["content-encoding"], coding);
    t.ok(decode(dechunk(output, output.indexOf("\r\n\r\n") + 4).content).equals(expected), `${coding}: every piece as it was when yielded`);
  }
});
