// Events that would reach nobody are not scheduled (src/node/request.ts's
// finishBodiless and endQuietly, response.ts's sent and closeResponse): a
// request nobody listened to or read ends at once when its response is out,
// a response with no 'close' listener is destroyed then, a bodiless
// request's 'readable' is emitted when its listeners have had it, and
// 'prefinish' and 'finish' are not emitted to nobody. Over real sockets:
// the state such a request is left in is, bit for bit, the one node's way
// (resume(), 'end', destroy, 'close') leaves a request that has a listener,
// and its public view is node:http's own request's; listeners added as late
// as the response's 'finish', or a 'readable' listener added in the
// request's listener, hear every event in node's order; a paused request or
// a body nobody read still goes node's way; and an emit a library wrapped
// sees every event, as on node:http.

import http from "node:http";
import net from "node:net";
import { once } from "node:events";
import t from "tap";
import { createServer, type RequestListener } from "../../src/node/index.js";
import { listenNode } from "../helpers/node-server.js";
import { readUntil } from "../helpers/wire.js";

type Listener = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** What a request's stream says of itself: its state's bits (node's kState), and the getters code reads. */
function account(req: http.IncomingMessage) {
  const state = (req as unknown as { _readableState: Record<symbol, unknown> })._readableState;
  const kState = Object.getOwnPropertySymbols(state).find((s) => s.description === "kState");
  return {
    bits: kState === undefined ? undefined : state[kState],
    seen: {
      readableEnded: req.readableEnded,
      readableFlowing: req.readableFlowing,
      destroyed: req.destroyed,
      closed: req.closed,
      readable: req.readable,
      isPaused: req.isPaused(),
      readableAborted: req.readableAborted,
      readableDidRead: req.readableDidRead,
      complete: req.complete,
      errored: req.errored,
    },
  };
}

/**
 * Serves one request with `listener` on `server` and resolves with what
 * `observe` resolves with (its promise made in the listener's turn). The
 * connection stays open until then: its close would destroy what it still
 * carries.
 */
async function oneRequest<T>(server: http.Server | ReturnType<typeof createServer>, listener: Listener, observe: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<T>): Promise<T> {
  let seen!: Promise<T>;
  server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    seen = observe(req, res);
    listener(req, res);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const socket = net.connect((server.address() as net.AddressInfo).port, "127.0.0.1");
  try {
    await once(socket, "connect");
    socket.write("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
    t.match(await readUntil(socket, "hi"), /^HTTP\/1\.1 200 OK\r\n/);
    return await seen;
  } finally {
    socket.destroy();
    server.close();
  }
}

/**
 * What a request and its response say of themselves once the response's
 * 'finish' and every tick after it have run (a microtask queued in 'finish'
 * runs after the tick queue is empty, on node:http as here).
 */
function afterFinish(server: http.Server | ReturnType<typeof createServer>, listener: Listener) {
  return oneRequest(server, listener, (req, res) => new Promise<{ atFinish: ReturnType<typeof account>; req: ReturnType<typeof account>; resDestroyed: boolean }>((resolve) => {
    // A 'finish' listener, not a 'close' one: the response's 'close' is what is observed. At 'finish', the request's
    // end was pushed and its 'readable' turn (if it took one) has run, and the request is not yet ended.
    res.once("finish", () => {
      const atFinish = account(req);
      queueMicrotask(() => resolve({ atFinish, req: account(req), resDestroyed: res.destroyed }));
    });
  }));
}

const bare: Listener = (_req, res) => res.end("hi");
const listened: Listener = (req, res) => {
  req.on("close", () => {});
  res.on("close", () => {});
  res.end("hi");
};

t.test("a request nobody listened to ends in the state node's way leaves it, and its response is destroyed", async (t) => {
  const quiet = await afterFinish(createServer(), bare);
  const slow = await afterFinish(createServer(), listened);
  const onNode = await afterFinish(http.createServer(), bare);
  t.ok(typeof quiet.req.bits === "number", "this Node keeps a readable's state in bits (kState)");
  t.equal(quiet.atFinish.bits, slow.atFinish.bits, "at 'finish', the state the end pushed after a turn of the tick queue leaves");
  t.same(quiet.atFinish.seen, slow.atFinish.seen);
  t.equal(quiet.req.bits, slow.req.bits, "bit for bit the state resume(), 'end', destroy and 'close' leave");
  t.same(quiet.req.seen, slow.req.seen);
  t.same(quiet.req.seen, onNode.req.seen, "and what node:http's own request says then");
  t.same(quiet.req.seen, { ...quiet.req.seen, readableEnded: true, destroyed: true, closed: true, readableFlowing: true, readable: false });
  t.equal(quiet.resDestroyed, true, "the response is destroyed, as node's is by then");
  t.equal(slow.resDestroyed, true);
  t.equal(onNode.resDestroyed, true);
});

t.test("listeners added as late as the response's 'finish' hear every event, in node's order", async (t) => {
  const lateListeners = (req: http.IncomingMessage, res: http.ServerResponse) =>
    new Promise<string[]>((resolve) => {
      const heard: string[] = [];
      res.once("finish", () => {
        heard.push("res finish");
        req.on("end", () => heard.push("req end"));
        req.on("close", () => heard.push("req close"));
        res.on("close", () => {
          heard.push("res close");
          // After every tick queued by then, and by those: the request's 'end' and 'close' come in them.
          queueMicrotask(() => resolve(heard));
        });
      });
    });
  const ours = await oneRequest(createServer(), bare, lateListeners);
  t.same(ours, await oneRequest(http.createServer(), bare, lateListeners), "as on node:http");
  t.same(ours, ["res finish", "res close", "req end", "req close"]);
});

t.test("a request without a body is whole once its listeners have had it, and a 'readable' listener they add hears 'readable' then 'end'", async (t) => {
  const inListener = (req: http.IncomingMessage) =>
    new Promise<string[]>((resolve) => {
      const heard = [`complete in the listener: ${String(req.complete)}`];
      req.on("readable", () => heard.push(`readable, read ${String(req.read())}`));
      // node pushes the end after the listeners, so its 'readable' comes on a tick after theirs.
      process.nextTick(() => heard.push("the listener's tick"));
      req.on("end", () => {
        heard.push(`end, complete ${String(req.complete)}`);
        resolve(heard);
      });
    });
  const ours = await oneRequest(createServer(), bare, inListener);
  t.same(ours, await oneRequest(http.createServer(), bare, inListener), "as on node:http");
  t.same(ours, ["complete in the listener: false", "the listener's tick", "readable, read null", "end, complete true"]);
});

t.test("a request paused, or with a body nobody read, goes node's way: resumed, its body read and dropped, and the connection goes on", async (t) => {
  const states: string[] = [];
  const server = createServer(((req: http.IncomingMessage, res: http.ServerResponse) => {
    if (req.url === "/paused") req.pause();
    res.end("hi");
    res.once("finish", () =>
      queueMicrotask(() => states.push(`${req.url} ended ${String(req.readableEnded)} destroyed ${String(req.destroyed)} paused ${String(req.isPaused())} left ${req.readableLength}`)),
    );
  }) as RequestListener);
  const running = await listenNode(server);
  t.teardown(running.close);
  const socket = net.connect(running.port, "127.0.0.1");
  t.teardown(() => socket.destroy());
  await once(socket, "connect");
  // The body in the head's packet: whole, and unread, by the time the answer is out.
  socket.write("POST /body HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello");
  let got = String((await once(socket, "data"))[0]);
  socket.write("GET /paused HTTP/1.1\r\nHost: a\r\n\r\n" + "GET /last HTTP/1.1\r\nHost: a\r\n\r\n");
  while ((got.match(/\r\n\r\nhi/g)?.length ?? 0) < 3) got += String((await once(socket, "data"))[0]);
  t.equal(got.match(/HTTP\/1\.1 200 OK\r\n/g)?.length, 3, "three answers on one connection");
  // The third answer was read by the client after the server's 'finish' for it had run, and its ticks.
  t.same(states, [
    "/body ended true destroyed true paused false left 0",
    "/paused ended true destroyed true paused false left 0",
    "/last ended true destroyed true paused false left 0",
  ]);
});

t.test("a response and request whose emit a library wrapped have every event emitted through it, listeners or not", async (t) => {
  const wrapped = (req: http.IncomingMessage, res: http.ServerResponse) =>
    new Promise<string[]>((resolve) => {
      const seen: string[] = [];
      for (const [name, emitter] of [["req", req], ["res", res]] as const) {
        const emit = emitter.emit;
        emitter.emit = function (this: typeof emitter, event: string | symbol, ...args: unknown[]) {
          if (typeof event === "string" && ["prefinish", "finish", "close", "end"].includes(event)) seen.push(`${name} ${event}`);
          // After every tick queued by then, and by those: the request's 'end' and 'close' come in them.
          if (name === "res" && event === "close") queueMicrotask(() => resolve(seen));
          return emit.call(this, event, ...args);
        } as typeof emitter.emit;
      }
    });
  const ours = await oneRequest(createServer(), bare, wrapped);
  t.same(ours, await oneRequest(http.createServer(), bare, wrapped), "as on node:http");
  t.same(ours, ["res prefinish", "res finish", "res close", "req end", "req close"]);
});

t.test("a response nobody hears from is finished as the answer goes to the socket: code the listener deferred sees it so, as node:http's writableFinished", async (t) => {
  const deferred = (req: http.IncomingMessage, res: http.ServerResponse) =>
    new Promise<Record<string, boolean>>((resolve) => {
      // Queued before the answer is given: on node, before its write's own tick, and here before the listener returns.
      process.nextTick(() => resolve({ writableFinished: res.writableFinished, writableEnded: res.writableEnded, headersSent: res.headersSent, reqComplete: req.complete }));
    });
  const ours = await oneRequest(createServer(), bare, deferred);
  t.same(ours, await oneRequest(http.createServer(), bare, deferred), "as on node:http");
  t.same(ours, { writableFinished: true, writableEnded: true, headersSent: true, reqComplete: true });
});

t.test("a response someone hears from keeps its events on a tick of their own, after what the listener deferred, as on node:http", async (t) => {
  const heard = (req: http.IncomingMessage, res: http.ServerResponse, listen: (res: http.ServerResponse, log: string[]) => void) =>
    new Promise<string[]>((resolve) => {
      const log: string[] = [];
      process.nextTick(() => log.push("the listener's tick"));
      listen(res, log);
      res.on("close", () => queueMicrotask(() => resolve(log)));
    });
  const ways: Record<string, (res: http.ServerResponse, log: string[]) => void> = {
    "a 'finish' listener": (res, log) => res.on("finish", () => log.push("finish")),
    "end's callback": () => {},
  };
  for (const [way, listen] of Object.entries(ways)) {
    const listener: Listener = way === "end's callback" ? (_req, res) => res.end("hi", () => {}) : bare;
    const run = (server: http.Server | ReturnType<typeof createServer>) => oneRequest(server, listener, (req, res) => heard(req, res, listen));
    const ours = await run(createServer());
    t.same(ours, await run(http.createServer()), `${way}: as on node:http`);
    t.equal(ours[0], "the listener's tick", `${way}: the listener's tick first`);
  }
});
