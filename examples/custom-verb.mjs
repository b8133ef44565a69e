// A cache with a custom method: GET /cache/:key computes a value on a miss and
// keeps it; PURGE /cache/:key drops it (the verb caching proxies use).
// Run: PORT=8080 node examples/custom-verb.mjs, then: curl -i -X PURGE http://127.0.0.1:8080/cache/a
import { createRouter, createServer } from "startline";

const cache = new Map();
const text = (status, body, headers = {}) =>
  ({ status, headers: { "Content-Type": "text/plain; charset=utf-8", ...headers }, body: `${body}\n` });

function read(request, { key }) {
  const hit = cache.has(key);
  if (!hit) cache.set(key, `${key}, computed at ${new Date().toISOString()}`);
  return text(200, cache.get(key), { "X-Cache": hit ? "HIT" : "MISS" });
}

function purge(request, { key }) {
  return cache.delete(key) ? text(200, `purged ${key}`) : text(404, `${key} is not cached`);
}

const router = createRouter([
  { method: "GET", path: "/cache/:key", summary: "Read an entry, computing it on a miss", handler: read },
  { method: "PURGE", path: "/cache/:key", summary: "Drop an entry", handler: purge },
]);

const host = process.env.HOST ?? "127.0.0.1";
const { port } = await createServer(router).listen(Number(process.env.PORT ?? 8080), host);
console.log(`listening on http://${host}:${port}`); // only now: the socket is listening
