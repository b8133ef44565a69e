// New connections get in while established ones keep the server busy
// (src/http/connection/turns.ts). libuv accepts one connection per turn of the event
// loop, and a turn serves every connection with bytes waiting: without the
// turns' queue, each newcomer waited for all the busy connections to be
// served once more: the last of a burst of 30 waited 16 rounds.
//
// Measured as a count, not a time, so that a busy machine cannot change the
// verdict: how many responses the busy connections received between the
// burst and each newcomer's first answer.

import t from "tap";
import net from "node:net";
import { Duplex } from "node:stream";
import { ResponseCounter } from "../../bench/fixed-load.js";
import { Connection } from "../../src/http/connection/connection.js";
import { DEFAULT_CONNECTION_OPTIONS } from "../../src/http/connection/options.js";
import { DEFAULT_LIMITS } from "../../src/http/parse/parser.js";
import { Turns } from "../../src/http/connection/turns.js";
import { listen } from "../helpers/wire.js";

const BUSY = 20;
const DEPTH = 10;
const NEWCOMERS = 30;
const REQUEST = "GET /x HTTP/1.1\r\nHost: t\r\n\r\n";

t.test("a burst of new connections is answered within a few rounds of the busy ones, not one round per newcomer", async (t) => {
  const running = await listen(() => ({ status: 200, body: "ok" }));
  const sockets: net.Socket[] = [];
  t.teardown(async () => {
    for (const socket of sockets) socket.destroy();
    await running.close();
  });

  // Busy clients: each writes DEPTH pipelined requests, and the next DEPTH once all are answered.
  let busyAnswered = 0;
  let stop = false;
  let warm: () => void = () => {};
  const warmedUp = new Promise<void>((resolve) => (warm = resolve));
  const batch = REQUEST.repeat(DEPTH);
  for (let i = 0; i < BUSY; i++) {
    const socket = net.connect(running.port, "127.0.0.1");
    sockets.push(socket);
    const counter = new ResponseCounter();
    let pending = DEPTH;
    socket.on("data", (chunk: Buffer) => {
      const done = counter.push(chunk);
      busyAnswered += done;
      pending -= done;
      if (busyAnswered >= BUSY * DEPTH * 20) warm();
      if (pending === 0 && !stop) {
        pending = DEPTH;
        socket.write(batch);
      }
    });
    socket.on("error", () => {});
    socket.write(batch);
  }
  await warmedUp;

  // The burst: every newcomer connects at once and sends one request.
  const before = busyAnswered;
  const waited = await Promise.all(
    Array.from(
      { length: NEWCOMERS },
      () =>
        new Promise<number>((resolve, reject) => {
          const socket = net.connect(running.port, "127.0.0.1");
          sockets.push(socket);
          const counter = new ResponseCounter();
          socket.on("data", (chunk: Buffer) => {
            if (counter.push(chunk) > 0) resolve(busyAnswered - before);
          });
          socket.on("error", reject);
          socket.write(REQUEST);
        }),
    ),
  );
  stop = true;

  // Measured here: 3.5 rounds; 16 with every read served at once (one accept per turn, a turn per round or two).
  const rounds = Math.max(...waited) / (BUSY * DEPTH);
  t.ok(rounds < 8, `the last newcomer was answered after ${Math.max(...waited)} busy responses: ${rounds.toFixed(1)} rounds of the ${BUSY} busy connections`);
});

t.test("a head trickled while connections arrive keeps the headers deadline of its first byte", async (t) => {
  // In process, so that the read of every byte falls while the turns queue reads (an arrival just before it).
  const turns = new Turns();
  const socket = new Duplex({ read() {}, write: (_chunk, _encoding, callback) => callback() });
  const options = { ...DEFAULT_CONNECTION_OPTIONS, limits: DEFAULT_LIMITS, headersTimeoutMs: 1000, turns };
  const connection = new Connection(socket, () => ({ status: 200 }), options, { onHandlerError: () => {}, onClose: () => {} });
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  const byte = async (b: string) => {
    turns.arrival();
    socket.push(b);
    await turn();
    await turn();
    t.equal(turns.waiting, 0, "the read had its turn");
  };

  await byte("G");
  const first = connection.deadline;
  t.ok(first <= Date.now() + 1000, "the headers deadline runs from the first byte");
  for (const b of "ET / HTTP/1.1\r\n") {
    // Let the clock move, so that a deadline restarted by this byte would differ.
    const before = Date.now();
    while (Date.now() === before) await turn();
    await byte(b);
    t.equal(connection.deadline, first, `still the first byte's deadline after ${JSON.stringify(b)}`);
  }
  socket.destroy();
});
