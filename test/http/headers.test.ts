// Fields every response carries, whoever wrote it: the linter's checklist.

import t from "tap";
import { createApp } from "../../src/app.js";
import { inject } from "../../src/http/connection/inject.js";
import { createMemoryStore } from "../../src/store/memory.js";
import { seed } from "../../src/store/seed.js";
import { splitResponses } from "../helpers/wire.js";

t.test("X-Content-Type-Options: nosniff on every response: success, problem, protocol error, HEAD, 304", async (t) => {
  const store = createMemoryStore();
  await seed(store);
  const app = createApp({ store });
  const requests = [
    "GET /api/v2/status HTTP/1.1\r\nHost: t\r\n\r\n",
    "GET /nowhere HTTP/1.1\r\nHost: t\r\n\r\n",
    "HEAD /api/v2/facts/1 HTTP/1.1\r\nHost: t\r\n\r\n",
    "OPTIONS /api/v2/facts HTTP/1.1\r\nHost: t\r\n\r\n",
    "GET / HTTP/1.1\r\nHost : t\r\n\r\n",
  ];
  const out = (await inject(app, requests.join(""))).output;
  const responses = splitResponses(out, [false, false, true, false, false]);
  t.equal(responses.length, 5);
  for (const r of responses) t.equal(r.headers["x-content-type-options"], "nosniff", `${r.status}`);
});

t.test("dynamic JSON says how caches may use it: no-cache, unless the route sets its own", async (t) => {
  const store = createMemoryStore();
  await seed(store);
  const app = createApp({ store });
  const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: t\r\n\r\n`;
  const out = (await inject(app, get("/api/v2/status") + get("/api/v1/posts") + get("/api/v2/facts/1") + get("/api/v1/artigo/1") + get("/api/v2/facts/random"))).output;
  const [status, list, fact, article, random] = splitResponses(out);
  t.equal(status!.headers["cache-control"], "no-cache");
  t.equal(list!.headers["cache-control"], "no-cache");
  t.equal(fact!.headers["cache-control"], "no-cache");
  t.equal(article!.headers["cache-control"], "no-cache");
  t.equal(random!.headers["cache-control"], "private, max-age=3600", "the spec's own value for a random fact");
});
