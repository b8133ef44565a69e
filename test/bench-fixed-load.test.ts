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

t.test("requests sent in turn: no head repeats the one before it on its connection, at depth 1 and 10", async (t) => {
  const A = Buffer.from("GET /a HTTP/1.1\r\nHost: x\r\n\r\n", "latin1");
  const B = Buffer.from("GET /b HTTP/1.1\r\nHost: y\r\n\r\n", "latin1");
  for (const depth of [1, 10]) {
    const seen: string[][] = [];
    // Reads whole requests (one length) and answers each; records the order per connection.
    const server = net.createServer((socket) => {
      const order: string[] = [];
      seen.push(order);
      let held = Buffer.alloc(0);
      socket.on("data", (chunk: Buffer) => {
        held = Buffer.concat([held, chunk]);
        let whole = 0;
        while (held.length >= A.length) {
          order.push(held.toString("latin1", 5, 6));
          held = held.subarray(A.length);
          whole++;
        }
        socket.write(response("ok").repeat(whole));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as net.AddressInfo).port;
    await sendFixedLoad({ port, request: [A, B], total: 47, connections: 2, depth });
    await new Promise<void>((resolve) => server.close(() => resolve()));
    t.equal(seen.flat().length, 47, `depth ${depth}: 47 requests`);
    for (const order of seen) t.ok(order.every((p, i) => i === 0 || p !== order[i - 1]), `depth ${depth}: ${order.join("")}`);
  }
  t.throws(() => sendFixedLoad({ port: 1, request: [A, Buffer.from("GET /ab HTTP/1.1\r\nHost: x\r\n\r\n")], total: 1, connections: 1, depth: 1 }), /one length/);
});

t.test("a server that closes a connection under the load fails it, saying so, instead of leaving it waiting", async (t) => {
  // Answers the first two requests of each connection, then closes it.
  const server = net.createServer((socket) => {
    let answered = 0;
    socket.on("data", () => {
      if (++answered <= 2) socket.write(response("ok"));
      else socket.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as net.AddressInfo).port;
  const request = Buffer.from("GET / HTTP/1.1\r\nHost: x\r\n\r\n", "latin1");
  await t.rejects(sendFixedLoad({ port, request, total: 10, connections: 1, depth: 1 }), /the server closed a connection with 1 of its responses still to come/);
});
