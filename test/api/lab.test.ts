// The lab (/api/lab/, docs/lab.md) over real sockets: the exact bytes of each
// answer (status line, fields in order, framing), any method token, the
// bounds refused with a problem that names the parameter and its range, the
// redirect targets that would leave this server, and header injection.
// Waits are checked only as lower bounds; speed is never asserted.

import t, { type Test } from "tap";
import { gunzipSync, inflateSync, brotliDecompressSync } from "node:zlib";
import net from "node:net";
import { once } from "node:events";
import { checkProblem, startApi } from "./client.js";
import { dechunk, talk } from "../helpers/wire.js";
import { seededBytes } from "../../src/api/lab/bodies.js";

const DATE = /^Date: [A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;

interface Exchange {
  /** Status line and fields, one per line, the Date line replaced by "Date: <date>". */
  readonly head: string[];
  readonly status: number;
  readonly fields: Record<string, string>;
  /** The bytes after the head, as sent (chunk framing included). */
  readonly rest: Buffer;
}

/** One request on its own connection, bytes exactly as given, and what came back before the server closed. */
async function send(t: Test, port: number, request: string): Promise<Exchange> {
  const out = await talk(port, [request]);
  const end = out.indexOf("\r\n\r\n");
  t.ok(end > 0, "a whole head came back");
  const lines = out.toString("latin1", 0, end).split("\r\n");
  const head = lines.map((l) => (l.startsWith("Date: ") ? (t.match(l, DATE), "Date: <date>") : l));
  const fields: Record<string, string> = {};
  for (const line of lines.slice(1)) fields[line.slice(0, line.indexOf(":")).toLowerCase()] = line.slice(line.indexOf(":") + 2);
  return { head, status: Number(lines[0]!.split(" ")[1]), fields, rest: out.subarray(end + 4) };
}

const req = (method: string, target: string, port: number, extra = "") => `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${extra}Connection: close\r\n\r\n`;

t.test("status/:code: the status, the framing and the fields each code calls for, for any method", async (t) => {
  const { port } = await startApi(t);
  const teapot = await send(t, port, req("BREW", "/api/lab/status/418", port));
  const body = teapot.rest.toString();
  t.same(teapot.head, [
    "HTTP/1.1 418 ",
    "Date: <date>",
    "X-Content-Type-Options: nosniff",
    "Access-Control-Allow-Origin: *",
    "Access-Control-Expose-Headers: *",
    "Content-Type: application/problem+json",
    "Cache-Control: no-store",
    `Content-Length: ${Buffer.byteLength(body)}`,
    "Connection: close",
  ]);
  t.match(JSON.parse(body), { type: "/problems/lab-status", status: 418, detail: /You asked for a 418/ });

  const noContent = await send(t, port, req("purge", "/api/lab/status/204", port));
  t.same(noContent.head, ["HTTP/1.1 204 No Content", "Date: <date>", "X-Content-Type-Options: nosniff", "Access-Control-Allow-Origin: *", "Access-Control-Expose-Headers: *", "Cache-Control: no-store", "Connection: close"], "204: no Content-Length, no body");
  t.equal(noContent.rest.length, 0);
  const notModified = await send(t, port, req("GET", "/api/lab/status/304", port));
  t.same(notModified.head, ["HTTP/1.1 304 Not Modified", "Date: <date>", "X-Content-Type-Options: nosniff", "Access-Control-Allow-Origin: *", "Access-Control-Expose-Headers: *", "Cache-Control: no-store", "Connection: close"]);
  t.equal(notModified.rest.length, 0);
  const reset = await send(t, port, req("POST", "/api/lab/status/205", port));
  t.same(reset.head.slice(-2), ["Content-Length: 0", "Connection: close"], "205: no content (RFC 9110 §15.3.6)");

  const ok = await send(t, port, req("GET", "/api/lab/status/200", port));
  t.same(ok.head, ["HTTP/1.1 200 OK", "Date: <date>", "X-Content-Type-Options: nosniff", "Access-Control-Allow-Origin: *", "Access-Control-Expose-Headers: *", "Content-Type: application/json", "Cache-Control: no-store", "Content-Length: 28", "Connection: close"]);
  t.equal(ok.rest.toString(), JSON.stringify({ status: 200, reason: "OK" }));

  const expected: [number, string, string][] = [
    [301, "Location", "/api/lab/redirect/1"],
    [302, "Location", "/api/lab/redirect/1"],
    [303, "Location", "/api/lab/redirect/1"],
    [307, "Location", "/api/lab/redirect/1"],
    [308, "Location", "/api/lab/redirect/1"],
    [401, "WWW-Authenticate", 'Bearer realm="startline-lab"'],
    [405, "Allow", "GET, HEAD"],
    [407, "Proxy-Authenticate", 'Basic realm="startline-lab"'],
    [429, "Retry-After", "1"],
    [503, "Retry-After", "1"],
    [206, "Content-Range", "bytes 0-1/2"],
  ];
  for (const [code, name, value] of expected) {
    const r = await send(t, port, req("UPDATE", `/api/lab/status/${code}`, port));
    t.equal(r.status, code, `${code}`);
    t.equal(r.fields[name.toLowerCase()], value, `${code} carries ${name}`);
    t.ok(r.head.includes(`Content-Length: ${r.rest.length}`), `${code}: Content-Length frames the body exactly`);
  }
  const unlisted = await send(t, port, req("GET", "/api/lab/status/599", port));
  t.equal(unlisted.head[0], "HTTP/1.1 599 ", "an unlisted code: an empty reason phrase (RFC 9112 §4)");
});

t.test("status/:code refuses what cannot be a final answer, saying why and what it takes", async (t) => {
  const { port } = await startApi(t);
  const r100 = await send(t, port, req("GET", "/api/lab/status/100", port));
  const p = checkProblem(t, { status: r100.status, headers: r100.fields, body: r100.rest.toString() }, 400, /interim \(1xx\).*cannot be a final answer/);
  t.match(p, { parameter: "code", allowed: /200 to 599/ });
  for (const [code, why] of [["600", /out of range/], ["99", /out of range/], ["2x0", /not a whole number/], ["426", /must carry Upgrade/]] as const) {
    const r = await send(t, port, req("GET", `/api/lab/status/${code}`, port));
    checkProblem(t, { status: r.status, headers: r.fields, body: r.rest.toString() }, 400, why);
  }
});

t.test("redirect/:n, relative-redirect/:n, absolute-redirect/:n: chains of 302s that end at get, as httpbin's; n is bounded", async (t) => {
  const { port, base } = await startApi(t);
  const first = await send(t, port, req("POST", "/api/lab/redirect/3", port));
  t.same(first.head, ["HTTP/1.1 302 Found", "Date: <date>", "X-Content-Type-Options: nosniff", "Access-Control-Allow-Origin: *", "Access-Control-Expose-Headers: *", "Location: /api/lab/relative-redirect/2", "Cache-Control: no-store", "Content-Length: 0", "Connection: close"]);
  t.equal((await send(t, port, req("GET", "/api/lab/redirect/1", port))).fields.location, "/api/lab/get");
  t.equal((await send(t, port, req("GET", "/api/lab/redirect/2?absolute=true", port))).fields.location, `http://127.0.0.1:${port}/api/lab/absolute-redirect/1`);
  t.equal((await send(t, port, req("GET", "/api/lab/redirect/1?absolute=TRUE", port))).fields.location, `http://127.0.0.1:${port}/api/lab/get`);
  t.equal((await send(t, port, req("GET", "/api/lab/relative-redirect/2", port))).fields.location, "/api/lab/relative-redirect/1");
  t.equal((await send(t, port, req("GET", "/api/lab/absolute-redirect/2", port))).fields.location, `http://127.0.0.1:${port}/api/lab/absolute-redirect/1`);
  t.equal((await send(t, port, req("GET", "/api/lab/absolute-redirect/1", port))).fields.location, `http://127.0.0.1:${port}/api/lab/get`);
  // A client following the whole chain ends at get, having made n + 1 requests.
  for (const chain of ["redirect/20", "redirect/5?absolute=true", "relative-redirect/3", "absolute-redirect/3"]) {
    const followed = await fetch(`${base}/api/lab/${chain}`);
    t.equal(followed.status, 200, chain);
    t.equal(followed.url, `${base}/api/lab/get`, `${chain}: ends at get`);
    t.equal(((await followed.json()) as { url: string }).url, `${base}/api/lab/get`);
  }
  for (const kind of ["redirect", "relative-redirect", "absolute-redirect"]) {
    for (const n of ["0", "101", "-1", "1e1"]) {
      const r = await send(t, port, req("GET", `/api/lab/${kind}/${n}`, port));
      t.match(checkProblem(t, { status: r.status, headers: r.fields, body: r.rest.toString() }, 400, /n /), { parameter: "n", allowed: "a whole number from 1 to 100" });
    }
  }
});

t.test("redirect-to: any 3xx, to a URL on this server's origin only, given as a path, relatively or absolutely", async (t) => {
  const { port } = await startApi(t);
  for (const code of [300, 301, 302, 303, 305, 307, 308, 399]) {
    const r = await send(t, port, req("PUT", `/api/lab/redirect-to?url=%2Fapi%2Fecho%3Fx%3D1&status_code=${code}`, port));
    t.equal(r.status, code);
    t.equal(r.fields.location, "/api/echo?x=1", `${code}: Location as given, decoded once`);
  }
  t.equal((await send(t, port, req("GET", "/api/lab/redirect-to?url=/api/echo", port))).status, 302, "302 by default");
  // This very origin, however it is written: scheme and host in any case, the default port written or not, relative references.
  const here: [string, string][] = [
    [`HTTP://127.0.0.1:${port}/api/lab/html`, "absolute, scheme in capitals"],
    [`http://127.0.0.1:${port}`, "the origin alone"],
    [`//127.0.0.1:${port}/api/lab/get`, "a network-path reference to this host"],
    ["post", "relative: resolved against /api/lab/redirect-to"],
    ["../echo", "relative, up a segment"],
    ["?url=x", "the query alone"],
  ];
  for (const [url, what] of here) {
    const r = await send(t, port, req("GET", `/api/lab/redirect-to?url=${encodeURIComponent(url)}`, port));
    t.equal(r.status, 302, what);
    t.equal(r.fields.location, url, `${what}: Location as given`);
  }
  const defaultPort = await talk(port, [`GET /api/lab/redirect-to?url=${encodeURIComponent("http://LOCALHOST:80/api/lab/get")} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`]);
  t.match(defaultPort.toString("latin1"), /^HTTP\/1\.1 302 Found\r\n[^]*\r\nLocation: http:\/\/LOCALHOST:80\/api\/lab\/get\r\n/, "a default port written out is the same origin as none");
  // Every way a Location could leave this server's origin: another host or port or scheme, userinfo, a scheme without //,
  // backslashes (read as / by browsers), tabs and line breaks (dropped by browsers, so "/\t/evil" is "//evil"), CR LF (header injection).
  const away: [string, RegExp][] = [
    ["http://evil.example/", /leads to http:\/\/evil.example, not this server's origin/],
    [`https://127.0.0.1:${port}/`, /leads to https:\/\/127.0.0.1/],
    [`http://127.0.0.1:${port + 1}/`, /not this server's origin/],
    [`http://127.0.0.1:${port}@evil.example/`, /userinfo/],
    [`http://user@127.0.0.1:${port}/`, /userinfo/],
    ["https:evil.example", /has a scheme but no \/\//],
    ["javascript:alert(1)", /has a scheme but no \/\//],
    ["//evil.example/", /leads to http:\/\/evil.example/],
    ["/\\evil.example", /backslash/],
    ["\\\\evil.example", /backslash/],
    ["/%09/evil.example", /HTAB \(0x09\)/],
    ["/%0d%0aSet-Cookie:%20x=1", /CR \(0x0D\)/],
    ["/%0a/evil.example", /LF \(0x0A\)/],
    ["/%00", /NUL \(0x00\)/],
    ["/%20/evil.example", /a space/],
    ["/caf%C3%A9", /outside ASCII/],
    ["", /empty/],
  ];
  for (const [url, why] of away) {
    const r = await send(t, port, req("GET", `/api/lab/redirect-to?url=${url.startsWith("/%") || url.startsWith("/caf") ? url : encodeURIComponent(url)}`, port));
    t.notOk("location" in r.fields, `no Location for ${JSON.stringify(url)}`);
    t.match(checkProblem(t, { status: r.status, headers: r.fields, body: r.rest.toString() }, 400, why), { parameter: "url" });
  }
  const missing = await send(t, port, req("GET", "/api/lab/redirect-to", port));
  checkProblem(t, { status: missing.status, headers: missing.fields, body: missing.rest.toString() }, 400, /url is missing/);
  for (const code of ["299", "400", "200", "abc"]) {
    const r = await send(t, port, req("GET", `/api/lab/redirect-to?url=/&status_code=${code}`, port));
    t.match(checkProblem(t, { status: r.status, headers: r.fields, body: r.rest.toString() }, 400, /status_code/), { parameter: "status_code", allowed: "a whole number from 300 to 399" });
  }
  // As httpbin's, url and status_code may come in a form body.
  const form = "url=%2Fapi%2Flab%2Fget&status_code=307";
  const posted = await send(t, port, `POST /api/lab/redirect-to HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${form.length}\r\nConnection: close\r\n\r\n${form}`);
  t.equal(posted.status, 307);
  t.equal(posted.fields.location, "/api/lab/get");
});

t.test("redirect-to as a client follows it: 301, 302 and 303 turn a POST into a GET, 307 and 308 keep it and its body", async (t) => {
  const { base } = await startApi(t);
  const seen: Record<number, { method: string; body: string }> = {};
  for (const code of [301, 302, 303, 307, 308]) {
    // Node's fetch follows redirects as the Fetch standard says browsers do.
    const r = await fetch(`${base}/api/lab/redirect-to?url=/api/echo&status_code=${code}`, { method: "POST", headers: { "Content-Type": "text/plain" }, body: "hello" });
    t.equal(r.status, 200, `${code}: followed to the echo`);
    const echo = (await r.json()) as { method: string; body: { content: string } };
    seen[code] = { method: echo.method, body: echo.body.content };
  }
  t.same(seen, {
    301: { method: "GET", body: "" },
    302: { method: "GET", body: "" },
    303: { method: "GET", body: "" },
    307: { method: "POST", body: "hello" },
    308: { method: "POST", body: "hello" },
  });
});

t.test("delay/:seconds answers no sooner than asked, for any method; the bound is refused", async (t) => {
  const { port } = await startApi(t);
  const started = performance.now();
  const r = await send(t, port, req("WAIT", "/api/lab/delay/0.3", port));
  t.ok(performance.now() - started >= 290, "not before the delay (a lower bound only)");
  t.same(r.head, ["HTTP/1.1 200 OK", "Date: <date>", "X-Content-Type-Options: nosniff", "Access-Control-Allow-Origin: *", "Access-Control-Expose-Headers: *", "Content-Type: application/json", "Cache-Control: no-store", `Content-Length: ${r.rest.length}`, "Connection: close"]);
  t.match(JSON.parse(r.rest.toString()), { args: {}, data: "", url: `http://127.0.0.1:${port}/api/lab/delay/0.3`, headers: { Host: `127.0.0.1:${port}` } });
  for (const s of ["10.5", "11", "-1", "1,5", "abc"]) {
    const bad = await send(t, port, req("GET", `/api/lab/delay/${s}`, port));
    t.match(checkProblem(t, { status: bad.status, headers: bad.fields, body: bad.rest.toString() }, 400, /seconds/), { parameter: "seconds", allowed: /from 0 to 10/ });
  }
});

t.test("drip: numbytes in chunked pieces over the duration, the status asked; bounds refused", async (t) => {
  const { port } = await startApi(t);
  const started = performance.now();
  const r = await send(t, port, req("GET", "/api/lab/drip?numbytes=5&duration=0.2&code=201", port));
  t.ok(performance.now() - started >= 150, "the last piece not before the duration's last step (lower bound only)");
  t.same(r.head, ["HTTP/1.1 201 Created", "Date: <date>", "X-Content-Type-Options: nosniff", "Access-Control-Allow-Origin: *", "Access-Control-Expose-Headers: *", "Content-Type: application/octet-stream", "Cache-Control: no-store", "Transfer-Encoding: chunked", "Connection: close"]);
  t.equal(r.rest.toString("latin1"), "1\r\n*\r\n".repeat(5) + "0\r\n\r\n", "five one-byte chunks, then the last chunk");
  const whole = await send(t, port, req("GET", "/api/lab/drip?numbytes=40000&duration=0", port));
  const { content } = dechunk(whole.rest, 0);
  t.equal(content.toString(), "*".repeat(40000), "a fast drip: every byte, in pieces of at most 16 KiB");
  t.equal(whole.rest.toString("latin1").split("\r\n").filter((l) => /^[0-9a-f]+$/.test(l) && l !== "0").length, 3);
  const bad: [string, string, RegExp][] = [
    ["numbytes=0", "numbytes", /1 to 1048576/],
    ["numbytes=1048577", "numbytes", /1 to 1048576/],
    ["duration=31", "duration", /0 to 30/],
    ["delay=20&duration=20", "delay", /at most 30 seconds together with duration/],
    ["code=204", "code", /carries a body/],
    ["code=700", "code", /200 to 599/],
    ["numbytes=1&numbytes=2", "numbytes", /one value/],
  ];
  for (const [query, parameter, allowed] of bad) {
    const b = await send(t, port, req("GET", `/api/lab/drip?${query}`, port));
    t.match(checkProblem(t, { status: b.status, headers: b.fields, body: b.rest.toString() }, 400, new RegExp(parameter)), { parameter, allowed }, query);
  }
});

t.test("drip to an HTTP/1.0 client: the bytes bare, ended by closing the connection", async (t) => {
  const { port } = await startApi(t);
  const r = await send(t, port, `GET /api/lab/drip?numbytes=3&duration=0 HTTP/1.0\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
  t.same(r.head, ["HTTP/1.1 200 OK", "Date: <date>", "X-Content-Type-Options: nosniff", "Access-Control-Allow-Origin: *", "Access-Control-Expose-Headers: *", "Content-Type: application/octet-stream", "Cache-Control: no-store", "Connection: close"]);
  t.equal(r.rest.toString("latin1"), "***", "no chunk framing: HTTP/1.0 has none (RFC 9112 §6.3)");
});

t.test("drip: a client that goes away holds nothing else up; HEAD gets the head alone, without the wait", async (t) => {
  const { port } = await startApi(t);
  const socket = net.connect(port, "127.0.0.1");
  await once(socket, "connect");
  socket.write(req("GET", "/api/lab/drip?numbytes=3&duration=30", port));
  const [first] = (await once(socket, "data")) as [Buffer];
  t.match(first.toString("latin1"), /^HTTP\/1\.1 200 OK\r\n/);
  socket.destroy();
  // The server is free for the next request at once: nothing waits on the dropped drip.
  const head = await send(t, port, req("HEAD", "/api/lab/drip?numbytes=3&duration=30", port));
  t.equal(head.status, 200);
  t.equal(head.rest.length, 0, "HEAD: no body, and no 30-second wait");
});

t.test("bytes/:n: n bytes with Content-Length, repeatable with ?seed=; bounded", async (t) => {
  const { port } = await startApi(t);
  const a = await send(t, port, req("GET", "/api/lab/bytes/1000?seed=42", port));
  t.same(a.head, ["HTTP/1.1 200 OK", "Date: <date>", "X-Content-Type-Options: nosniff", "Access-Control-Allow-Origin: *", "Access-Control-Expose-Headers: *", "Content-Type: application/octet-stream", "Cache-Control: no-store", "Content-Length: 1000", "Connection: close"]);
  t.equal(a.rest.length, 1000);
  const b = await send(t, port, req("FETCH", "/api/lab/bytes/1000?seed=42", port));
  t.ok(a.rest.equals(b.rest), "the same seed, the same bytes");
  t.ok(a.rest.equals(seededBytes(1000, 42)));
  t.notOk(a.rest.equals((await send(t, port, req("GET", "/api/lab/bytes/1000?seed=43", port))).rest), "another seed, other bytes");
  const r1 = await send(t, port, req("GET", "/api/lab/bytes/64", port));
  const r2 = await send(t, port, req("GET", "/api/lab/bytes/64", port));
  t.notOk(r1.rest.equals(r2.rest), "unseeded: random each time");
  const max = await send(t, port, req("GET", "/api/lab/bytes/1048576", port));
  t.equal(max.rest.length, 1048576, "1 MiB, the bound, is served");
  const zero = await send(t, port, req("GET", "/api/lab/bytes/0", port));
  t.equal(zero.fields["content-length"], "0");
  for (const [target, parameter] of [["/api/lab/bytes/1048577", "n"], ["/api/lab/bytes/1?seed=4294967296", "seed"], ["/api/lab/bytes/x", "n"]]) {
    const bad = await send(t, port, req("GET", target!, port));
    t.match(checkProblem(t, { status: bad.status, headers: bad.fields, body: bad.rest.toString() }, 400, new RegExp(parameter!)), { parameter });
  }
});

t.test("stream/:n: n JSON lines, chunked; bounded", async (t) => {
  const { port } = await startApi(t);
  const r = await send(t, port, req("LIST", "/api/lab/stream/3", port));
  t.same(r.head, ["HTTP/1.1 200 OK", "Date: <date>", "X-Content-Type-Options: nosniff", "Access-Control-Allow-Origin: *", "Access-Control-Expose-Headers: *", "Content-Type: application/x-ndjson", "Cache-Control: no-store", "Transfer-Encoding: chunked", "Connection: close"]);
  const { content, next } = dechunk(r.rest, 0);
  t.equal(next, r.rest.length, "the last chunk ends the message");
  const lines = content.toString().split("\n");
  t.equal(lines.pop(), "", "every line ends in LF");
  t.same(lines.map((l) => JSON.parse(l).id), [0, 1, 2]);
  t.same(Object.keys(JSON.parse(lines[0]!)), ["url", "args", "headers", "origin", "id"], "httpbin's members, id last");
  t.equal(JSON.parse(lines[0]!).url, `http://127.0.0.1:${port}/api/lab/stream/3`);
  const withBody = await send(t, port, `POST /api/lab/stream/2 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello`);
  const posted = dechunk(withBody.rest, 0).content.toString().trim().split("\n").map((l) => JSON.parse(l));
  t.same(posted.map((l) => [l.id, "data" in l]), [[0, false], [1, false]], "the request's body is not repeated on every line");
  t.equal(r.rest.toString("latin1").split("\r\n").filter((l, i) => i % 2 === 0 && l !== "" && l !== "0").length, 3, "one chunk per line");
  t.equal(dechunk((await send(t, port, req("GET", "/api/lab/stream/1000", port))).rest, 0).content.toString().split("\n").length, 1001, "1,000 lines, the bound");
  for (const n of ["0", "1001"]) {
    const bad = await send(t, port, req("GET", `/api/lab/stream/${n}`, port));
    t.match(checkProblem(t, { status: bad.status, headers: bad.fields, body: bad.rest.toString() }, 400, /n is/), { parameter: "n", allowed: "a whole number from 1 to 1000" });
  }
});

t.test("cache: 304 for an If-None-Match or If-Modified-Since it can validate, with the 200's cache fields", async (t) => {
  const { port } = await startApi(t);
  const first = await send(t, port, req("GET", "/api/lab/cache", port));
  t.equal(first.status, 200);
  t.same(first.head.slice(5, 11).map((l) => l.split(":")[0]), ["Content-Type", "ETag", "Vary", "Last-Modified", "Cache-Control", "Content-Length"]);
  const etag = first.fields.etag!;
  const lastModified = first.fields["last-modified"]!;
  const byTag = await send(t, port, req("GET", "/api/lab/cache", port, `If-None-Match: ${etag}\r\n`));
  t.same(byTag.head, ["HTTP/1.1 304 Not Modified", "Date: <date>", "X-Content-Type-Options: nosniff", "Access-Control-Allow-Origin: *", "Access-Control-Expose-Headers: *", `ETag: ${etag}`, "Vary: Accept-Encoding", `Last-Modified: ${lastModified}`, "Cache-Control: no-cache", "Connection: close"]);
  t.equal(byTag.rest.length, 0);
  t.equal((await send(t, port, req("GET", "/api/lab/cache", port, `If-Modified-Since: ${lastModified}\r\n`))).status, 304, "If-Modified-Since: Last-Modified itself");
  t.equal((await send(t, port, req("GET", "/api/lab/cache", port, "If-Modified-Since: Thu, 01 Jan 1970 00:00:00 GMT\r\n"))).status, 200, "an older date: modified since");
  t.equal((await send(t, port, req("GET", "/api/lab/cache", port, 'If-None-Match: "other"\r\n'))).status, 200, "another tag");
  t.equal((await send(t, port, req("GET", "/api/lab/cache", port, `If-None-Match: "other"\r\nIf-Modified-Since: ${lastModified}\r\n`))).status, 200, "If-Modified-Since is ignored beside If-None-Match (RFC 9110 §13.1.3)");
  t.equal((await send(t, port, req("GET", "/api/lab/cache", port, "If-Modified-Since: yesterday\r\n"))).status, 200, "a date it cannot read is ignored");
  t.equal((await send(t, port, req("POST", "/api/lab/cache", port, `If-None-Match: ${etag}\r\n`))).status, 200, "only GET and HEAD are answered 304");
});

t.test("cache/:seconds and etag/:tag", async (t) => {
  const { port } = await startApi(t);
  const fresh = await send(t, port, req("GET", "/api/lab/cache/60", port));
  t.same(fresh.head, ["HTTP/1.1 200 OK", "Date: <date>", "X-Content-Type-Options: nosniff", "Access-Control-Allow-Origin: *", "Access-Control-Expose-Headers: *", "Content-Type: application/json", "Vary: Authorization, Cookie", "Cache-Control: public, max-age=60", `Content-Length: ${fresh.rest.length}`, "Connection: close"]);
  t.match(JSON.parse(fresh.rest.toString()), { method: "GET", path: "/api/lab/cache/60" });
  // The echo shows the credentials sent, and public lets a shared cache keep an answer to a request that had them
  // (RFC 9111 §3.5): without Vary on them, the next client to ask would be handed this one's token.
  const credentialed = await send(t, port, req("GET", "/api/lab/cache/60", port, "Authorization: Bearer sl_secret-of-the-first-client\r\n"));
  t.match(credentialed.rest.toString(), /sl_secret-of-the-first-client/, "the echo shows the token");
  t.equal(credentialed.fields["vary"], "Authorization, Cookie", "so a cache keeps it only for requests with the same credentials");
  const bad = await send(t, port, req("GET", "/api/lab/cache/31536001", port));
  t.match(checkProblem(t, { status: bad.status, headers: bad.fields, body: bad.rest.toString() }, 400, /seconds/), { parameter: "seconds" });

  const tagged = await send(t, port, req("GET", "/api/lab/etag/v1", port));
  t.same(tagged.head, ["HTTP/1.1 200 OK", "Date: <date>", "X-Content-Type-Options: nosniff", "Access-Control-Allow-Origin: *", "Access-Control-Expose-Headers: *", "Content-Type: application/json", 'ETag: "v1"', "Vary: Accept-Encoding", "Cache-Control: no-cache", "Content-Length: 17", "Connection: close"]);
  t.equal(tagged.rest.toString(), '{"etag":"\\"v1\\""}');
  t.equal((await send(t, port, req("GET", "/api/lab/etag/v1", port, 'If-None-Match: "v0", W/"v1"\r\n'))).status, 304, "weak comparison for If-None-Match");
  t.equal((await send(t, port, req("PUT", "/api/lab/etag/v1", port, 'If-None-Match: "v1"\r\n'))).status, 412, "If-None-Match on a write: 412");
  t.equal((await send(t, port, req("PUT", "/api/lab/etag/v1", port, 'If-Match: "v1"\r\n'))).status, 200);
  t.equal((await send(t, port, req("PUT", "/api/lab/etag/v1", port, 'If-Match: W/"v1"\r\n'))).status, 412, "strong comparison for If-Match");
  t.equal((await send(t, port, req("GET", "/api/lab/etag/v1", port, 'If-Match: "v2"\r\n'))).status, 412);
  const quote = await send(t, port, req("GET", "/api/lab/etag/a%22b", port));
  t.match(checkProblem(t, { status: quote.status, headers: quote.fields, body: quote.rest.toString() }, 400, /cannot be an entity tag/), { parameter: "tag" });
});

t.test("response-headers: the query's pairs as fields, checked; injection refused by the byte", async (t) => {
  const { port } = await startApi(t);
  const r = await send(t, port, req("GET", "/api/lab/response-headers?X-Lab=hello%20there&Cache-Control=max-age%3D5&Content-Type=text/plain", port));
  t.same(r.head, [
    "HTTP/1.1 200 OK",
    "Date: <date>",
    "X-Content-Type-Options: nosniff",
    "Access-Control-Allow-Origin: *",
    "Access-Control-Expose-Headers: *",
    "Content-Security-Policy: sandbox",
    "X-Lab: hello there",
    "Cache-Control: max-age=5",
    "Content-Type: text/plain",
    `Content-Length: ${r.rest.length}`,
    "Connection: close",
  ]);
  t.same(JSON.parse(r.rest.toString()), { "X-Lab": "hello there", "Cache-Control": "max-age=5", "Content-Type": "text/plain" });
  const injections: [string, RegExp][] = [
    ["X-A=1%0D%0ASet-Cookie:%20stolen=1", /CR \(0x0D\) at position 1: header injection is refused/],
    ["X-A=1%0ASet-Cookie:%20stolen=1", /LF \(0x0A\) at position 1/],
    ["X-A=1%00", /NUL \(0x00\) at position 1/],
    ["X-A=%7F", /DEL \(0x7F\)/],
    ["X-A=caf%C3%A9", /non-ASCII character U\+00E9/],
    ["X%0D%0AInjected=1", /CR \(0x0D\) at position 1/],
    ["X%20A=1", /a space \(0x20\) at position 1/],
    ["X:A=1", /":" at position 1/],
  ];
  for (const [query, detail] of injections) {
    const bad = await talk(port, [req("GET", `/api/lab/response-headers?${query}`, port)]);
    const text = bad.toString("latin1");
    const headEnd = text.indexOf("\r\n\r\n");
    t.notMatch(text.slice(0, headEnd), /stolen|Injected|\r\nX-A/i, `${query}: nothing of it in the head`);
    const lines = text.slice(0, headEnd).split("\r\n");
    t.match(lines[0], /^HTTP\/1\.1 400 /);
    t.match(JSON.parse(text.slice(headEnd + 4)), { status: 400, detail }, query);
  }
  for (const name of ["Content-Length", "transfer-encoding", "Connection", "Keep-Alive", "Upgrade", "Date", "Trailer", "content-security-policy"]) {
    const bad = await send(t, port, req("GET", `/api/lab/response-headers?${name}=1`, port));
    t.match(checkProblem(t, { status: bad.status, headers: bad.fields, body: bad.rest.toString() }, 400, new RegExp(`${name} cannot be set here: `)), { parameter: name });
  }
  const padded = await send(t, port, req("GET", "/api/lab/response-headers?X-A=%201", port));
  checkProblem(t, { status: padded.status, headers: padded.fields, body: padded.rest.toString() }, 400, /starts or ends with whitespace/);
  const twice = await send(t, port, req("GET", "/api/lab/response-headers?X-A=1&x-a=2", port));
  checkProblem(t, { status: twice.status, headers: twice.fields, body: twice.rest.toString() }, 400, /given twice/);
});

t.test("response-headers: a page the client makes (Content-Type: text/html) is sandboxed, so its script never runs as this origin", async (t) => {
  const { port } = await startApi(t);
  // Reflected: the body holds the values, so this was a page of the client's making, served from the page's origin.
  const r = await send(t, port, req("GET", "/api/lab/response-headers?Content-Type=text/html&x=%3Cscript%3Efetch(%22/api/wire%22)%3C/script%3E", port));
  t.equal(r.status, 200);
  t.equal(r.fields["content-type"], "text/html");
  t.match(r.rest.toString(), /<script>/, "the value is reflected as asked");
  t.equal(r.fields["content-security-policy"], "sandbox", "the document gets an origin of its own and runs no script");
  const replaced = await send(t, port, req("GET", "/api/lab/response-headers?Content-Type=text/html&Content-Security-Policy=script-src%20*", port));
  t.match(checkProblem(t, { status: replaced.status, headers: replaced.fields, body: replaced.rest.toString() }, 400, /Content-Security-Policy cannot be set here: /), { parameter: "Content-Security-Policy" });
});

t.test("gzip, deflate, brotli: coded that way whatever Accept-Encoding asked", async (t) => {
  const { port } = await startApi(t);
  const decode = { gzip: gunzipSync, deflate: inflateSync, br: brotliDecompressSync };
  for (const [name, token] of [["gzip", "gzip"], ["deflate", "deflate"], ["brotli", "br"]] as const) {
    const r = await send(t, port, req("DELETE", `/api/lab/${name}`, port, "Accept-Encoding: identity\r\n"));
    t.same(r.head, ["HTTP/1.1 200 OK", "Date: <date>", "X-Content-Type-Options: nosniff", "Access-Control-Allow-Origin: *", "Access-Control-Expose-Headers: *", "Content-Type: application/json", `Content-Encoding: ${token}`, "Cache-Control: no-store", `Content-Length: ${r.rest.length}`, "Connection: close"]);
    const shown = JSON.parse(decode[token](r.rest).toString());
    t.match(shown, { [name === "gzip" ? "gzipped" : name === "deflate" ? "deflated" : "brotli"]: true, method: "DELETE", headers: { "Accept-Encoding": "identity", Host: `127.0.0.1:${port}` } }, "httpbin's members");
  }
});

/** A path of the lab's table, its parameters filled in with values each resource takes. */
export function sample(path: string): string {
  const values: Record<string, string> = { codes: "200", n: "1", seconds: "0", tag: "x", value: "SGk", offset: "0", user: "u", passwd: "p", qop: "auth", algorithm: "MD5", stale_after: "never", name: "k" };
  const filled = path.replace(/:([a-z_]+)/g, (_, name: string) => values[name]!).replace("*rest", "a/b");
  return filled + (path.endsWith("redirect-to") ? "?url=/" : path.endsWith("drip") ? "?duration=0" : "");
}

t.test("every lab resource answers any method token, but httpbin's method-named ones, which answer theirs (405 with Allow otherwise); OPTIONS with Allow", async (t) => {
  const { port, app } = await startApi(t);
  const lab = app.routes.filter((r) => r.path.startsWith("/api/lab/"));
  for (const route of lab) {
    const target = sample(route.path);
    if (route.method === "*") {
      const r = await send(t, port, req("x-custom", target, port));
      // Served (the auth resources answer 401 or 404 without credentials, as they do to GET).
      t.ok(r.status < 400 || (/auth|bearer/.test(target) && [401, 404].includes(r.status)), `x-custom ${target}: ${r.status}`);
    } else {
      t.ok(["get", "post", "put", "patch", "delete"].includes(route.path.slice("/api/lab/".length)), `${route.path} is one of httpbin's method-named resources`);
      t.equal((await send(t, port, req(route.method, target, port))).status, 200, `${route.method} ${target}`);
      const other = await send(t, port, req("x-custom", target, port));
      t.equal(other.status, 405, `x-custom ${target}: 405`);
      t.match(other.fields.allow, new RegExp(route.method));
    }
    const o = await send(t, port, req("OPTIONS", target, port));
    t.equal(o.status, 204);
    t.match(o.fields.allow, route.method === "*" ? /GET/ : new RegExp(route.method));
  }
});
