// Switching protocols (RFC 9110 §7.8) on startline/node: the 'upgrade' event
// hands the socket, and the bytes read past the head, to the application; the
// ws library serves WebSockets there, on the same port as HTTP.

import { once } from "node:events";
import net from "node:net";
import t from "tap";
import { WebSocket, WebSocketServer } from "ws";
import { createServer } from "../../src/node/index.js";
import { listenNode } from "../helpers/node-server.js";
import { readUntil, splitResponses, talk } from "../helpers/wire.js";

// One parent test holds the app's server and temporary files: a teardown at the file's top level would let
// tap end its root whenever it is idle, cutting short a next file sharing the process (test/batch.mjs).
t.test("upgrades on startline/node", async (t) => {
  const heads: number[] = [];
  const wss = new WebSocketServer({ noServer: true });
  wss.on("connection", (ws) => ws.on("message", (data, binary) => ws.send(binary ? data : `echo: ${String(data)}`)));
  const server = createServer((req, res) => res.end(`http: ${req.method} ${req.url}`));
  server.on("upgrade", (req, socket, head: Buffer) => {
    heads.push(head.length);
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit("connection", ws, req));
  });
  const running = await listenNode(server);
  t.teardown(async () => {
    for (const client of wss.clients) client.terminate();
    wss.close();
    await running.close();
  });
  const port = running.port;

  t.test("a WebSocket echo through ws, and plain HTTP on the same port", async (t) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/echo`);
    await once(ws, "open");
    ws.send("hello");
    const [reply] = (await once(ws, "message")) as [Buffer];
    t.equal(String(reply), "echo: hello");
    ws.send(Buffer.from([1, 2, 3]));
    const [binary] = (await once(ws, "message")) as [Buffer];
    t.same([...binary], [1, 2, 3]);
    ws.close();
    await once(ws, "close");
    const [http] = splitResponses(await talk(port, ["GET /plain HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"]));
    t.equal(http!.body, "http: GET /plain");
  });

  /** A client's masked text frame (RFC 6455 §5.2), short. */
  function textFrame(text: string): Buffer {
    const payload = Buffer.from(text);
    const mask = Buffer.from([1, 2, 3, 4]);
    const masked = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!));
    return Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, masked]);
  }

  t.test("closeAllConnections() leaves an upgraded socket alone: it is the WebSocket's", async (t) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/echo`);
    await once(ws, "open");
    server.closeAllConnections();
    ws.send("still here");
    const [reply] = (await once(ws, "message")) as [Buffer];
    t.equal(String(reply), "echo: still here");
    ws.close();
    await once(ws, "close");
  });

  t.test("bytes sent right behind the upgrade's head reach the new protocol (the head argument)", async (t) => {
    const socket = net.connect(port, "127.0.0.1");
    await once(socket, "connect");
    const key = Buffer.from("0123456789abcdef").toString("base64");
    // The head and a first frame in one write: the engine reads both, and must hand the frame over.
    let all = "";
    socket.on("data", (d: Buffer) => (all += d.toString("latin1")));
    const switched = readUntil(socket, "\r\n\r\n");
    socket.write(
      Buffer.concat([
        Buffer.from(`GET /echo HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`),
        textFrame("early"),
      ]),
    );
    t.match(await switched, /^HTTP\/1\.1 101 Switching Protocols\r\n/);
    // A frame after the switch: its echo comes second, after the early one's (were that one lost, alone).
    socket.write(textFrame("late"));
    await readUntil(socket, "echo: late");
    t.match(all, /echo: early[^]*echo: late/);
    t.equal(heads.at(-1), textFrame("early").length, "the frame came as the upgrade's head");
    socket.destroy();
  });

  t.test("without an 'upgrade' listener, a request that asks to upgrade is an ordinary request, as on node", async (t) => {
    const plain = createServer((req, res) => res.end(`upgrade=${String((req as { upgrade?: boolean }).upgrade)}`));
    const other = await listenNode(plain);
    t.teardown(other.close);
    const [r] = splitResponses(await talk(other.port, ["GET / HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade, close\r\n\r\n"]));
    t.equal(r!.body, "upgrade=false");
  });
});
