// The wire view shows the bytes a socket would get: for the same request
// bytes, its responses have the status lines and header fields (all but
// Date) that a client keeping a real connection open receives, and it answers
// exactly the requests the socket answers.

import net from "node:net";
import { once } from "node:events";
import t from "tap";
import { load } from "js-yaml";
import { ADMIN, docsApp, wire } from "../helpers/app.js";
import type { Store } from "../../src/store/types.js";
import { dechunk, listen } from "../helpers/wire.js";

/** Each complete response's head lines (status line first, Date left out), and where the complete ones end. */
function heads(bytes: Buffer, headRequests: readonly boolean[]): { heads: string[][]; end: number } {
  const out: string[][] = [];
  let pos = 0;
  for (;;) {
    const end = bytes.indexOf("\r\n\r\n", pos, "latin1");
    if (end === -1) break;
    const lines = bytes.toString("latin1", pos, end).split("\r\n");
    const status = Number(lines[0]!.split(" ")[1]);
    const length = /^content-length: *(\d+)$/im.exec(lines.join("\n"))?.[1];
    const chunked = /^transfer-encoding: *chunked$/im.test(lines.join("\n"));
    const final = status >= 200;
    const isHead = final && headRequests[out.filter((h) => Number(h[0]!.split(" ")[1]) >= 200).length] === true;
    let bodyEnd = end + 4 + (final && !isHead && length !== undefined ? Number(length) : 0);
    if (final && !isHead && chunked) {
      try {
        bodyEnd = dechunk(bytes, end + 4).next;
      } catch {
        break; // its last chunk has not come yet
      }
    }
    if (bodyEnd > bytes.length) break;
    out.push(lines.filter((l) => !/^date:/i.test(l)));
    pos = bodyEnd;
  }
  return { heads: out, end: pos };
}

/** Three posts, so that a list has something to stream. */
async function posts(store: Store): Promise<void> {
  for (const id of ["one", "two", "three"]) await store.posts.create({ id, title: `Post ${id}`, body: "Listed." });
}

/**
 * Sends `raw` on a real connection that stays open (no half-close), and
 * collects responses until `expected` final ones are complete or the server
 * closes.
 */
async function overSocket(raw: string, expected: number, headRequests: readonly boolean[] = [], prepare = posts): Promise<string[][]> {
  const { app, store } = await docsApp();
  await prepare(store);
  const server = await listen(app);
  try {
    const socket = net.connect(server.port, "127.0.0.1");
    await once(socket, "connect");
    const received: Buffer[] = [];
    const closed = once(socket, "close");
    const done = new Promise<void>((resolve) => {
      const check = () => {
        const got = heads(Buffer.concat(received), headRequests).heads.filter((h) => Number(h[0]!.split(" ")[1]) >= 200);
        if (got.length >= expected) resolve();
      };
      socket.on("data", (d: Buffer) => {
        received.push(d);
        check();
      });
      void closed.then(() => resolve());
    });
    socket.write(Buffer.from(raw, "latin1"));
    await done;
    socket.destroy();
    return heads(Buffer.concat(received), headRequests).heads;
  } finally {
    await server.close();
  }
}

/** The same bytes through POST /api/wire, on an app of its own with the same seed. */
async function throughWire(raw: string, headRequests: readonly boolean[] = [], prepare = posts): Promise<{ heads: string[][]; body: any }> {
  const { app, store } = await docsApp();
  await prepare(store);
  const { status, body } = await wire(app, raw);
  if (status !== 200) throw new Error(`the wire view answered ${status}`);
  return { heads: heads(Buffer.from(body.response.raw, "utf8"), headRequests).heads, body };
}

/** ETag values hash bodies that hold a time (of the seed, of a write): only their presence is compared. */
const maskEtag = (hs: string[][]) => hs.map((h) => h.map((l) => l.replace(/^(etag:).*$/i, "$1 (masked)")));

t.test("database-backed routes: the same status line and fields as a socket, and no Connection: close it does not send", async (t) => {
  const patch = '{"title": "Same over the wire"}';
  const cases: Record<string, string> = {
    "GET article": "GET /api/v1/artigo/1 HTTP/1.1\r\nHost: x\r\n\r\n",
    UPDATE: `UPDATE /api/v1/artigo/2 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN}\r\nContent-Type: application/json\r\nContent-Length: ${patch.length}\r\n\r\n${patch}`,
    "POST fact": "POST /api/v2/facts HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 24\r\n\r\nThe wire view is honest.",
    "GET article, then GET status": "GET /api/v1/artigo/3 HTTP/1.1\r\nHost: x\r\n\r\nGET /api/v2/status HTTP/1.1\r\nHost: x\r\n\r\n",
  };
  for (const [name, raw] of Object.entries(cases)) {
    const expected = raw.split(" HTTP/1.1\r\n").length - 1;
    const socket = maskEtag(await overSocket(raw, expected));
    const viaWire = maskEtag((await throughWire(raw)).heads);
    t.equal(socket.length, expected, `${name}: the socket answered every request`);
    t.same(viaWire, socket, `${name}: the wire view's responses are the socket's`);
    t.notOk(viaWire.flat().some((l) => /^connection: close$/i.test(l)), `${name}: no Connection: close`);
  }
});

t.test("a request pipelined after a response over 16 KiB is answered, as on a socket", async (t) => {
  // The page's HTML is far over 16 KiB: writing it fills the in-memory socket's buffer and pauses the parser.
  const raw = "GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /api/v2/status HTTP/1.1\r\nHost: x\r\n\r\nGET /api/v1/artigo/1 HTTP/1.1\r\nHost: x\r\n\r\n";
  const socket = maskEtag(await overSocket(raw, 3));
  const { heads: wireHeads, body } = await throughWire(raw);
  const viaWire = maskEtag(wireHeads);
  t.ok(Number(/^content-length: (\d+)$/im.exec(socket[0]!.join("\n"))![1]) > 16 * 1024, "the first response is over 16 KiB");
  t.same(viaWire, socket, "the same three responses");
  t.same(
    body.request.requests.map((r: any) => r.state),
    ["complete", "complete", "complete"],
  );
  t.same(body.response.responses.map((r: any) => r.answers), [0, 1, 2], "every request the view calls complete has its answer");
});

t.test("a body of more requests than the wire view runs: its responses are the first ones a socket sends for those bytes", async (t) => {
  // Ten pipelined requests of several kinds (a list streamed, an article from the store, the status), then two more.
  const kinds = ["GET /api/v2/status", "GET /api/v1/posts", "GET /api/v1/artigo/1"].map((line) => `${line} HTTP/1.1\r\nHost: x\r\n\r\n`);
  const requests = Array.from({ length: 12 }, (_, i) => kinds[i % kinds.length]!);
  const raw = requests.join("");
  const socket = maskEtag(await overSocket(raw, 12));
  const { heads: wireHeads, body } = await throughWire(raw);
  t.equal(socket.length, 12, "the socket answers all twelve");
  t.same(maskEtag(wireHeads), socket.slice(0, 10), "the wire view's ten responses are the socket's first ten");
  t.same(body.response.responses.map((r: any) => r.answers), Array.from({ length: 10 }, (_, i) => i), "each answers its request");
  t.equal(body.request.unread.start, requests.slice(0, 10).join("").length, "the rest is shown as not run");
});

t.test("a head its route refuses is refused as on a socket: answered at once, its body and what follows never read", async (t) => {
  const status = "GET /api/v2/status HTTP/1.1\r\nHost: x\r\n\r\n";
  const json = '{"text": "A fact."}';
  const cases: Record<string, { raw: string; status: number; state: string }> = {
    // The facts route takes text/plain only: 415 from the head.
    "a body of a type the route does not take": {
      raw: `POST /api/v2/facts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${json.length}\r\n\r\n${json}${status}`,
      status: 415,
      state: "refused",
    },
    // And at most 4 KiB: a longer Content-Length is a 413 from the head, the parser's own error.
    "a body longer than the route takes": {
      raw: `POST /api/v2/facts HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 5000\r\n\r\n${"x".repeat(5000)}${status}`,
      status: 413,
      state: "error",
    },
  };
  for (const [name, c] of Object.entries(cases)) {
    const headEnd = c.raw.indexOf("\r\n\r\n") + 4;
    const socket = await overSocket(c.raw, 2);
    const { heads: viaWire, body } = await throughWire(c.raw);
    t.equal(socket.length, 1, `${name}: the socket answers the first request only`);
    t.equal(Number(socket[0]![0]!.split(" ")[1]), c.status);
    t.ok(socket[0]!.includes("Connection: close"), `${name}: and closes`);
    t.same(viaWire, socket, `${name}: the wire view's responses are the socket's`);
    t.same(
      body.request.requests.map((r: any) => [r.state, r.end]),
      [[c.state, headEnd]],
      `${name}: the request ends at its head`,
    );
    t.match(body.request.unread, { kind: "unread", start: headEnd, end: c.raw.length }, `${name}: the body and the next request are never read`);
  }
});

t.test("a streamed list, and requests pipelined behind it: chunked as on a socket, every one answered", async (t) => {
  // YAML is made as the list streams, so even three posts go out chunked (a JSON list this short goes whole).
  const raw =
    "GET /api/v1/posts HTTP/1.1\r\nHost: x\r\nAccept: application/yaml\r\n\r\n" +
    "GET /api/v2/status HTTP/1.1\r\nHost: x\r\n\r\n" +
    "HEAD /api/v1/posts HTTP/1.1\r\nHost: x\r\n\r\n" +
    "GET /api/v1/posts HTTP/1.1\r\nHost: x\r\n\r\n";
  const headRequests = [false, false, true, false];
  const socket = maskEtag(await overSocket(raw, 4, headRequests));
  const { heads: wireHeads, body } = await throughWire(raw, headRequests);
  t.ok(socket[0]!.includes("Transfer-Encoding: chunked"), "a socket gets the list streamed");
  t.same(maskEtag(wireHeads), socket, "the wire view's responses are the socket's");
  t.same(body.response.responses.map((r: any) => r.answers), [0, 1, 2, 3]);
  const list = body.response.responses[0];
  t.same(
    [...new Set(list.parts.map((p: any) => p.kind))],
    ["status-line", "field", "blank-line", "chunk-size", "chunk-data", "chunk-end", "last-chunk"],
    "its body is read as chunks",
  );
  const content = list.parts.filter((p: any) => p.kind === "chunk-data").map((p: any) => p.text).join("");
  t.same((load(content) as any).posts.map((p: any) => p.id), ["one", "two", "three"], "whose data is the list");
  let at = list.start;
  for (const p of list.parts) {
    t.equal(p.start, at, `${p.kind} follows on`);
    at = p.end;
  }
  t.equal(at, list.end, "the parts tile the response");
});

t.test("a request run through the wire view is its sender's: the lab's ip names the address the wire view was sent from", async (t) => {
  const { app } = await docsApp();
  const server = await listen(app);
  t.teardown(() => server.close());
  const inner = "GET /api/lab/ip HTTP/1.1\r\nHost: x\r\n\r\n";
  const socket = net.connect(server.port, "127.0.0.1");
  await once(socket, "connect");
  const mine = socket.localAddress!;
  const received: Buffer[] = [];
  socket.on("data", (d: Buffer) => received.push(d));
  const ended = once(socket, "end");
  socket.end(`POST /api/wire HTTP/1.1\r\nHost: x\r\nContent-Type: message/http\r\nContent-Length: ${inner.length}\r\nConnection: close\r\n\r\n${inner}`);
  await ended;
  const out = Buffer.concat(received).toString("latin1");
  const head = out.indexOf("\r\n\r\n");
  const bodyBytes = /^transfer-encoding: *chunked$/im.test(out.slice(0, head)) ? dechunk(Buffer.from(out, "latin1"), head + 4).content : Buffer.from(out.slice(head + 4), "latin1");
  const view = JSON.parse(bodyBytes.toString("utf8"));
  const raw: string = view.response.raw;
  t.same(JSON.parse(raw.slice(raw.indexOf("\r\n\r\n") + 4)), { origin: mine }, `origin ${mine}, the wire view's sender`);
});
