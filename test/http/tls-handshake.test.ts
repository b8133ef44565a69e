// TLS connections before their handshake is done: a connection that never
// completes one is closed at the headers timeout, like a request head that
// never ends, and closed for good. Node's TLS server reports a handshake that
// times out as a 'tlsClientError' and leaves the socket open: before this
// test, startline ignored that event, so every connection that stopped
// before its handshake was done (a client that connects and sends nothing,
// one that sends a byte and stalls, one that closes at once) kept a socket
// and a file descriptor for as long as the process lived (found against
// `npm start` over HTTPS: 4,000 such connections, their clients long gone,
// still held ten minutes later, in CLOSE_WAIT).
// A certificate is made by openssl at test time (no key is ever committed).

import t from "tap";
import net from "node:net";
import tls from "node:tls";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { once } from "node:events";
import { promisify } from "node:util";
import { happens } from "../helpers/hang.js";
import { connectionsCount, listen } from "../helpers/wire.js";

const run = promisify(execFile);
const dir = mkdtempSync(path.join(tmpdir(), "startline-tls-handshake-"));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
await run("openssl", [
  "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
  "-keyout", path.join(dir, "key.pem"), "-out", path.join(dir, "cert.pem"), "-days", "1", "-subj", "/CN=127.0.0.1",
]);
const files = { cert: readFileSync(path.join(dir, "cert.pem")), key: readFileSync(path.join(dir, "key.pem")) };

/** What a client that completes its handshake and sends one GET that closes receives. */
function servedOverTls(port: number): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const socket = tls.connect({ port, host: "127.0.0.1", rejectUnauthorized: false }, () => socket.write("GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"));
    let text = "";
    socket.on("data", (d: Buffer) => (text += d.toString("latin1")));
    socket.on("close", () => resolve(text));
    socket.on("error", reject);
  });
}

/** A TCP connection to `port` that behaves as `kind` says and never completes a handshake; resolves when the server has closed it. */
async function stalled(port: number, kind: "nothing" | "one byte" | "half a hello" | "FIN at once"): Promise<void> {
  const socket = net.connect(port, "127.0.0.1");
  socket.on("error", () => {});
  await once(socket, "connect");
  // A TLS record header (handshake, TLS 1.0 record version) and nothing after it.
  if (kind === "one byte") socket.write(Buffer.from([0x16]));
  if (kind === "half a hello") socket.write(Buffer.from("160301", "hex"));
  if (kind === "FIN at once") socket.end();
  await once(socket, "close");
}

t.test("a connection that never completes its TLS handshake is closed at the headers timeout, whatever it sent", async (t) => {
  const s = await listen(() => ({ status: 200, body: "ok" }), { tls: files, headersTimeoutMs: 200 });
  t.teardown(s.close);
  for (const kind of ["nothing", "one byte", "half a hello", "FIN at once"] as const) {
    await happens(t, stalled(s.port, kind), `${kind}: closed by the server`);
  }
  // And the server still serves a client that completes its handshake.
  t.match(await servedOverTls(s.port), /^HTTP\/1\.1 200 OK\r\n/, "a handshake that completes is served");
});

t.test("connections still in their handshake count toward maxConnections: past it, a new one is closed before its handshake", async (t) => {
  // A long headers timeout: a close that comes within the hang bound is the limit's, not the timeout's.
  const s = await listen(() => ({ status: 200, body: "ok" }), { tls: files, headersTimeoutMs: 60_000, maxConnections: 2 });
  t.teardown(s.close);
  const held = [net.connect(s.port, "127.0.0.1"), net.connect(s.port, "127.0.0.1")];
  for (const socket of held) {
    socket.on("error", () => {});
    await once(socket, "connect");
  }
  await happens(t, stalled(s.port, "nothing"), "a third connection, past the limit, is closed by the server");
  t.equal(s.server.connections, 2, "the two in their handshake are counted; the one closed past the limit is not");
  // Connections reset mid-handshake give their places back at once (so do ones that send a FIN: the test below).
  for (const socket of held) socket.resetAndDestroy();
  await happens(t, connectionsCount(s.server, (n) => n === 0), "the server counts both out");
  t.match(await servedOverTls(s.port), /^HTTP\/1\.1 200 OK\r\n/, "a new connection is served");
});


/** The first bytes a real TLS client sends: its ClientHello, caught by a plain TCP server. */
async function aClientHello(): Promise<Buffer> {
  const catcher = net.createServer();
  await new Promise<void>((resolve) => catcher.listen(0, "127.0.0.1", resolve));
  const caught = once(catcher, "connection").then(async (args) => {
    const socket = args[0] as net.Socket;
    const [hello] = (await once(socket, "data")) as [Buffer];
    socket.destroy();
    return hello;
  });
  const client = tls.connect({ port: (catcher.address() as net.AddressInfo).port, host: "127.0.0.1", rejectUnauthorized: false, servername: "t" });
  client.on("error", () => {});
  const hello = await caught;
  client.destroy();
  catcher.close();
  return hello;
}

t.test("a connection that half-closes before its TLS handshake is done is closed at once, and its place freed", async (t) => {
  // A client that has sent its FIN can never send the Finished message a handshake ends with. Before this test
  // the server (allowHalfOpen, for the sake of requests after a handshake) kept such a connection, and its place
  // under maxConnections, until the handshake's timeout: a minute here, which the hang bound (10 s) detects.
  const hello = await aClientHello();
  const s = await listen(() => ({ status: 200, body: "ok" }), { tls: files, headersTimeoutMs: 60_000, maxConnections: 1 });
  t.teardown(s.close);
  const sends: Record<string, Buffer[]> = {
    "nothing": [],
    "a record header": [Buffer.from("160301", "hex")],
    "half a ClientHello": [hello.subarray(0, hello.length >> 1)],
    "a whole ClientHello (the server answers it, then waits for the client's Finished)": [hello],
  };
  for (const [what, chunks] of Object.entries(sends)) {
    const socket = net.connect(s.port, "127.0.0.1");
    socket.on("error", () => {});
    socket.resume();
    await once(socket, "connect");
    await happens(t, connectionsCount(s.server, (n) => n === 1), `${what}: the server has accepted the connection`);
    for (const chunk of chunks) socket.write(chunk);
    socket.end();
    await happens(t, once(socket, "close"), `${what}, then a FIN: the server closes the connection`);
    await happens(t, connectionsCount(s.server, (n) => n === 0), `${what}, then a FIN: the server counts it out`);
  }
  t.match(await servedOverTls(s.port), /^HTTP\/1\.1 200 OK\r\n/, "the one place is free: a new connection is served");
});

t.test("adopted TLS connections (WORKERS): a FIN in the handshake closes at once, a FIN after it still gets its answer", async (t) => {
  // Under WORKERS a worker adopts connections the primary accepted: sockets made with default options.
  const s = await listen((request) => ({ status: 200, body: request.target }), { tls: files, headersTimeoutMs: 60_000, maxConnections: 1 });
  t.teardown(s.close);
  const front = net.createServer((socket) => s.server.adopt(socket));
  await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
  t.teardown(() => front.close());
  const port = (front.address() as net.AddressInfo).port;
  const raw = net.connect(port, "127.0.0.1");
  raw.on("error", () => {});
  raw.resume();
  await once(raw, "connect");
  await happens(t, connectionsCount(s.server, (n) => n === 1), "the server has adopted the connection");
  raw.end();
  await happens(t, connectionsCount(s.server, (n) => n === 0), "a FIN before any handshake: the server counts it out");
  const received = await happens(t, new Promise<string>((resolve, reject) => {
    const socket = tls.connect({ port, host: "127.0.0.1", rejectUnauthorized: false, servername: "t" }, () => socket.end("GET /after HTTP/1.1\r\nHost: t\r\n\r\n"));
    let text = "";
    socket.on("data", (d: Buffer) => (text += d.toString("latin1")));
    socket.on("close", () => resolve(text));
    socket.on("error", reject);
  }), "a request and a FIN after the handshake: the server answers, then closes");
  t.match(received, /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\n\/after$/, "answered");
});

t.test("a TLS client that half-closes after its handshake, with its requests sent, still gets every answer", async (t) => {
  const s = await listen((request) => ({ status: 200, body: request.target }), { tls: files, headersTimeoutMs: 60_000 });
  t.teardown(s.close);
  const received = await happens(t, new Promise<string>((resolve, reject) => {
    const socket = tls.connect({ port: s.port, host: "127.0.0.1", rejectUnauthorized: false, servername: "t" }, () => {
      socket.write("GET /one HTTP/1.1\r\nHost: t\r\n\r\nGET /two HTTP/1.1\r\nHost: t\r\n\r\n");
      socket.end();
    });
    let text = "";
    socket.on("data", (d: Buffer) => (text += d.toString("latin1")));
    socket.on("close", () => resolve(text));
    socket.on("error", reject);
  }), "the server closes the connection once it has answered");
  t.match(received, /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\n\/one[^]*HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\n\/two$/, "both requests answered, in order");
});

t.test("a TLS connection accepted before close() whose handshake ends after it is closed, not served", async (t) => {
  // The TCP connection is accepted (and counted) first; its handshake starts only once close() has begun.
  const s = await listen(() => ({ status: 200, body: "ok" }), { tls: files, keepAliveTimeoutMs: 60_000 });
  const raw = net.connect(s.port, "127.0.0.1");
  raw.on("error", () => {});
  await once(raw, "connect");
  await happens(t, connectionsCount(s.server, (n) => n === 1), "the server has accepted the connection");
  const closed = s.server.close(60_000);
  let answer = "";
  const client = tls.connect({ socket: raw, rejectUnauthorized: false, servername: "t" }, () => client.write("GET / HTTP/1.1\r\nHost: t\r\n\r\n"));
  client.on("data", (d: Buffer) => (answer += d.toString("latin1")));
  client.on("error", () => {});
  await happens(t, once(client, "close"), "the server closes it (served, it would be held by the keep-alive timeout and the grace: a minute each)");
  t.equal(answer, "", "no answer: nothing asked on it is served once the server is closing");
  await happens(t, closed, "close() resolves");
});
