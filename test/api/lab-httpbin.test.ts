// The lab's httpbin resources over a real socket, exact bytes: the request
// inspectors (anything, get, post, put, patch, delete, headers, ip,
// user-agent, uuid) with httpbin's JSON members, form and multipart bodies
// read into form and files, httpbin's method rules for the method-named
// resources, and several or weighted codes for status.

import t from "tap";
import { talk } from "../helpers/wire.js";
import { dechunk } from "../helpers/wire.js";
import { checkProblem, raw, startApi } from "./client.js";

/** One request, bytes exactly as given (Connection: close added), and its answer's head lines and body. */
async function exchange(port: number, head: string, body: string | Buffer = ""): Promise<{ head: string[]; fields: Record<string, string>; body: Buffer }> {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body, "utf8");
  const out = await talk(port, [Buffer.concat([Buffer.from(`${head}${bytes.length > 0 ? `Content-Length: ${bytes.length}\r\n` : ""}Connection: close\r\n\r\n`, "latin1"), bytes])]);
  const end = out.indexOf("\r\n\r\n");
  const lines = out.toString("latin1", 0, end).split("\r\n");
  const fields: Record<string, string> = {};
  for (const line of lines.slice(1)) fields[line.slice(0, line.indexOf(":")).toLowerCase()] = line.slice(line.indexOf(":") + 2);
  const rest = out.subarray(end + 4);
  return { head: lines.map((l) => (l.startsWith("Date: ") ? "Date: <date>" : l)), fields, body: fields["transfer-encoding"] === "chunked" ? dechunk(out, end + 4).content : rest };
}

t.test("anything: any method token, with a body, shown as httpbin shows it", async (t) => {
  const { port } = await startApi(t);
  for (const method of ["PURGE", "UPDATE", "QUERY", "brew", "GET", "DELETE"]) {
    const r = await exchange(port, `${method} /api/lab/anything/deep/path?a=1&b=2&a=3 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nX-Thing: one\r\nX-Thing: two\r\n`, '{"q":[1,2]}');
    t.same(r.head.slice(0, 6), ["HTTP/1.1 200 OK", "Date: <date>", "X-Content-Type-Options: nosniff", "Access-Control-Allow-Origin: *", "Access-Control-Expose-Headers: *", "Content-Type: application/json"], method);
    t.same(JSON.parse(r.body.toString()), {
      args: { a: ["1", "3"], b: "2" },
      data: '{"q":[1,2]}',
      files: {},
      form: {},
      headers: { Host: `127.0.0.1:${port}`, "Content-Type": "application/json", "X-Thing": "one, two", "Content-Length": "11", Connection: "close" },
      json: { q: [1, 2] },
      method,
      origin: "unknown",
      url: `http://127.0.0.1:${port}/api/lab/anything/deep/path?a=1&b=2&a=3`,
    }, `${method}: httpbin's members`);
  }
  const forwarded = JSON.parse((await raw(port, "GET", "/api/lab/anything", { "X-Forwarded-For": "203.0.113.7" })).body);
  t.equal(forwarded.origin, "203.0.113.7", "origin: X-Forwarded-For, as httpbin's");
  const binary = JSON.parse((await raw(port, "POST", "/api/lab/anything", { "Content-Type": "application/octet-stream" }, Buffer.from([0xff, 0x00, 0x41]))).body);
  t.equal(binary.data, "data:application/octet-stream;base64,/wBB", "a body that is not UTF-8: a data: URL, as httpbin's");
  t.equal(binary.json, null);
});

t.test("post, put, patch, delete: form and multipart bodies into form and files; get: no body members", async (t) => {
  const { port } = await startApi(t);
  const form = await raw(port, "POST", "/api/lab/post?x=1", { "Content-Type": "application/x-www-form-urlencoded" }, "custname=Ada+L&topping=cheese&topping=onion");
  t.equal(form.status, 200);
  t.match(JSON.parse(form.body), { args: { x: "1" }, data: "", files: {}, form: { custname: "Ada L", topping: ["cheese", "onion"] }, json: null });
  t.notOk("method" in JSON.parse(form.body), "post shows no method, as httpbin's");
  const boundary = "----lab-boundary";
  const multipart = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="field"\r\n\r\nvalue one\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nfile text\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="bin"; filename="b.bin"\r\nContent-Type: image/png\r\n\r\n`,
    "latin1",
  );
  const body = Buffer.concat([multipart, Buffer.from([0x89, 0xff]), Buffer.from(`\r\n--${boundary}--\r\n`)]);
  for (const method of ["PUT", "PATCH", "DELETE"]) {
    const r = await raw(port, method, `/api/lab/${method.toLowerCase()}`, { "Content-Type": `multipart/form-data; boundary=${boundary}` }, body);
    t.equal(r.status, 200, method);
    t.match(JSON.parse(r.body), { form: { field: "value one" }, files: { upload: "file text", bin: "data:image/png;base64,if8=" }, data: "", json: null }, method);
  }
  const broken = await raw(port, "POST", "/api/lab/post", { "Content-Type": `multipart/form-data; boundary=${boundary}` }, `--${boundary}\r\nContent-Disposition: form-data; name="a"\r\n\r\nno end`);
  checkProblem(t, broken, 400, /has no delimiter after it/);
  const get = await raw(port, "GET", "/api/lab/get?q=%C3%A9");
  t.same(Object.keys(JSON.parse(get.body)), ["args", "headers", "origin", "url"], "get: httpbin's four members");
  t.same(JSON.parse(get.body).args, { q: "é" });
  const head = await talk(port, [`HEAD /api/lab/get HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`]);
  t.match(head.toString("latin1"), /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\n$/, "HEAD: GET's head, no body");
});

t.test("httpbin's method rules: get answers GET and HEAD, post POST...; any other method is a 405 with Allow", async (t) => {
  const { port } = await startApi(t);
  for (const [path, allowed] of [["get", "GET"], ["post", "POST"], ["put", "PUT"], ["patch", "PATCH"], ["delete", "DELETE"]] as const) {
    t.equal((await raw(port, allowed, `/api/lab/${path}`)).status, 200, `${allowed} /api/lab/${path}`);
    const wrong = await raw(port, allowed === "POST" ? "PUT" : "POST", `/api/lab/${path}`);
    checkProblem(t, wrong, 405, /is not served at/);
    t.equal(wrong.headers.allow, allowed === "GET" ? "GET, HEAD, OPTIONS" : [allowed, "OPTIONS"].sort().join(", "));
  }
});

t.test("headers, ip, user-agent, uuid", async (t) => {
  const { port } = await startApi(t);
  const h = await exchange(port, `GET /api/lab/headers HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nuser-agent: lab-test/1.0\r\nX-Custom-Field: v\r\n`);
  t.equal(h.head[0], "HTTP/1.1 200 OK");
  t.same(JSON.parse(h.body.toString()), { headers: { Host: `127.0.0.1:${port}`, "User-Agent": "lab-test/1.0", "X-Custom-Field": "v", Connection: "close" } }, "names in httpbin's Title-Case");
  t.same(JSON.parse((await raw(port, "GET", "/api/lab/user-agent", { "User-Agent": "curl/8.0" })).body), { "user-agent": "curl/8.0" });
  t.same(JSON.parse((await raw(port, "GET", "/api/lab/ip", { "X-Forwarded-For": "198.51.100.1, 10.0.0.1" })).body), { origin: "198.51.100.1, 10.0.0.1" });
  const a = JSON.parse((await raw(port, "GET", "/api/lab/uuid")).body).uuid;
  const b = JSON.parse((await raw(port, "GET", "/api/lab/uuid")).body).uuid;
  t.match(a, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, "a version 4 UUID");
  t.not(a, b, "a fresh one each time");
});

t.test("status/:codes: several codes, or weighted ones, answer one of them; a bad one is refused whether drawn or not", async (t) => {
  const { port } = await startApi(t);
  const seen = new Set<number>();
  for (let i = 0; i < 40; i++) seen.add((await raw(port, "GET", "/api/lab/status/200,418")).status);
  t.same([...seen].sort(), [200, 418], "both codes come up (each with chance 1/2 per request: 40 requests)");
  // A weight of 0 is never drawn.
  for (let i = 0; i < 20; i++) t.equal((await raw(port, "GET", "/api/lab/status/200:0,418:1")).status, 418);
  t.equal((await raw(port, "GET", "/api/lab/status/200:0.5,418:0.5")).status >= 200, true);
  for (const [codes, detail] of [["200,99", /out of range/], ["200:x", /not a status with an optional :weight/], ["200:0,418:0", /every weight is 0/], ["200,101", /interim/], [Array(51).fill("200").join(","), /51 codes are given/]] as const) {
    checkProblem(t, await raw(port, "GET", `/api/lab/status/${codes}`), 400, detail);
  }
});
