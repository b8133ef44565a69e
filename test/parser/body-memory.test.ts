// A body costs memory in proportion to its bytes, however finely it is
// chunked: a million one-byte chunks must not become a million objects.

import t from "tap";
import { runInNewContext } from "node:vm";
import v8 from "node:v8";
import { DEFAULT_LIMITS, RequestParser } from "../../src/http/parse/parser.js";
import type { Request } from "../../src/http/message/request.js";
import { BodyBuffer } from "../../src/http/parse/body-buffer.js";
import { Driver } from "./fixtures/drive.js";

v8.setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** ~1 MiB of body sent as one-byte chunks: "1\r\nx\r\n" per byte, ~6 MB on the wire. */
function tinyChunks(count: number): Buffer[] {
  const one = Buffer.from("1\r\nx\r\n", "latin1");
  const perRead = 10_000; // about what one 64 KiB socket read holds
  const reads: Buffer[] = [Buffer.from("POST /b HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n", "latin1")];
  for (let sent = 0; sent < count; sent += perRead) {
    reads.push(Buffer.concat(Array.from({ length: Math.min(perRead, count - sent) }, () => one)));
  }
  return reads;
}

t.test("a body of 1,000,000 one-byte chunks holds about 1 MiB, not a heap object per chunk", (t) => {
  const count = DEFAULT_LIMITS.maxBodyBytes - 16;
  const reads = tinyChunks(count);
  let received: Request | null = null;
  const driver = new Driver(new RequestParser(), {
    onRequest(request) {
      received = request;
    },
    onError(error) {
      t.fail(`unexpected error: ${error.code} ${error.detail}`);
    },
  });
  gc();
  const before = process.memoryUsage().heapUsed;
  for (const read of reads) driver.feed(read);
  gc();
  const held = process.memoryUsage().heapUsed - before;
  // Each chunk kept as its own slice costs ~100 bytes of heap: ~100 MB for this body.
  t.ok(held < 16 * 1024 * 1024, `heap held while the body arrives: ${(held / 1048576).toFixed(1)} MiB`);
  driver.feed(Buffer.from("0\r\n\r\n", "latin1"));
  t.ok(received !== null, "the request arrived");
  t.equal(received!.body.length, count, "every byte of the body");
  t.ok(received!.body.every((b) => b === 0x78), "the bytes are the ones sent");
  t.end();
});

t.test("BodyBuffer: one piece is kept as is; more are copied into one buffer at most eight times their size", (t) => {
  const body = new BodyBuffer();
  body.reset(1 << 20);
  const chunk = Buffer.from("abcdef");
  body.append(chunk, 1, 4);
  t.equal(body.capacity, 0, "no copy for a single piece");
  t.equal(body.take().buffer, chunk.buffer, "the body is a view of the chunk it came in");

  body.reset(1 << 20);
  for (let i = 0; i < 100_000; i++) body.append(chunk, i % 6, (i % 6) + 1);
  t.equal(body.length, 100_000);
  t.ok(body.capacity <= 8 * 100_000, `capacity ${body.capacity} for 100,000 bytes`);
  const taken = body.take();
  t.equal(taken.toString("latin1", 0, 12), "abcdefabcdef", "bytes in order");
  t.equal(body.length, 0, "take() starts the next body empty");

  body.reset(10);
  body.append(chunk, 0, 6);
  body.append(chunk, 0, 4);
  t.ok(body.capacity <= 10, "never allocates past the limit it was given");
  t.end();
});

t.test("what an event carried is not kept by the parser once it is asked again: a request's body goes with its request", async (t) => {
  const parser = new RequestParser();
  // The body in two reads, so that it is copied into a buffer of the parser's own: nothing here holds those bytes.
  parser.receive(Buffer.from("POST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 65536\r\n\r\n", "latin1"));
  const kinds: string[] = [];
  const held: WeakRef<object>[] = [];
  const ask = () => {
    for (let event = parser.next(); event.kind !== "need-data"; event = parser.next()) {
      kinds.push(event.kind);
      if (event.kind === "head") held.push(new WeakRef(event.head));
      if (event.kind === "request") held.push(new WeakRef(event.request), new WeakRef(event.request.body.buffer));
    }
  };
  ask();
  parser.receive(Buffer.alloc(32768, 0x61));
  ask();
  parser.receive(Buffer.alloc(32768, 0x62));
  ask();
  t.same(kinds, ["head", "request"], "a head, then its request once the body is whole");
  // A WeakRef keeps its target alive until the job that made it ends.
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  t.same(
    held.map((ref) => ref.deref() === undefined),
    [true, true, true],
    "the head, the request and its body's bytes are collected: the parser let go of them when asked again",
  );
});
