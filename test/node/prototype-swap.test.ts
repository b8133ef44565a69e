// Express 5 swaps each request's and response's prototype for its own, whose
// chain ends in node's http.IncomingMessage.prototype and
// http.ServerResponse.prototype. startline/node's members are the objects'
// own (src/node/own-members.ts), so they are found first whatever the
// prototype: here, every member node's prototypes define is an own property
// of ours, and an Express app answers, pipelined and streamed, with node's
// framing functions patched to throw for the whole test.

import http from "node:http";
import t from "tap";
import express from "express";
import { createServer } from "../../src/node/index.js";
import type { IncomingRequest } from "../../src/node/request.js";
import type { ServerResponseOnEngine } from "../../src/node/response.js";
import { listenNode } from "../helpers/node-server.js";
import { splitResponses, talk } from "../helpers/wire.js";

const members = (proto: object) => Object.getOwnPropertyNames(proto).filter((name) => name !== "constructor");

t.test("every member of node's request and response prototypes is an own property of ours", async (t) => {
  let pair: [IncomingRequest, ServerResponseOnEngine] | undefined;
  const server = createServer((req, res) => {
    pair = [req as unknown as IncomingRequest, res as unknown as ServerResponseOnEngine];
    res.end();
  });
  const running = await listenNode(server);
  t.teardown(running.close);
  await talk(running.port, ["GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"]);
  const [req, res] = pair!;
  for (const name of members(http.IncomingMessage.prototype)) t.ok(Object.hasOwn(req, name), `request.${name}`);
  for (const name of new Set([...members(http.ServerResponse.prototype), ...members(http.OutgoingMessage.prototype)])) {
    // Deprecated accessors that node itself computes from getHeaders() or that read nothing of its framing.
    if (name === "_headers" || name === "_headerNames") continue;
    t.ok(Object.hasOwn(res, name), `response.${name}`);
  }
});

/** node's functions that frame or write a response, patched to throw while `run` runs. */
async function withNodeFramingForbidden<T>(run: () => Promise<T>): Promise<T> {
  const protos = [http.ServerResponse.prototype, http.OutgoingMessage.prototype] as unknown as Record<string, unknown>[];
  const names = ["_send", "_writeRaw", "_storeHeader", "_implicitHeader", "writeHead", "write", "end", "setHeader", "flushHeaders", "_finish"];
  const saved: [Record<string, unknown>, string, PropertyDescriptor][] = [];
  for (const proto of protos) {
    for (const name of names) {
      const descriptor = Object.getOwnPropertyDescriptor(proto, name);
      if (descriptor === undefined) continue;
      saved.push([proto, name, descriptor]);
      Object.defineProperty(proto, name, {
        configurable: true,
        writable: true,
        value() {
          throw new Error(`node's ${name} ran`);
        },
      });
    }
  }
  try {
    return await run();
  } finally {
    for (const [proto, name, descriptor] of saved) Object.defineProperty(proto, name, descriptor);
  }
}

t.test("an Express response's bytes come from startline's writer, never node's", async (t) => {
  const app = express();
  app.get("/json", (_req, res) => {
    res.cookie("a", "1").cookie("b", "2").json({ ok: true });
  });
  app.get("/piped", (_req, res) => {
    res.type("text/plain");
    res.write("one ");
    res.end("two");
  });
  const seen: boolean[] = [];
  app.use((req, res) => {
    seen.push(Object.getPrototypeOf(Object.getPrototypeOf(Object.getPrototypeOf(req))) === http.IncomingMessage.prototype);
    seen.push(res instanceof http.ServerResponse);
    res.status(404).send("none");
  });
  const running = await listenNode(createServer(app));
  t.teardown(running.close);
  const out = await withNodeFramingForbidden(() =>
    talk(running.port, ["GET /json HTTP/1.1\r\nHost: a\r\n\r\nGET /piped HTTP/1.1\r\nHost: a\r\n\r\nGET /other HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"]),
  );
  t.same(seen, [true, true], "Express gave them node's prototypes (its own, whose chain ends in node's)");
  const [json, piped, other] = splitResponses(out);
  const text = out.toString("latin1");
  t.equal(json!.status, 200);
  t.same(JSON.parse(json!.body), { ok: true });
  t.match(text, /Set-Cookie: a=1; Path=\/\r\nSet-Cookie: b=2; Path=\/\r\n/, "both cookies");
  // The field order only startline's writer has: Date then X-Content-Type-Options straight after the status line.
  t.match(json!.fieldOrder.slice(0, 2), ["Date", "X-Content-Type-Options"]);
  t.equal(piped!.headers["transfer-encoding"], "chunked");
  t.equal(piped!.body, "one two");
  t.equal(other!.status, 404);
});
