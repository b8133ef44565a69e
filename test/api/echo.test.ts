// /api/echo and everything below it: any method token answered with what the
// server received, in-process (inject) and over real sockets.

import { load } from "js-yaml";
import t from "tap";
import { docsApp, request } from "../helpers/app.js";
import { listen, splitResponses, talk } from "../helpers/wire.js";

const names = (echo: any) => echo.headers.map((h: any) => h.name);

t.test("custom, standard and lower-case methods all reach the echo, which says what arrived", async (t) => {
  const { app } = await docsApp();
  for (const method of ["FOO", "UPDATE", "PURGE", "purge", "update", "GET", "POST", "DELETE", "M-SEARCH"]) {
    const r = await request(app, method, "/api/echo/a/b%2Fc?x=1&y=a+b&x=%E2%9C%93", { "X-B": "2", "X-A": "1", "x-a": "again" });
    t.equal(r.status, 200, `${method}: 200`);
    t.equal(r.headers["content-type"], "application/json");
    t.equal(r.headers["cache-control"], "no-store");
    t.equal(r.headers.vary, "Accept, Content-Type");
    const echo = JSON.parse(r.body);
    t.equal(echo.method, method, "the method exactly as sent");
    t.equal(echo.target, "/api/echo/a/b%2Fc?x=1&y=a+b&x=%E2%9C%93");
    t.equal(echo.path, "/api/echo/a/b%2Fc");
    t.equal(echo.query, "x=1&y=a+b&x=%E2%9C%93");
    t.same(echo.queryParams, [
      { name: "x", value: "1" },
      { name: "y", value: "a b" },
      { name: "x", value: "✓" },
    ]);
    t.equal(echo.version, "HTTP/1.1");
    t.equal(echo.host, "127.0.0.1");
    t.same(echo.headers, [
      { name: "host", value: "127.0.0.1" },
      { name: "x-b", value: "2" },
      { name: "x-a", value: "1" },
      { name: "x-a", value: "again" },
      { name: "connection", value: "close" },
    ], "every field in arrival order, repeats kept, names lower-cased");
    t.same(echo.framing, { kind: "none" });
    t.equal(echo.keepAlive, false, "Connection: close was asked for");
    t.same(echo.body, { length: 0, encoding: "utf-8", content: "" });
  }
  const top = JSON.parse((await request(app, "FOO", "/api/echo")).body);
  t.equal(top.path, "/api/echo", "/api/echo itself answers too");
  t.equal((await request(app, "FOO", "/api/echoes")).status, 404, "a sibling path is not the echo");
});

t.test("a body: UTF-8 as text, anything else as base64, with its length and framing", async (t) => {
  const { app } = await docsApp();
  const text = "héllo, wörld ✓\n";
  const r = await request(app, "UPDATE", "/api/echo", { "Content-Type": "text/plain; charset=utf-8" }, text);
  const echo = JSON.parse(r.body);
  t.same(echo.framing, { kind: "content-length", length: Buffer.byteLength(text) });
  t.same(echo.body, { length: Buffer.byteLength(text), encoding: "utf-8", content: text });
  t.ok(names(echo).indexOf("content-type") < names(echo).indexOf("content-length"), "fields in the order sent");

  const binary = Buffer.from([0xff, 0x00, 0xfe, 0x80, 0x41, 0xc3]);
  const b = JSON.parse((await request(app, "PURGE", "/api/echo/bin", { "Content-Type": "application/octet-stream" }, binary)).body);
  t.same(b.body, { length: 6, encoding: "base64", content: binary.toString("base64") });
  t.same(Buffer.from(b.body.content, "base64"), binary, "the bytes come back exactly");

  const cut = Buffer.from("ok ✓", "utf8").subarray(0, 5); // the check mark cut in the middle
  t.equal(JSON.parse((await request(app, "FOO", "/api/echo", {}, cut)).body).body.encoding, "base64", "truncated UTF-8 is not text");
  const bom = Buffer.from([0xef, 0xbb, 0xbf, 0x68, 0x69]);
  t.equal(JSON.parse((await request(app, "FOO", "/api/echo", {}, bom)).body).body.content, "\ufeffhi", "a byte order mark is shown, not dropped");
});

t.test("YAML when Accept asks for it; Content-Type on the echo is data, never a reason for 406", async (t) => {
  const { app } = await docsApp();
  const y = await request(app, "PURGE", "/api/echo/cache/1", { Accept: "application/yaml" });
  t.equal(y.status, 200);
  t.equal(y.headers["content-type"], "application/yaml");
  const echo = load(y.body) as any;
  t.equal(echo.method, "PURGE");
  t.equal(echo.path, "/api/echo/cache/1");
  t.same(echo.headers[1], { name: "accept", value: "application/yaml" });

  const wish = await request(app, "GET", "/api/echo", { "Content-Type": "application/yaml" });
  t.equal(wish.headers["content-type"], "application/yaml", "a body-less request's Content-Type may ask for YAML, as elsewhere in the API");
  const plain = await request(app, "PURGE", "/api/echo", { "Content-Type": "text/plain" });
  t.equal(plain.status, 200, "a Content-Type the echo cannot produce is simply echoed");
  t.equal(plain.headers["content-type"], "application/json");
  const refused = await request(app, "FOO", "/api/echo", { Accept: "text/html" });
  t.equal(refused.status, 406, "Accept still negotiates");
  t.equal(refused.headers["content-type"], "application/problem+json");
});

t.test("HEAD has GET's header fields and no body; OPTIONS answers 204 with Allow", async (t) => {
  const { app } = await docsApp();
  const get = await request(app, "GET", "/api/echo/x?y=1", { "X-Probe": "1" });
  const head = await request(app, "HEAD", "/api/echo/x?y=1", { "X-Probe": "1" });
  t.equal(head.status, 200);
  t.equal(head.body, "");
  t.equal(head.headers["content-length"], get.headers["content-length"], "the length GET's echo has (RFC 9110 §9.3.2)");
  t.equal(head.headers["content-type"], "application/json");

  for (const path of ["/api/echo", "/api/echo/any/thing"]) {
    const o = await request(app, "OPTIONS", path);
    t.equal(o.status, 204, `OPTIONS ${path}`);
    t.equal(o.headers.allow, "DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT");
    t.equal(o.body, "");
  }
});

t.test("over a real socket: pipelined custom methods, a chunked body, HEAD among them, HTTP/1.0", async (t) => {
  const { app } = await docsApp();
  const s = await listen(app);
  t.teardown(() => s.close());
  const chunked =
    "purge /api/echo/chunked HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n" +
    "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n";
  const raw = Buffer.concat([
    Buffer.from("FOO /api/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Order: first\r\n\r\n", "latin1"),
    Buffer.from(chunked, "latin1"),
    Buffer.from("HEAD /api/echo HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "latin1"),
    Buffer.from("UPDATE /api/echo/bin HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\nConnection: close\r\n\r\n", "latin1"),
    Buffer.from([0x00, 0xff, 0x10]),
  ]);
  // Sent in small pieces, so the parser sees heads and bodies cut at arbitrary places.
  const pieces: Buffer[] = [];
  for (let i = 0; i < raw.length; i += 7) pieces.push(raw.subarray(i, i + 7));
  const responses = splitResponses(await talk(s.port, pieces), [false, false, true, false]);
  t.same(responses.map((r) => r.status), [200, 200, 200, 200]);

  const foo = JSON.parse(responses[0]!.body);
  t.equal(foo.method, "FOO");
  t.equal(foo.keepAlive, true);
  t.same(names(foo), ["host", "x-order"]);

  const c = JSON.parse(responses[1]!.body);
  t.equal(c.method, "purge", "a lower-case method reaches the echo as sent");
  t.same(c.framing, { kind: "chunked" });
  t.same(c.body, { length: 11, encoding: "utf-8", content: "hello world" }, "the chunked coding removed");
  t.same(names(c), ["host", "transfer-encoding", "content-type"]);

  t.equal(responses[2]!.body, "", "HEAD: no body, and the next response still lines up");
  t.ok(Number(responses[2]!.headers["content-length"]) > 0);

  const bin = JSON.parse(responses[3]!.body);
  t.equal(bin.method, "UPDATE");
  t.same(bin.framing, { kind: "content-length", length: 3 });
  t.same(bin.body, { length: 3, encoding: "base64", content: Buffer.from([0x00, 0xff, 0x10]).toString("base64") });

  const old = splitResponses(await talk(s.port, ["PURGE /api/echo/old HTTP/1.0\r\n\r\n"]));
  const e = JSON.parse(old[0]!.body);
  t.equal(e.version, "HTTP/1.0");
  t.equal(e.keepAlive, false);
  t.equal(e.host, "", "HTTP/1.0 needs no Host");

  const options = splitResponses(await talk(s.port, ["OPTIONS /api/echo/x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"]));
  t.equal(options[0]!.status, 204);
  t.equal(options[0]!.headers.allow, "DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT");
});
