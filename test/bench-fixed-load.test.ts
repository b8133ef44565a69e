// The exact-count load of bench/instructions.ts: its response counter must
// count every response once however the stream is cut (a body that looks
// like a response head included), and the load must send exactly the
// requests asked for, in batches of `depth`.

import t from "tap";
import net from "node:net";
import { ResponseCounter, sendFixedLoad } from "../bench/fixed-load.js";

const response = (body: string) => `HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
const STREAM = Buffer.from(response("hello") + response("") + response("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc") + response("x"), "latin1");

t.test("the counter counts each response once, for every split of the stream into two pieces and byte by byte", async (t) => {
  for (let cut = 0; cut <= STREAM.length; cut++) {
    const counter = new ResponseCounter();
    const n = counter.push(STREAM.subarray(0, cut)) + counter.push(STREAM.subarray(cut));
    if (n !== 4) t.fail(`cut at ${cut}: ${n} responses`);
  }
  const counter = new ResponseCounter();
  let n = 0;
  for (let i = 0; i < STREAM.length; i++) n += counter.push(STREAM.subarray(i, i + 1));
  t.equal(n, 4);
});

t.test("the counter refuses what it cannot count: no Content-Length, or not a 2xx", async (t) => {
  t.throws(() => new ResponseCounter().push(Buffer.from("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")), /without Content-Length/);
  t.throws(() => new ResponseCounter().push(Buffer.from("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")), /not a 2xx/);
});

t.test("the load sends exactly the requests asked for, depth at a time, over a real socket", async (t) => {
  const REQUEST = Buffer.from("GET / HTTP/1.1\r\nHost: x\r\n\r\n", "latin1");
  let requests = 0;
  let largestBatch = 0;
  // Answers each request as its bytes arrive, split over two writes to cut the response.
  const server = net.createServer((socket) => {
    let held = 0;
    socket.on("data", (chunk: Buffer) => {
      held += chunk.length;
      const whole = Math.floor(held / REQUEST.length);
      held -= whole * REQUEST.length;
      requests += whole;
      largestBatch = Math.max(largestBatch, whole);
      const out = Buffer.from(response("ok").repeat(whole), "latin1");
      socket.write(out.subarray(0, 7));
      socket.write(out.subarray(7));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as net.AddressInfo).port;
  await sendFixedLoad({ port, request: REQUEST, total: 1003, connections: 4, depth: 10 });
  t.equal(requests, 1003, "1003 requests, the last batches short");
  t.ok(largestBatch <= 10, `no connection had more than 10 in flight (largest read: ${largestBatch})`);
});
