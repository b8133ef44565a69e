// A 304 says what the 200 would for caches (RFC 9110 §15.4.5): a cache that
// revalidates a stored response updates it from the 304's fields, so a 304
// without the 200's Cache-Control, or with another Vary, changes what the
// cache does with the representation it keeps.
//
// The walk takes every GET route of the table, fills its path parameters with
// their documented examples, and asks for each representation it can give
// (each format the route documents, each content coding, a page of a list);
// wherever the 200 carries a validator, the same request with If-None-Match
// must get a 304 whose cache fields are the 200's, field for field. A route
// that documents a 304 must be reached by the walk, so a new one cannot slip
// past it. Run in process (the real connection code, no port) and over a
// socket.

import t, { type Test } from "tap";
import { docsApp, request as injected } from "../helpers/app.js";
import { listen, splitResponses, talk, type RawResponse } from "../helpers/wire.js";
import type { App } from "../../src/app.js";

/** The fields RFC 9110 §15.4.5 has a 304 carry when its 200 would; Date is compared by presence (it is the time). */
const CACHE_FIELDS = ["cache-control", "content-location", "etag", "expires", "vary"] as const;

type Send = (target: string, headers: Readonly<Record<string, string>>) => Promise<RawResponse>;

/** Each request the walk makes of a route: headers and query variants of the representation. */
function variants(route: App["routes"][number]): { query: string; headers: Record<string, string> }[] {
  const types = route.responses?.[200]?.mediaTypes ?? [];
  const accepts: Record<string, string>[] = types.length > 1 ? types.map((type) => ({ Accept: type })) : [{}];
  const codings: Record<string, string>[] = [{}, { "Accept-Encoding": "gzip" }, { "Accept-Encoding": "br" }];
  const queries = route.query?.limit === undefined ? [""] : ["", "?limit=1"];
  return queries.flatMap((query) => accepts.flatMap((accept) => codings.map((coding) => ({ query, headers: { ...accept, ...coding } }))));
}

function pathOf(route: App["routes"][number]): string {
  return route.path.replace(/[:*](\w+)/g, (_, name: string) => {
    const example = route.params?.[name]?.example;
    if (example === undefined) throw new Error(`${route.path}: no example for :${name}`);
    return example;
  });
}

async function walk(t: Test, app: App, send: Send): Promise<void> {
  let compared = 0;
  for (const route of app.routes) {
    if (route.method !== "GET") continue;
    const documents304 = route.responses?.[304] !== undefined;
    for (const { query, headers } of variants(route)) {
      const target = pathOf(route) + query;
      const what = `GET ${target} ${JSON.stringify(headers)}`;
      const full = await send(target, headers);
      const etag = full.headers.etag;
      if (full.status !== 200 || etag === undefined) {
        if (documents304) t.fail(`${what}: the route documents a 304, but its 200 with a validator was not reached (got ${full.status})`);
        continue;
      }
      t.ok(documents304, `${what}: its 200 carries a validator, so its documentation lists the 304`);
      const revalidated = await send(target, { ...headers, "If-None-Match": etag });
      t.equal(revalidated.status, 304, `${what} with If-None-Match: ${etag}`);
      const expected = Object.fromEntries(CACHE_FIELDS.map((name) => [name, full.headers[name]]));
      const got = Object.fromEntries(CACHE_FIELDS.map((name) => [name, revalidated.headers[name]]));
      t.strictSame(got, expected, `${what}: the 304's cache fields are the 200's`);
      t.equal(revalidated.headers.date !== undefined, full.headers.date !== undefined, `${what}: Date on both or neither`);
      t.equal(revalidated.body, "", `${what}: the 304 has no content`);
      compared++;
    }
  }
  // The page, both OpenAPI documents, the lists, a post, an article and a fact, in every variant.
  t.ok(compared >= 40, `${compared} representations with a validator compared`);
}

async function appWithPost(): Promise<App> {
  const { app } = await docsApp();
  // The post the route table's example names; the seed has articles and facts, but no posts.
  const made = await injected(app, "POST", "/api/v1/post/hello", { "Content-Type": "application/json" }, '{"title": "Hello", "body": "A short post."}');
  if (made.status !== 201) throw new Error(`could not create the example post: ${made.status}`);
  return app;
}

t.test("in process: every 304 carries the cache fields of its 200", async (t) => {
  const app = await appWithPost();
  await walk(t, app, (target, headers) => injected(app, "GET", target, headers));
});

t.test("over a socket: every 304 carries the cache fields of its 200", async (t) => {
  const app = await appWithPost();
  const s = await listen(app);
  t.teardown(s.close);
  await walk(t, app, async (target, headers) => {
    let head = `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n`;
    for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
    const responses = splitResponses(await talk(s.port, [`${head}\r\n`]));
    if (responses.length !== 1) throw new Error(`expected one response to GET ${target}, got ${responses.length}`);
    return responses[0]!;
  });
});
