// A large body is echoed in pieces as the client reads them (src/api/echo-body.ts):
// the bytes must still be exactly those of the whole answer, for any body,
// wherever the pieces are cut (inside a character, a group of base64, an escape).

import { load } from "js-yaml";
import t from "tap";
import { ECHO_PIECE_BYTES, ECHO_WHOLE_BYTES, echoPieces, escapeInto } from "../../src/api/echo-body.js";
import { inject } from "../../src/http/connection/inject.js";
import { docsApp } from "../helpers/app.js";
import { dechunk } from "../helpers/wire.js";

async function echo(app: Parameters<typeof inject>[0], body: Buffer, accept?: string): Promise<{ head: string; text: string }> {
  const head =
    `POST /api/echo/x?y=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\nContent-Length: ${body.length}\r\n` +
    (accept === undefined ? "" : `Accept: ${accept}\r\n`) +
    "Connection: close\r\n\r\n";
  const { output } = await inject(app, Buffer.concat([Buffer.from(head, "latin1"), body]));
  const end = output.indexOf("\r\n\r\n");
  const responseHead = output.toString("latin1", 0, end);
  const content = /\r\nTransfer-Encoding: chunked\r\n/i.test(responseHead) ? dechunk(output, end + 4).content : output.subarray(end + 4);
  return { head: responseHead, text: content.toString("utf8") };
}

/** Characters that stress the cuts and the escapes: 1-, 2-, 3- and 4-byte UTF-8, controls, quotes, DEL, C1, separators, BOM. */
const ALPHABET = ["a", "\x00", "\x01", "\x1f", '"', "\\", "\n", "\t", "\x7f", "\u0085", "\u009f", "é", "€", "\u2028", "\u2029", "\ufeff", "😀", "𝄞", "/"];

function mixed(chars: number, seed: number): Buffer {
  let x = seed;
  let s = "";
  for (let i = 0; i < chars; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    s += ALPHABET[x % ALPHABET.length];
  }
  return Buffer.from(s, "utf8");
}

t.test("a large echo is streamed, and its JSON is exactly the whole answer's", async (t) => {
  const { app } = await docsApp();
  const bodies: [string, Buffer, "utf-8" | "base64"][] = [
    ["1 MiB of control bytes", Buffer.alloc(1024 * 1024, 0x01), "utf-8"],
    ["mixed characters, cut anywhere", mixed(ECHO_WHOLE_BYTES + 5 * ECHO_PIECE_BYTES + 1234, 7), "utf-8"],
    ["not UTF-8 (base64), a length that is no multiple of 3", Buffer.concat([Buffer.from([0xff, 0xfe]), mixed(ECHO_WHOLE_BYTES, 3)]), "base64"],
  ];
  for (const [name, body, encoding] of bodies) {
    t.ok(body.length > ECHO_WHOLE_BYTES, `${name}: above ECHO_WHOLE_BYTES`);
    const { head, text } = await echo(app, body);
    t.match(head, /^HTTP\/1\.1 200 /);
    t.match(head, /\r\nTransfer-Encoding: chunked(\r\n|$)/, `${name}: streamed`);
    t.match(head, /\r\nContent-Type: application\/json(\r\n|$)/);
    t.match(head, /\r\nCache-Control: no-store(\r\n|$)/);
    const parsed = JSON.parse(text);
    t.equal(text, JSON.stringify(parsed), `${name}: the bytes JSON.stringify gives for the whole`);
    t.equal(parsed.body.encoding, encoding);
    t.equal(parsed.body.length, body.length);
    t.ok(parsed.body.content === (encoding === "utf-8" ? body.toString("utf8") : body.toString("base64")), `${name}: the content, exactly`);
    t.equal(parsed.method, "POST");
    t.equal(parsed.target, "/api/echo/x?y=1");
    t.same(parsed.framing, { kind: "content-length", length: body.length });

    const yaml = await echo(app, body, "application/yaml");
    t.match(yaml.head, /\r\nContent-Type: application\/yaml(\r\n|$)/);
    const read = load(yaml.text) as typeof parsed;
    // The same echo but for the Accept field this request added.
    t.same({ ...read, headers: read.headers.filter((h: { name: string }) => h.name !== "accept") }, parsed, `${name}: the YAML reads back to the same echo`);
  }
});

t.test("a body at the threshold is answered whole, with a Content-Length, as before", async (t) => {
  const { app } = await docsApp();
  const body = mixed(ECHO_WHOLE_BYTES, 1).subarray(0, ECHO_WHOLE_BYTES);
  const { head, text } = await echo(app, Buffer.from(body));
  t.match(head, /\r\nContent-Length: \d+(\r\n|$)/);
  t.notMatch(head, /Transfer-Encoding/);
  t.equal(JSON.parse(text).body.length, ECHO_WHOLE_BYTES);
});

t.test("the content's escapes, written as bytes, are JSON.stringify's; in YAML the characters js-yaml refuses raw are escaped too", async (t) => {
  const out = Buffer.alloc(64);
  const chars = [...ALPHABET, ...Array.from({ length: 0x80 }, (_, b) => String.fromCharCode(b)), "\u00a0", "\u2027", "\u202a", "\ufefe", "\ufffd"];
  for (const c of chars) {
    const bytes = Buffer.from(c, "utf8");
    // Named by code point: a raw U+2028 would cut the test's own output line.
    const name = [...c].map((x) => "U+" + x.codePointAt(0)!.toString(16).padStart(4, "0")).join(" ");
    const json = JSON.stringify(c).slice(1, -1);
    t.equal(out.toString("utf8", 0, escapeInto(out, bytes, 0, bytes.length, "json")), json, `JSON: ${name}`);
    const yaml = json.replace(/[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]/g, (x) => "\\u" + x.charCodeAt(0).toString(16).padStart(4, "0"));
    t.equal(out.toString("utf8", 0, escapeInto(out, bytes, 0, bytes.length, "yaml")), yaml, `YAML: ${name}`);
  }
});

t.test("a large echo's content is written as bytes into one buffer, reused for every piece: no string, no new buffer per piece", async (t) => {
  const body = Buffer.alloc(1024 * 1024, 0x01);
  const buffers = new Set<ArrayBufferLike>();
  const copies: Buffer[] = [];
  let strings = 0;
  for await (const piece of echoPieces({ method: "POST" }, body, "utf-8", "json")) {
    if (typeof piece === "string") strings++;
    else buffers.add(piece.buffer);
    // A copy, as the socket takes one: the next piece is written over this one.
    copies.push(Buffer.from(piece));
  }
  t.equal(strings, 2, "text before and after the content only");
  t.equal(buffers.size, 1, "one buffer for the content's pieces");
  t.ok(copies.length > body.length / ECHO_PIECE_BYTES, `${copies.length} pieces`);
  t.equal(Buffer.concat(copies).toString("utf8"), JSON.stringify({ method: "POST", body: { length: body.length, encoding: "utf-8", content: body.toString("utf8") } }));
});
