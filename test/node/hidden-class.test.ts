// Requests and responses of one app keep one hidden class through Express's
// prototype swap (src/node/request.ts, `next` and the fields beside it): V8
// gives an object whose prototype was swapped a hidden class of its own for
// each property added afterwards, and every access to such an object misses
// its inline cache. Asked of V8 itself (%HaveSameMap, allowed for this
// process only), over a real socket: the response of each request has the
// hidden class of the one before it once Express has answered, and so has
// the request of a listener that gives Express's router nothing to add.

import http from "node:http";
import { setFlagsFromString } from "node:v8";
import express from "express";
import t from "tap";
import { createServer, type RequestListener } from "../../src/node/index.js";
import { listenNode } from "../helpers/node-server.js";
import { splitResponses, talk } from "../helpers/wire.js";

setFlagsFromString("--allow-natives-syntax");
// Compiled after the flag is set: V8's own test of two objects' hidden classes.
const sameMap = new Function("a", "b", "return %HaveSameMap(a, b)") as (a: object, b: object) => boolean;

/** Serves `requests` GETs of `path`, in turn on one connection, and returns each request and response as the app left them. */
async function served(listener: RequestListener, path: string, requests: number): Promise<{ req: object; res: object }[]> {
  const seen: { req: object; res: object }[] = [];
  const server = createServer(((req: http.IncomingMessage, res: http.ServerResponse) => {
    seen.push({ req, res });
    (listener as (req: http.IncomingMessage, res: http.ServerResponse) => void)(req, res);
  }) as RequestListener);
  const running = await listenNode(server);
  try {
    const ask = `GET ${path} HTTP/1.1\r\nHost: a\r\n\r\n`;
    const out = await talk(running.port, [...Array.from({ length: requests - 1 }, () => ask), ask.replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n")]);
    const answers = splitResponses(out);
    if (answers.length !== requests || answers.some((a) => a.status !== 200)) throw new Error(`expected ${requests} answers of 200, got ${answers.map((a) => a.status).join(", ")}`);
  } finally {
    await running.close();
  }
  return seen;
}

t.test("V8 tells hidden classes apart here: a property added after a prototype swap makes one of its own", async (t) => {
  // The premise the declared fields rest on; were it false, the tests below could not fail.
  const proto = Object.create(http.IncomingMessage.prototype) as object;
  const made = [0, 1].map(() => {
    const o = { a: 1 } as Record<string, unknown>;
    Object.setPrototypeOf(o, proto);
    o.added = 2;
    return o;
  });
  t.notOk(sameMap(made[0]!, made[1]!), "two objects swapped and then given the same property differ");
  t.ok(sameMap({ a: 1 }, { a: 2 }), "two literals of one shape are alike");
});

t.test("an Express app's responses share one hidden class", async (t) => {
  const app = express();
  app.get("/", (_req, res) => {
    res.send("hi");
  });
  const seen = await served(app as unknown as RequestListener, "/", 3);
  t.equal(seen.length, 3);
  t.ok(sameMap(seen[1]!.res, seen[2]!.res), "the second and third responses");
  t.ok("locals" in seen[2]!.res && typeof (seen[2]!.res as { locals: unknown }).locals === "object", "Express's locals were set as on node");
});

t.test("requests share one hidden class through a prototype swap and the fields Express's router sets", async (t) => {
  // Express's own order: its prototype first, then its router's fields, and a listener (which makes node's count of
  // events an own property). Express's router also adds a symbol of its own to every request it matches, which
  // cannot be declared, so its app.handle is not the listener here.
  const app = express();
  const listener = (req: http.IncomingMessage, res: http.ServerResponse) => {
    Object.setPrototypeOf(req, app.request);
    const fields = req as unknown as Record<string, unknown>;
    fields.next = () => {};
    fields.baseUrl = "";
    fields.originalUrl = req.url;
    fields._parsedUrl = { pathname: req.url };
    fields.params = {};
    fields.route = { path: req.url };
    req.once("end", () => {});
    res.end(`${String(fields.originalUrl)}`);
  };
  const seen = await served(listener as unknown as RequestListener, "/x", 3);
  t.ok(sameMap(seen[1]!.req, seen[2]!.req), "the second and third requests");
  t.equal((seen[2]!.req as unknown as { originalUrl: string }).originalUrl, "/x");
});
