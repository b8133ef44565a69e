// GET /api/usage: requests served per API version since the app started, so
// an operator can see when v1 has no clients left (docs/api.md, section 8).

import t from "tap";
import net from "node:net";
import { once } from "node:events";
import { bearer, jsonOf, raw, startApi, USER_TOKEN } from "./client.js";
import { readUntil, receivedUntilClose, splitResponses } from "../helpers/wire.js";

t.test("GET /api/usage counts the requests of each version made on that app", async (t) => {
  const api = await startApi(t);
  const other = await startApi(t);

  const initial = await raw(api.port, "GET", "/api/usage");
  t.equal(initial.status, 200);
  t.equal(initial.headers["content-type"], "application/json");
  t.equal(initial.headers["cache-control"], "no-store", "a live count is never cached");
  const body = jsonOf(initial);
  t.same(body.versions, { v1: 0, "v1-1": 0, v2: 0 }, "every version served, at zero");
  t.match(body.since, /^\d{4}-\d{2}-\d{2}T/);

  const requests: [string, string, Record<string, string>?, string?][] = [
    ["GET", "/api/v1/status"],
    ["GET", "/api/v1/posts"],
    ["GET", "/api/v1/post"],
    ["GET", "/api/v1/artigo/1"],
    ["POST", "/api/v1/post/x", { "Content-Type": "application/json" }, '{"title":"T","body":"B"}'],
    ["GET", "/api/v1/post/missing"], // a 404 from a v1 route is still a v1 client
    ["GET", "/api/v1-1/status"],
    ["GET", "/api/v1-1/status"],
    ["GET", "/api/v2/status"],
    ["GET", "/api/v2/facts/random"],
    ["GET", "/api/v2/facts/1"],
  ];
  for (const [method, target, headers, body] of requests) await raw(api.port, method, target, headers ?? {}, body);
  await fetch(`${api.base}/api/v2/facts`, { method: "POST", headers: { "Content-Type": "text/plain" }, body: "A fact." });

  const after = jsonOf(await raw(api.port, "GET", "/api/usage"));
  t.same(after.versions, { v1: 6, "v1-1": 2, v2: 4 });
  t.equal(after.since, body.since, "the start time does not move");

  const again = jsonOf(await raw(api.port, "GET", "/api/usage"));
  t.same(again.versions, { v1: 6, "v1-1": 2, v2: 4 }, "asking for usage is not counted as any version");

  t.same(jsonOf(await raw(other.port, "GET", "/api/usage")).versions, { v1: 0, "v1-1": 0, v2: 0 }, "another app has its own counts");
  t.same(api.app.usage(), { v1: 6, "v1-1": 2, v2: 4 }, "the router's own view agrees");
});

t.test("keep-alive requests on one connection are each counted", async (t) => {
  const api = await startApi(t);
  // Three requests on one socket, one after another's answer: the last asks to close.
  const get = (close: boolean) => `GET /api/v1/status HTTP/1.1\r\nHost: t\r\n${close ? "Connection: close\r\n" : ""}\r\n`;
  const socket = net.connect(api.port, "127.0.0.1");
  await once(socket, "connect");
  for (const close of [false, false]) {
    socket.write(get(close));
    await readUntil(socket, "}");
  }
  const last = receivedUntilClose(socket);
  socket.write(get(true));
  t.equal(splitResponses(await last)[0]?.status, 200, "the third answered on the same connection, which then closes");
  t.same(jsonOf(await raw(api.port, "GET", "/api/usage")).versions, { v1: 3, "v1-1": 0, v2: 0 });
});

t.test("a request refused with 401 is counted: it came from a client of that version", async (t) => {
  const api = await startApi(t);
  const patch = { "Content-Type": "application/merge-patch+json" };
  t.equal((await raw(api.port, "UPDATE", "/api/v1/artigo/1", patch, '{"title":"x"}')).status, 401, "no token");
  t.equal((await raw(api.port, "UPDATE", "/api/v1/artigo/1", { ...patch, ...bearer(USER_TOKEN) }, '{"title":"x"}')).status, 401, "a user's token");
  // An operator removes v1 when its count stops moving: a client still calling it, even refused, must show.
  t.same(jsonOf(await raw(api.port, "GET", "/api/usage")).versions, { v1: 2, "v1-1": 0, v2: 0 });
});
