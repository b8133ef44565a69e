// The turns connections wait in (src/http/connection/turns.ts): first come, first
// served; everything on the next turn while no connection arrives; at most
// ARRIVAL_TURN_REQUESTS requests a turn while connections do arrive; at
// most PIECES_PER_TURN pieces of bodies sent in pieces a turn, shared by every
// connection; and a budget of bytes read a turn, past which a reader holds
// its read and stops its socket until its turn.

import t from "tap";
import { once } from "node:events";
import { Writable } from "node:stream";
import { PIECE_BYTES, sendWhole } from "../../src/http/connection/send-body.js";
import { ARRIVAL_READ_BYTES, ARRIVAL_TURN_REQUESTS, LIGHT_BYTES, PIECES_PER_TURN, READ_BYTES_PER_TURN, TURN_MS, Turns, type Waiter } from "../../src/http/connection/turns.js";
import { Duplex } from "node:stream";
import { Connection } from "../../src/http/connection/connection.js";
import { DEFAULT_CONNECTION_OPTIONS } from "../../src/http/connection/options.js";
import { DEFAULT_LIMITS } from "../../src/http/parse/parser.js";

/** A clock that stands still: a turn's time (TURN_MS) never runs out, so what it serves depends on its other budgets alone. */
const frozen = () => 0;

/** Resolves after the turn's own setImmediate, which was scheduled first. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** A waiting connection holding `held` bytes: resumed, it runs `take`. */
const waiter = (take: () => number, held = 0): Waiter => ({ held: () => held, take });

/** A connection that records when its turn came and serves `requests` each time. */
function taker(name: string, served: string[], requests: number, held = 0): Waiter {
  return waiter(() => {
    served.push(name);
    return requests;
  }, held);
}

t.test("with nobody arriving, every waiting connection gets its turn on the next turn, in order", async (t) => {
  const turns = new Turns(frozen);
  const served: string[] = [];
  for (const name of ["a", "b", "c"]) turns.wait(taker(name, served, 1000));
  t.equal(turns.queuing, false, "reads are not queued");
  t.same(served, [], "nothing runs before the turn");
  await nextTurn();
  t.same(served, ["a", "b", "c"], "one turn serves them all, however many requests they take");
  t.equal(turns.waiting, 0);
});

t.test("a connection that waits again during its turn goes behind the others, to the next turn", async (t) => {
  const turns = new Turns(frozen);
  const served: string[] = [];
  let again = true;
  const a: Waiter = waiter(() => {
    served.push("a");
    if (again) {
      again = false;
      turns.wait(a);
    }
    return 64;
  });
  turns.wait(a);
  turns.wait(taker("b", served, 1));
  await nextTurn();
  t.same(served, ["a", "b"]);
  t.equal(turns.waiting, 1, "a waits for the next turn");
  await nextTurn();
  t.same(served, ["a", "b", "a"]);
});

t.test("while connections arrive, reads queue and a turn serves about ARRIVAL_TURN_REQUESTS requests", async (t) => {
  const turns = new Turns(frozen);
  const served: string[] = [];
  // Ten connections with a 10-deep batch each, and one more connection arriving.
  for (let i = 0; i < 10; i++) turns.wait(taker(`c${i}`, served, 10));
  turns.arrival();
  t.equal(turns.queuing, true, "reads wait their turn while connections arrive");
  await nextTurn();
  t.same(served, ["c0"], `one batch of 10 spends the turn's ${ARRIVAL_TURN_REQUESTS} requests`);
  t.equal(turns.queuing, true, "still queuing: this turn had an arrival");

  turns.arrival(); // another connection, accepted in the next turn
  const late = taker("new", served, 1);
  turns.wait(late);
  await nextTurn();
  t.same(served, ["c0", "c1"], "first come, first served: the new connection waits behind c1..c9");

  // A turn with no arrival serves all that waited, and reads go straight through again.
  await nextTurn();
  t.same(served, ["c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9", "new"]);
  t.equal(turns.queuing, false);
  t.equal(turns.waiting, 0);
});

t.test("a turn always serves at least one connection, however many requests it takes", async (t) => {
  const turns = new Turns(frozen);
  const served: string[] = [];
  turns.wait(taker("deep", served, 64));
  turns.wait(taker("next", served, 1));
  turns.arrival();
  await nextTurn();
  t.same(served, ["deep"], "the first waiting connection is served even beyond the turn's budget");
  turns.arrival();
  await nextTurn();
  t.same(served, ["deep", "next"], "and the queue moves on every turn, arrivals or not");
});

t.test("a long queue is served in order across many turns", async (t) => {
  const turns = new Turns(frozen);
  const served: number[] = [];
  const n = 3000;
  for (let i = 0; i < n; i++) {
    turns.wait(
      waiter(() => {
        served.push(i);
        return ARRIVAL_TURN_REQUESTS; // one per turn while arrivals go on
      }),
    );
  }
  for (let k = 0; k < n; k++) {
    turns.arrival();
    await nextTurn();
  }
  t.equal(served.length, n);
  t.ok(
    served.every((v, i) => v === i),
    "every connection once, in arrival order",
  );
});

/** A client that takes every byte at once (its kernel buffers never fill): only the turns' budget paces a body to it. */
function bottomless(count: (bytes: number) => void): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, callback) {
      count(chunk.length);
      callback();
    },
  });
}

t.test("bodies sent in pieces share one budget a turn, first come first served, and all of them finish", async (t) => {
  const turns = new Turns(frozen);
  const writers = 24;
  const size = 16 * PIECE_BYTES;
  const written = new Array<number>(writers).fill(0);
  let thisTurn = 0;
  const perTurn: number[] = [];
  // A turn of the event loop is the time between two runs of this ticker (each re-arms it for the next turn).
  let ticking = true;
  const tick = () => {
    perTurn.push(thisTurn);
    thisTurn = 0;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  let firstDone: number[] | null = null;
  const sends = written.map((_, i) =>
    sendWhole(
      bottomless((bytes) => {
        written[i]! += bytes;
        thisTurn += bytes;
      }),
      Buffer.alloc(size, i),
      turns,
    ).then((done) => {
      firstDone ??= [...written];
      return done;
    }),
  );
  t.same(await Promise.all(sends), new Array(writers).fill(true), "every body is sent whole");
  ticking = false;
  t.same(written, new Array(writers).fill(size));
  const most = Math.max(...perTurn);
  t.ok(most <= PIECES_PER_TURN * PIECE_BYTES, `no turn carries more than its pieces (the most: ${most} bytes)`);
  // Round robin: when the first writer is done, none is more than two pieces behind it.
  t.ok(firstDone!.every((bytes) => bytes >= size - 2 * PIECE_BYTES), `nobody starves: ${firstDone!.join(" ")}`);
});

t.test("a connection waiting for its turn is served on the next turn, however many bodies are being sent", async (t) => {
  const turns = new Turns(frozen);
  const sends = Array.from({ length: 50 }, () => sendWhole(bottomless(() => {}), Buffer.alloc(8 * PIECE_BYTES), turns));
  // Let the bodies fill the turn's budget first.
  await nextTurn();
  const served: string[] = [];
  turns.wait(taker("status", served, 1));
  await nextTurn();
  t.same(served, ["status"], "the waiting read is not behind the bodies");
  await Promise.all(sends);
});

t.test("bytes read share a budget a turn: past it a reader is told to wait; the next turn starts the count again", async (t) => {
  const turns = new Turns(frozen);
  t.equal(turns.read(READ_BYTES_PER_TURN), false, "the budget itself may be read");
  t.equal(turns.read(1), true, "a byte more, and the reader waits");
  await nextTurn();
  t.equal(turns.read(64 * 1024), false, "a new turn, a new budget");
  turns.arrival();
  t.equal(turns.read(ARRIVAL_READ_BYTES), true, "while connections arrive, the budget is ARRIVAL_READ_BYTES");
});

t.test("a turn resumes waiting readers only while the bytes they held fit in its budget; the rest keep their places", async (t) => {
  const turns = new Turns(frozen);
  const served: string[] = [];
  const holding = (name: string, bytes: number): Waiter =>
    waiter(() => {
      served.push(name);
      turns.read(bytes);
      return 0;
    }, bytes);
  const part = Math.floor(READ_BYTES_PER_TURN * 0.6);
  for (const name of ["a", "b", "c", "d"]) turns.wait(holding(name, part));
  await nextTurn();
  t.same(served, ["a", "b"], "two of them: the second one's bytes pass the budget");
  await nextTurn();
  t.same(served, ["a", "b", "c", "d"], "the others on the next turn, in order");
});

t.test("a light reader (a head) is served before the heavy ones (a body's reads) that waited before it", async (t) => {
  const turns = new Turns(frozen);
  const served: string[] = [];
  const heavy = (name: string): Waiter =>
    waiter(() => {
      served.push(name);
      turns.read(Math.floor(READ_BYTES_PER_TURN * 0.6));
      return 0;
    }, Math.floor(READ_BYTES_PER_TURN * 0.6));
  for (const name of ["a", "b", "c", "d"]) turns.wait(heavy(name));
  turns.wait(taker("status", served, 1, LIGHT_BYTES));
  await nextTurn();
  t.same(served, ["status", "a", "b"], "the head first, then the bodies while the turn's bytes last");
  turns.wait(heavy("e"));
  await nextTurn();
  t.same(served, ["status", "a", "b", "c", "d"], "the heavy that stepped aside keep their places, ahead of a later one");
  await nextTurn();
  t.same(served, ["status", "a", "b", "c", "d", "e"]);
  t.equal(turns.waiting, 0);
});

t.test("the oldest heavy reader is served on every turn, however much the light ones take", async (t) => {
  const turns = new Turns(frozen);
  const served: string[] = [];
  for (let i = 0; i < 3; i++) turns.wait(taker(`light${i}`, served, ARRIVAL_TURN_REQUESTS));
  turns.wait(taker("body", served, 1, LIGHT_BYTES + 1));
  turns.wait(taker("body2", served, 1, LIGHT_BYTES + 1));
  turns.arrival();
  await nextTurn();
  t.same(served, ["light0", "body"], "a turn whose requests the light one spent still serves one body");
  turns.arrival();
  await nextTurn();
  t.same(served, ["light0", "body", "light1", "body2"]);
});

t.test("a turn resumes waiting connections for TURN_MS; the rest wait, but for the oldest heavy one", async (t) => {
  let clock = 0;
  const turns = new Turns(() => clock);
  const served: string[] = [];
  // Each connection's turn takes a millisecond: a handler's work, say.
  const slow = (name: string, held: number): Waiter =>
    waiter(() => {
      served.push(name);
      clock += 1;
      return 1;
    }, held);
  const lights = Array.from({ length: TURN_MS + 2 }, (_, i) => `light${i}`);
  for (const name of lights) turns.wait(slow(name, 0));
  turns.wait(slow("body", LIGHT_BYTES + 1));
  await nextTurn();
  t.same(served, [...lights.slice(0, TURN_MS), "body"], `${TURN_MS} ms of light ones, then the oldest heavy one`);
  await nextTurn();
  t.same(served.slice(TURN_MS + 1), lights.slice(TURN_MS), "the rest on the next turn");
});

/** A real Connection over an in-memory socket, in `turns`, whose handler records each request's path in `answered`; returns the socket's far end. */
function connectionIn(turns: Turns, answered: string[]): Duplex {
  const wire = new Duplex({ read() {}, write(_chunk, _encoding, callback) { callback(); } });
  new Connection(
    wire,
    (request) => {
      answered.push(request.path);
      return { status: 204 };
    },
    { ...DEFAULT_CONNECTION_OPTIONS, limits: DEFAULT_LIMITS, turns },
    { onExchange: () => {}, onHandlerError: () => {}, onClose: () => {} },
  );
  return wire;
}

t.test("connections weigh what their parsers hold: a head read after a body's is answered first", async (t) => {
  const turns = new Turns(frozen);
  const answered: string[] = [];
  const open = () => connectionIn(turns, answered);
  const upload = open();
  const status = open();
  // Both read while a connection arrives, so both reads wait for the turn: the upload's first.
  turns.arrival();
  upload.push(Buffer.concat([Buffer.from(`POST /upload HTTP/1.1\r\nHost: h\r\nContent-Length: ${LIGHT_BYTES}\r\n\r\n`), Buffer.alloc(LIGHT_BYTES, 0x61)]));
  status.push("GET /status HTTP/1.1\r\nHost: h\r\n\r\n");
  while (answered.length < 2) await nextTurn();
  t.same(answered, ["/status", "/upload"], "the light reader first, though it waited second");
});

t.test("a connection whose client went while it waited weighs nothing: the live upload behind it is served on that turn", async (t) => {
  const turns = new Turns(frozen);
  const answered: string[] = [];
  const open = () => connectionIn(turns, answered);
  // Each holds more than the turn's bytes while connections arrive: alive, the first would spend the turn alone.
  const size = ARRIVAL_READ_BYTES + 1024;
  const upload = (path: string) => Buffer.concat([Buffer.from(`POST ${path} HTTP/1.1\r\nHost: h\r\nContent-Length: ${size}\r\n\r\n`), Buffer.alloc(size, 0x61)]);
  const gone = open();
  const live = open();
  turns.arrival();
  gone.push(upload("/gone"));
  live.push(upload("/live"));
  gone.destroy();
  await once(gone, "close");
  await nextTurn();
  t.same(answered, ["/live"], "answered on the first turn, not behind the bytes of a connection that will never read them");
});

t.test("a connection that reads past the turn's budget stops its socket at once, and has its whole body on a coming turn", async (t) => {
  const turns = new Turns(frozen);
  const size = 3 * READ_BYTES_PER_TURN;
  let got = -1;
  const wire = new Duplex({ read() {}, write(_chunk, _encoding, callback) { callback(); } });
  new Connection(
    wire,
    (request) => {
      got = request.body.length;
      return { status: 204 };
    },
    { ...DEFAULT_CONNECTION_OPTIONS, limits: { ...DEFAULT_LIMITS, maxBodyBytes: size }, turns },
    { onExchange: () => {}, onHandlerError: () => {}, onClose: () => {} },
  );
  // One poll's worth of reads, delivered in one go as libuv would: the head, then the body in 64 KiB reads.
  wire.push(`POST /up HTTP/1.1\r\nHost: h\r\nContent-Length: ${size}\r\n\r\n`);
  // The head is read and the stream flows: from here on a push is a read, handed on at once.
  await nextTurn();
  let pushed = 0;
  while (pushed < size && !wire.isPaused()) {
    wire.push(Buffer.alloc(64 * 1024, 0x61));
    pushed += 64 * 1024;
  }
  t.ok(wire.isPaused(), "the socket stopped reading");
  // The read that passes the budget is the last: none after it (a socket that stopped only at its next read would take one more).
  t.ok(pushed < READ_BYTES_PER_TURN + 64 * 1024, `at the turn's budget: ${pushed} bytes read`);
  t.equal(got, -1, "the body is not whole yet");
  // The rest of the body as the socket reads it again, each read only once it reads.
  while (pushed < size) {
    while (wire.isPaused()) await nextTurn();
    wire.push(Buffer.alloc(64 * 1024, 0x61));
    pushed += 64 * 1024;
  }
  while (got === -1) await nextTurn();
  t.equal(got, size, "the whole body reached the handler");
});
