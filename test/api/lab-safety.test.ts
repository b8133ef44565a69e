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
  // Nothing of the refused field reached the head (the CORS policy's own Access-Control-Allow-Origin: * aside).
  const name = decodeURIComponent(query.slice(0, query.indexOf("="))).toLowerCase();
  const asked = decodeURIComponent(query.slice(query.indexOf("=") + 1));
  if (name === "access-control-allow-origin") t.equal(r.headers[name], "*", "the policy's value, not the one asked");
  else t.notOk(name in r.headers, `${query}: no ${name} in the answer`);
  t.notOk(Object.values(r.headers).includes(asked), `${query}: the value asked is nowhere in the head`);
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

t.test("CORS: the lab is readable from any origin without credentials, preflights included; nothing else answers CORS", async (t) => {
  const { port } = await startApi(t);
  const origin = { Origin: "http://learner.example" };
  const read = await raw(port, "GET", "/api/lab/get", origin);
  t.equal(read.headers["access-control-allow-origin"], "*");
  t.equal(read.headers["access-control-expose-headers"], "*");
  t.notOk("access-control-allow-credentials" in read.headers, "never with credentials");
  const refused = await raw(port, "GET", "/api/lab/status/600", origin);
  t.equal(refused.status, 400);
  t.equal(refused.headers["access-control-allow-origin"], "*", "a refusal is readable too, so the page can show why");
  const preflight = await raw(port, "OPTIONS", "/api/lab/anything", { ...origin, "Access-Control-Request-Method": "PURGE", "Access-Control-Request-Headers": "content-type, x-lab" });
  t.equal(preflight.statusLine, "HTTP/1.1 204 No Content");
  t.same(
    preflight.fieldOrder.filter((name) => name !== "Date" && name !== "X-Content-Type-Options"),
    ["Allow", "Access-Control-Allow-Origin", "Access-Control-Expose-Headers", "Access-Control-Allow-Methods", "Access-Control-Allow-Headers", "Access-Control-Max-Age", "Connection"],
  );
  t.match(preflight.headers, { "access-control-allow-origin": "*", "access-control-allow-methods": "PURGE", "access-control-allow-headers": "content-type, x-lab", "access-control-max-age": "3600" });
  t.notOk("access-control-allow-credentials" in preflight.headers);
  // A value that is not a token list is not echoed (the preflight falls back to Allow, and names no fields).
  const odd = await raw(port, "OPTIONS", "/api/lab/get", { ...origin, "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "a b" });
  t.equal(odd.headers["access-control-allow-methods"], "GET");
  t.notOk("access-control-allow-headers" in odd.headers);
  for (const [method, path] of [["GET", "/api/v2/status"], ["GET", "/api/echo"], ["GET", "/"], ["GET", "/api/openapi.json"], ["OPTIONS", "/api/echo"], ["OPTIONS", "/api/v1/posts"], ["GET", "/api/lab/no-such-resource"]] as const) {
    const r = await raw(port, method, path, method === "OPTIONS" ? { ...origin, "Access-Control-Request-Method": "POST" } : origin);
    t.same(Object.keys(r.headers).filter((name) => name.startsWith("access-control-")), [], `${method} ${path}: no CORS field, so another origin cannot read it`);
  }
});

t.test("a document response-headers makes is sandboxed whatever its Content-Type: script in it never runs as this origin", async (t) => {
  const { port } = await startApi(t);
  for (const type of ["text/html", "image/svg+xml", "application/xml", "text/xml", "application/xhtml+xml"]) {
    const r = await raw(port, "GET", `/api/lab/response-headers?Content-Type=${encodeURIComponent(type)}&x=${encodeURIComponent("<script>alert(document.domain)</script>")}`);
    t.equal(r.headers["content-type"], type);
    t.match(r.body, /<script>/);
    t.equal(r.headers["content-security-policy"], "sandbox", `${type}: sandboxed`);
  }
});

t.test("every lab resource that can answer HTML, SVG or XML is sandboxed: <script> in it never runs as this origin", async (t) => {
  const { port } = await startApi(t);
  const script = Buffer.from("<script>fetch('/api/wire')</script>").toString("base64url");
  const cases: [string, Record<string, string>, string][] = [
    [`/api/lab/base64/${script}`, {}, "sandbox"],
    ["/api/lab/html", {}, "sandbox"],
    ["/api/lab/xml", {}, "sandbox"],
    ["/api/lab/encoding/utf8", {}, "sandbox"],
    ["/api/lab/links/5/2", {}, "sandbox"],
    ["/api/lab/image/svg", {}, "sandbox"],
    ["/api/lab/image", { Accept: "image/svg+xml" }, "sandbox"],
    ["/api/lab/forms/post", {}, "sandbox allow-forms"],
    [`/api/lab/response-headers?Content-Type=text/html&x=${encodeURIComponent("<script>alert(1)</script>")}`, {}, "sandbox"],
  ];
  for (const [target, headers, csp] of cases) {
    const r = await raw(port, "GET", target, headers);
    t.equal(r.status, 200, target);
    t.match(r.headers["content-type"], /^(text\/html|application\/xml|image\/svg\+xml)/, `${target}: a document a browser would render`);
    t.equal(r.headers["content-security-policy"], csp, `${target}: ${csp}, never allow-scripts or allow-same-origin`);
  }
  const reflected = await raw(port, "GET", `/api/lab/base64/${script}`);
  t.equal(reflected.body, "<script>fetch('/api/wire')</script>", "base64 decodes markup as given: the sandbox is what keeps it from running");
});

t.test("the cookies the lab sets ride only on requests to /api/lab/", async (t) => {
  const { port } = await startApi(t);
  const set = await raw(port, "GET", "/api/lab/cookies/set?flavour=oat");
  t.match(set.headers["set-cookie"], /^flavour=oat; Path=\/api\/lab\/(;|$)/);
  t.notMatch(set.headers["set-cookie"], /Domain=/i);
  const named = await raw(port, "GET", "/api/lab/cookies/set/k/v");
  t.match(named.headers["set-cookie"], /^k=v; Path=\/api\/lab\//);
  const deleted = await raw(port, "GET", "/api/lab/cookies/delete?flavour");
  t.match(deleted.headers["set-cookie"], /^flavour=; Path=\/api\/lab\/; Max-Age=0/);
});
