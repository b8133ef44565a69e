// What the route table says a route cannot take is refused from the head,
// before the body is read: the client is answered at once and never has to
// send (nor the server read) a body that would be refused anyway.

import t from "tap";
import net from "node:net";
import { once } from "node:events";
import { createApp } from "../../src/app.js";
import { inject } from "../../src/http/connection/inject.js";
import { createMemoryStore } from "../../src/store/memory.js";
import { seed } from "../../src/store/seed.js";
import { listen, readUntil, splitResponses } from "../helpers/wire.js";

async function app() {
  const store = createMemoryStore();
  await seed(store);
  return createApp({ store });
}

/** Sends only a head that announces `length` body bytes; resolves with the answer the server gives before any body byte. */
async function headOnly(port: number, head: string): Promise<{ text: string; closed: Promise<unknown> }> {
  const socket = net.connect(port, "127.0.0.1");
  await once(socket, "connect");
  const closed = once(socket, "close");
  socket.write(head);
  // The problem body is one flat JSON object: its closing brace ends the response.
  const text = await readUntil(socket, "}");
  return { text, closed };
}

t.test("a 1 MiB body of a type the route does not take gets its 415 before a byte of it is sent", async (t) => {
  // A body timeout far beyond the test: only an answer from the head can come in time.
  const s = await listen(await app(), { bodyTimeoutMs: 60_000, requestTimeoutMs: 60_000 });
  t.teardown(s.close);
  const { text, closed } = await headOnly(
    s.port,
    `POST /api/v2/facts HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: ${1024 * 1024}\r\n\r\n`,
  );
  const [r] = splitResponses(Buffer.from(text, "latin1"));
  t.equal(r!.status, 415);
  t.equal(r!.headers["accept-post"], "text/plain", "says what to send instead");
  t.equal(r!.headers.connection, "close", "the unread body cannot be told from a next request: the connection closes");
  t.match(JSON.parse(r!.body).detail, /Send the body as text\/plain/);
  await closed;
});

t.test("Expect: 100-continue with a refused type gets the 415 and no 100 Continue", async (t) => {
  const s = await listen(await app(), { bodyTimeoutMs: 60_000, requestTimeoutMs: 60_000 });
  t.teardown(s.close);
  const { text } = await headOnly(
    s.port,
    "POST /api/v1/post/early HTTP/1.1\r\nHost: t\r\nContent-Type: text/csv\r\nExpect: 100-continue\r\nContent-Length: 500000\r\n\r\n",
  );
  t.match(text, /^HTTP\/1\.1 415 /, "the first thing sent is the 415");
  t.notMatch(text, /100 Continue/);
});

t.test("a Content-Length over the route's own limit gets its 413 from the head", async (t) => {
  const s = await listen(await app(), { bodyTimeoutMs: 60_000, requestTimeoutMs: 60_000 });
  t.teardown(s.close);
  const { text } = await headOnly(s.port, "POST /api/v2/facts HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\n");
  const [r] = splitResponses(Buffer.from(text, "latin1"));
  t.equal(r!.status, 413);
  t.match(JSON.parse(r!.body).detail, /\/api\/v2\/facts takes at most 4096/);
});

t.test("Expect: 100-continue with a Content-Length over the route's limit gets the 413 and no 100 Continue", async (t) => {
  // The 100 would invite the client to send 100,000 bytes that are then refused unread.
  const s = await listen(await app(), { bodyTimeoutMs: 60_000, requestTimeoutMs: 60_000 });
  t.teardown(s.close);
  const { text, closed } = await headOnly(
    s.port,
    "POST /api/v2/facts HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\nExpect: 100-continue\r\nContent-Length: 100000\r\n\r\n",
  );
  t.match(text, /^HTTP\/1\.1 413 /, "the first thing sent is the 413");
  t.notMatch(text, /100 Continue/);
  await closed;
});

t.test("Expect: 100-continue with a Content-Length within the route's limit gets its 100, then the answer", async (t) => {
  const s = await listen(await app(), { bodyTimeoutMs: 60_000, requestTimeoutMs: 60_000 });
  t.teardown(s.close);
  const sentence = "A fact sent after the interim answer.";
  const socket = net.connect(s.port, "127.0.0.1");
  await once(socket, "connect");
  t.teardown(() => socket.destroy());
  socket.write(`POST /api/v2/facts HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\nExpect: 100-continue\r\nContent-Length: ${sentence.length}\r\n\r\n`);
  t.equal(await readUntil(socket, "\r\n\r\n"), "HTTP/1.1 100 Continue\r\n\r\n");
  socket.write(sentence);
  t.match(await readUntil(socket, "}"), /^HTTP\/1\.1 201 /);
});

t.test("a chunked body that grows past the route's limit is cut off with a 413", async (t) => {
  const server = await app();
  const chunk = "a".repeat(1000);
  const body = `${(1000).toString(16)}\r\n${chunk}\r\n`.repeat(5) + "0\r\n\r\n";
  const { output } = await inject(server, `POST /api/v2/facts HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n${body}`);
  const rs = splitResponses(output);
  t.equal(rs.length, 1);
  t.equal(rs[0]!.status, 413);
  t.equal(rs[0]!.headers.connection, "close");
});

t.test("in process too: the same 415 from the head, and a body the route takes is still served", async (t) => {
  const server = await app();
  const refused = splitResponses(
    (await inject(server, "POST /api/v2/facts HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")).output,
  );
  t.equal(refused[0]!.status, 415);
  const sentence = "A fact sent as plain text.";
  const served = splitResponses(
    (
      await inject(
        server,
        `POST /api/v2/facts HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${sentence.length}\r\nConnection: close\r\n\r\n${sentence}`,
      )
    ).output,
  );
  t.equal(served[0]!.status, 201);
  t.equal(JSON.parse(served[0]!.body).text, sentence);
});

t.test("a head without a body is not judged: the handler answers as before", async (t) => {
  const server = await app();
  const rs = splitResponses((await inject(server, "POST /api/v2/facts HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")).output);
  t.equal(rs[0]!.status, 415, "still a 415 (no Content-Type), from the handler");
  t.not(rs[0]!.headers.connection, undefined);
});

t.test("a 415 says what to send in the field for its method: Accept-Patch for a patch, Accept-Post for a POST", async (t) => {
  const server = await app();
  const patch = splitResponses(
    (await inject(server, "PATCH /api/v1/post/x HTTP/1.1\r\nHost: t\r\nContent-Type: text/csv\r\nContent-Length: 2\r\n\r\nab")).output,
  )[0]!;
  t.equal(patch.status, 415);
  t.equal(patch.headers["accept-patch"], "application/merge-patch+json, application/json", "RFC 5789 §3.1");
  t.equal(patch.headers["accept-post"], undefined);
  const post = splitResponses((await inject(server, "POST /api/v2/facts HTTP/1.1\r\nHost: t\r\nContent-Type: text/csv\r\nContent-Length: 2\r\n\r\nab")).output)[0]!;
  t.equal(post.headers["accept-post"], "text/plain");
});
