// Requests and responses of one app keep one hidden class through Express's
// prototype swap (src/node/request.ts, `next` and the fields beside it): V8
// gives an object whose prototype was swapped a hidden class of its own for
// each property added afterwards, and every access to such an object misses
// its inline cache. Asked of V8 itself (%HaveSameMap, allowed for this
// process only), over a real socket: the request and response of each
// request have the hidden class of the one before them once Express has
// answered one (the first shows its router's mark, src/node/request.ts).

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

/** Serves `requests` GETs of `path`, one after the other, and returns each request and response as the app left them. */
async function served(listener: RequestListener, path: string, requests: number): Promise<{ req: object; res: object }[]> {
  const seen: { req: object; res: object }[] = [];
  const server = createServer(((req: http.IncomingMessage, res: http.ServerResponse) => {
    seen.push({ req, res });
    (listener as (req: http.IncomingMessage, res: http.ServerResponse) => void)(req, res);
  }) as RequestListener);
  const running = await listenNode(server);
  try {
    // One after the other, each answered before the next is made.
    for (let i = 0; i < requests; i++) {
      const answers = splitResponses(await talk(running.port, [`GET ${path} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n`]));
      if (answers.length !== 1 || answers[0]!.status !== 200) throw new Error(`expected an answer of 200, got ${answers.map((a) => a.status).join(", ")}`);
    }
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

t.test("an Express app's requests and responses share one hidden class", async (t) => {
  const app = express();
  app.get("/", (_req, res) => {
    res.send("hi");
  });
  // The first request shows the router's mark; the later ones are made with it.
  const seen = await served(app as unknown as RequestListener, "/", 3);
  t.equal(seen.length, 3);
  t.ok(sameMap(seen[1]!.res, seen[2]!.res), "the second and third responses");
  t.ok(sameMap(seen[1]!.req, seen[2]!.req), "the second and third requests");
  t.equal((seen[2]!.req as unknown as { route: { path: string } }).route.path, "/", "the router's fields were set as on node");
  t.ok("locals" in seen[2]!.res && typeof (seen[2]!.res as { locals: unknown }).locals === "object", "Express's locals were set as on node");
});

t.test("requests share one hidden class through a prototype swap and the fields Express's router sets, by name", async (t) => {
  // Express's own order: its prototype first, then its router's fields, and a listener (which makes node's count of
  // events an own property); each field named, so that a declaration missing is a test failing.
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
