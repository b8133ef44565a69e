// The lab's answer that holds the echo of the request (cache/:seconds) is
// made as the echo's own: a large body in pieces
// as the client reads them, never whole. Rendered whole, 1 MiB of control
// bytes was 6 MB of JSON per client: 40 clients that never read took the
// server from 80 to 430 MiB.

import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";
import t from "tap";
import { ECHO_WHOLE_BYTES } from "../../src/api/echo-body.js";
import { inject } from "../../src/http/connection/inject.js";
import { docsApp } from "../helpers/app.js";
import { dechunk, talk } from "../helpers/wire.js";
import { startApi } from "./client.js";

const DECODE: Record<string, (b: Buffer) => Buffer> = { gzip: gunzipSync, deflate: inflateSync, br: brotliDecompressSync };

function post(target: string, body: Buffer): Buffer {
  const head = `POST ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, "latin1"), body]);
}

/** The head, and the content with chunked framing and the content coding undone. */
function read(output: Buffer): { head: string; chunked: boolean; coded: Buffer; text: string } {
  const end = output.indexOf("\r\n\r\n");
  const head = output.toString("latin1", 0, end);
  const chunked = /\r\nTransfer-Encoding: chunked\r\n/i.test(head + "\r\n");
  const coded = chunked ? dechunk(output, end + 4).content : output.subarray(end + 4);
  const coding = /\r\nContent-Encoding: (\S+)/i.exec(head)?.[1];
  return { head, chunked, coded, text: (coding === undefined ? coded : DECODE[coding]!(coded)).toString("utf8") };
}

/** Each lab answer that holds the echo: its target, and where the echo sits in its JSON. */
const ANSWERS: [string, (doc: any) => any][] = [
  ["/api/lab/cache/60", (doc) => doc],
];

const BODIES: [string, Buffer, "utf-8" | "base64"][] = [
  ["1 MiB of control bytes (6 MB of JSON)", Buffer.alloc(1024 * 1024, 0x01), "utf-8"],
  ["a body that is not UTF-8 (base64)", Buffer.concat([Buffer.from([0xff]), Buffer.alloc(ECHO_WHOLE_BYTES + 10, 0x61)]), "base64"],
];

t.test("a large body is echoed in pieces by each lab answer that holds the echo, and the JSON is the whole answer's", async (t) => {
  const { app } = await docsApp();
  for (const [target, echoOf] of ANSWERS) {
    for (const [name, body, encoding] of BODIES) {
      const { head, chunked, text } = read((await inject(app, post(target, body))).output);
      t.match(head, /^HTTP\/1\.1 200 /, `${target}, ${name}`);
      t.ok(chunked, `${target}, ${name}: streamed, not rendered whole`);
      const doc = JSON.parse(text);
      t.equal(text, JSON.stringify(doc), `${target}, ${name}: the bytes JSON.stringify gives for the whole`);
      const echo = echoOf(doc);
      t.equal(echo.method, "POST");
      t.equal(echo.target, target);
      t.same(echo.framing, { kind: "content-length", length: body.length });
      t.same(echo.body.length, body.length);
      t.equal(echo.body.encoding, encoding);
      t.ok(echo.body.content === (encoding === "utf-8" ? body.toString("utf8") : body.toString("base64")), `${target}, ${name}: the content, exactly`);
    }
  }
});

t.test("a small body is still answered whole", async (t) => {
  const { app } = await docsApp();
  const body = Buffer.from("a small body to echo, ".repeat(200));
  for (const [target, echoOf] of ANSWERS) {
    const { head, chunked, text } = read((await inject(app, post(target, body))).output);
    t.notOk(chunked, `${target}: whole`);
    t.match(head, /\r\nContent-Length: \d+/, `${target}: with its length`);
    t.equal(echoOf(JSON.parse(text)).body.content, body.toString("utf8"), `${target}: the content`);
  }
});

t.test("over a socket: the large echoes arrive whole and decode", async (t) => {
  const api = await startApi(t);
  const body = BODIES[0]![1];
  for (const [target, echoOf] of ANSWERS) {
    const { head, chunked, text } = read(await talk(api.port, [post(target, body)]));
    t.match(head, /^HTTP\/1\.1 200 /, target);
    t.ok(chunked, `${target}: streamed`);
    t.ok(echoOf(JSON.parse(text)).body.content === body.toString("utf8"), `${target}: the content, exactly`);
  }
});
