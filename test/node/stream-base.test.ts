// A response's events behave as those of node's own legacy Stream (what
// node's OutgoingMessage extends), though its emitter's fields are made by
// src/node/stream-base.ts rather than by EventEmitter.init: the same script
// of listeners added, removed, emitted and counted gives the same account on
// both, names Object.prototype has included. Over a real socket, a listener
// added to a response that had none until its 'finish' still hears 'close'.

import http from "node:http";
import { Stream } from "node:stream";
import t from "tap";
import { createServer, type RequestListener } from "../../src/node/index.js";
import type { IncomingRequest } from "../../src/node/request.js";
import { ServerResponseOnEngine, type Answering } from "../../src/node/response.js";
import { listenNode } from "../helpers/node-server.js";
import { splitResponses, talk } from "../helpers/wire.js";

/** What an emitter says of itself along a script of calls, in order. */
function script(emitter: Stream): unknown[] {
  const log: unknown[] = [];
  const account = (what: string) => log.push([what, emitter.eventNames(), emitter.listenerCount("finish"), emitter.listenerCount("toString"), emitter.getMaxListeners()]);
  account("new");
  // Nothing of Object.prototype reachable through the table of listeners (node's has no prototype at all).
  const table = (emitter as unknown as { _events: object })._events;
  log.push(["the table inherits nothing", ["toString", "constructor", "__proto__", "hasOwnProperty", "valueOf"].filter((name) => name in table)]);
  emitter.on("removeListener", (type: string | symbol) => log.push(["removeListener", type]));
  const a = () => log.push("finish a");
  const b = () => log.push("finish b");
  const c = () => log.push("close c");
  emitter.on("finish", a);
  emitter.on("finish", b);
  emitter.on("close", c);
  emitter.once("drain", () => log.push("drain once"));
  account("added");
  log.push(["emit finish", emitter.emit("finish")], ["emit drain", emitter.emit("drain")], ["emit drain again", emitter.emit("drain")]);
  account("emitted");
  emitter.removeListener("finish", a);
  emitter.removeListener("close", c);
  account("removed one of two, and the only one");
  emitter.on("toString", () => log.push("toString heard"));
  emitter.on("__proto__", () => log.push("__proto__ heard"));
  log.push(["emit toString", emitter.emit("toString")], ["emit __proto__", emitter.emit("__proto__")], ["emit constructor", emitter.emit("constructor")]);
  account("names Object.prototype has");
  try {
    emitter.emit("error", new Error("nobody listens"));
    log.push("error emitted without a listener, and nothing thrown");
  } catch (error) {
    log.push(["thrown", (error as Error).message]);
  }
  emitter.setMaxListeners(3);
  emitter.removeAllListeners("finish");
  account("all of finish removed");
  emitter.removeAllListeners();
  account("all removed");
  log.push(["emit finish at last", emitter.emit("finish")]);
  return log;
}

const answering: Answering = { answer() {}, done() {}, alone: () => true };
const request = { method: "GET", socket: null } as unknown as IncomingRequest;

t.test("a response's listeners as a Stream's: added, heard, removed (and announced), counted, named", async (t) => {
  const response = new ServerResponseOnEngine(request, answering, false);
  t.ok(response instanceof Stream, "a Stream by its prototype chain");
  const ours = script(response);
  const nodes = script(new Stream());
  t.same(ours, nodes);
  // Not a script that says nothing: the removals were announced, and names Object.prototype has are events like any other.
  t.ok(nodes.some((entry) => JSON.stringify(entry) === '["removeListener","close"]'), "the only listener of 'close' removed, and announced");
  t.ok(nodes.includes("toString heard") && nodes.includes("__proto__ heard"));
  t.ok(nodes.some((entry) => JSON.stringify(entry) === '["thrown","nobody listens"]'));
});

t.test("over a socket: a listener a response gets only at its 'finish' still hears its 'close'", async (t) => {
  const heard: string[] = [];
  const server = createServer(((_req: http.IncomingMessage, res: http.ServerResponse) => {
    const events = res as unknown as Stream;
    heard.push(`listeners before: ${events.eventNames().length}`);
    res.end("ok");
    events.once("finish", () => {
      heard.push("finish");
      events.once("close", () => heard.push("close"));
    });
  }) as RequestListener);
  const running = await listenNode(server);
  t.teardown(running.close);
  const closed = new Promise<void>((resolve) => server.once("request", (_req: unknown, res: Stream) => res.once("close", () => resolve())));
  const out = await talk(running.port, ["GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"]);
  await closed;
  t.equal(splitResponses(out)[0]!.body, "ok");
  t.same(heard, ["listeners before: 0", "finish", "close"]);
});
