// The lab is served from the same origin as the page at / (where an
// administrator may paste a token) and the API: nothing it answers may act on
// that origin as a whole. Each safety point over a real socket, exact bytes:
// response-headers refuses the fields that act on the whole origin (Refresh,
// Strict-Transport-Security, Clear-Site-Data, Alt-Svc, a Set-Cookie outside
// /api/lab/ or with Domain, a Location elsewhere, the CORS fields), each with
// a problem that says why, and takes them when they stay on the lab.

import t, { type Test } from "tap";
import { checkProblem, raw, startApi } from "./client.js";

async function refused(t: Test, port: number, query: string, detail: RegExp): Promise<void> {
  const r = await raw(port, "GET", `/api/lab/response-headers?${query}`);
  const body = checkProblem(t, r, 400, detail);
  t.equal(body?.type, "/problems/invalid-parameter", query);
  // Nothing of the refused field reached the head.
  const name = decodeURIComponent(query.slice(0, query.indexOf("="))).toLowerCase();
  t.notOk(name in r.headers, `${query}: no ${name} in the answer`);
}

t.test("response-headers refuses each field that acts on the whole origin, saying why", async (t) => {
  const { port } = await startApi(t);
  const cases: [string, RegExp][] = [
    ["Refresh=0%3Burl%3Dhttp%3A%2F%2Felsewhere.example%2F", /Refresh cannot be set here: a browser follows it to any URL, sandboxed or not/],
    ["refresh=5", /refresh cannot be set here: .*open redirect/],
    ["Strict-Transport-Security=max-age%3D31536000", /Strict-Transport-Security cannot be set here: it sets the transport of every later request/],
    ["Clear-Site-Data=%22*%22", /Clear-Site-Data cannot be set here: it clears the cookies, storage and caches of the whole origin/],
    ["Alt-Svc=h2%3D%22elsewhere.example%3A443%22", /Alt-Svc cannot be set here/],
    ["NEL=%7B%7D", /NEL cannot be set here/],
    ["Report-To=%7B%7D", /Report-To cannot be set here/],
    ["Accept-CH=Sec-CH-UA", /Accept-CH cannot be set here/],
    ["Service-Worker-Allowed=%2F", /Service-Worker-Allowed cannot be set here/],
    ["Link=%3Chttp%3A%2F%2Felsewhere.example%2Fx.css%3E%3B%20rel%3Dstylesheet", /Link cannot be set here: it can make a browser fetch or apply another resource/],
    ["Access-Control-Allow-Origin=http%3A%2F%2Felsewhere.example", /Access-Control-Allow-Origin cannot be set here: the CORS fields are the server's/],
    ["Access-Control-Allow-Credentials=true", /Access-Control-Allow-Credentials cannot be set here/],
  ];
  for (const [query, detail] of cases) await refused(t, port, query, detail);
});

t.test("response-headers takes a Set-Cookie only under Path=/api/lab/, without Domain, and not too large", async (t) => {
  const { port } = await startApi(t);
  const cases: [string, RegExp][] = [
    ["a=1", /Set-Cookie cannot be set here: it has no Path attribute: give Path=\/api\/lab\//],
    ["a=1; Path=/", /its Path "\/" is not under \/api\/lab\/: it would ride on requests to the page and the API/],
    ["a=1; Path=/api/", /its Path "\/api\/" is not under \/api\/lab\//],
    ["a=1; Path=/api/labx", /not under \/api\/lab\//],
    ["a=1; Path=/api/lab/; Domain=127.0.0.1", /it has a Domain attribute/],
    ["a=1; path=/api/lab/; domain=example", /it has a Domain attribute/],
    [`big=${"x".repeat(1100)}; Path=/api/lab/`, /characters long, over 1024/],
  ];
  for (const [cookie, detail] of cases) await refused(t, port, `Set-Cookie=${encodeURIComponent(cookie)}`, detail);
  const kept = await raw(port, "GET", `/api/lab/response-headers?Set-Cookie=${encodeURIComponent("a=1; Path=/api/lab/; Max-Age=60")}`);
  t.equal(kept.status, 200);
  t.equal(kept.headers["set-cookie"], "a=1; Path=/api/lab/; Max-Age=60", "a cookie that stays on the lab is set as asked");
});

t.test("response-headers takes a Location only on this server's origin", async (t) => {
  const { port } = await startApi(t);
  for (const [url, detail] of [
    ["http://elsewhere.example/", /leads to http:\/\/elsewhere.example, not this server's origin/],
    ["//elsewhere.example/x", /leads to http:\/\/elsewhere.example/],
    ["https://127.0.0.1:" + port + "/", /leads to https:\/\/127.0.0.1/],
    ["http://127.0.0.1:" + port + "@elsewhere.example/", /userinfo/],
  ] as const) {
    await refused(t, port, `Location=${encodeURIComponent(url)}`, detail);
  }
  for (const url of ["/api/lab/get", "get", `HTTP://127.0.0.1:${port}/api/lab/html`]) {
    const r = await raw(port, "GET", `/api/lab/response-headers?Location=${encodeURIComponent(url)}`);
    t.equal(r.status, 200, url);
    t.equal(r.headers.location, url, `${url}: on this origin, taken as given`);
  }
});
