// The wire view's guards: a bounded answer whatever the requests inside ask
// for, other clients served while it works, and no cross-site use.

import t from "tap";
import { inject } from "../../src/http/inject.js";
import { docsApp, request } from "../helpers/app.js";
import { splitResponses } from "../helpers/wire.js";

const deleteRequest = (id: string) => `DELETE /api/v1/post/${id} HTTP/1.1\r\nHost: x\r\n\r\n`;

t.test("cross-site use is refused: Origin of another site, Sec-Fetch-Site, text/plain", async (t) => {
  const { app, store } = await docsApp();
  await store.posts.create({ id: "keep", title: "Keep me", body: "A cross-site page must not delete this." });
  const post = async (headers: Record<string, string>) => request(app, "POST", "/api/wire", headers, deleteRequest("keep"));
  const stillThere = async () => (await store.posts.get("keep")) !== undefined;

  const evil = await post({ "Content-Type": "message/http", Origin: "https://evil.example" });
  t.equal(evil.status, 403);
  t.equal(evil.headers["content-type"], "application/problem+json");
  t.match(JSON.parse(evil.body).detail, /Origin https:\/\/evil\.example/);
  t.ok(await stillThere(), "a cross-site Origin deletes nothing");

  const otherPort = await post({ "Content-Type": "message/http", Origin: "http://127.0.0.1:3000" });
  t.equal(otherPort.status, 403, "another local server's page (same host, another port) is another origin");
  t.equal((await post({ "Content-Type": "message/http", Origin: "null" })).status, 403, "an opaque origin (sandbox, file:) is refused");

  const site = await post({ "Content-Type": "message/http", "Sec-Fetch-Site": "cross-site" });
  t.equal(site.status, 403);
  t.match(JSON.parse(site.body).detail, /Sec-Fetch-Site: cross-site/);
  t.equal((await post({ "Content-Type": "message/http", "Sec-Fetch-Site": "same-site" })).status, 403, "same-site is still another origin");
  t.ok(await stillThere(), "Sec-Fetch-Site: cross-site deletes nothing");

  const plain = await post({ "Content-Type": "text/plain", Origin: "https://evil.example" });
  t.equal(plain.status, 415, "text/plain is refused before anything else is looked at");
  const plainAlone = await post({ "Content-Type": "text/plain; charset=utf-8" });
  t.equal(plainAlone.status, 415, "text/plain is refused even from the same origin");
  t.equal(plainAlone.headers["accept-post"], "message/http");
  const detail = JSON.parse(plainAlone.body).detail;
  t.match(detail, /message\/http/, "the detail says what to send");
  t.match(detail, /preflight/, "and why: text/plain needs no CORS preflight");
  t.ok(await stillThere(), "text/plain deletes nothing");

  const options = await request(app, "OPTIONS", "/api/wire", { Origin: "https://evil.example", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type" });
  t.equal(options.headers["access-control-allow-origin"], undefined, "the preflight grants nothing");
  t.equal(options.headers["access-control-allow-headers"], undefined);

  const same = await post({ "Content-Type": "message/http", Origin: "http://127.0.0.1", "Sec-Fetch-Site": "same-origin" });
  t.equal(same.status, 200, "the page's own origin is served");
  t.equal(JSON.parse(same.body).response.responses[0].status, 200);
  t.notOk(await stillThere(), "and its request ran");
  const tool = await request(app, "POST", "/api/wire", { "Content-Type": "message/http" }, "GET /api/v2/status HTTP/1.1\r\nHost: x\r\n\r\n");
  t.equal(tool.status, 200, "without Origin or Sec-Fetch-Site (curl, scripts) it is served");
  const status = "GET /api/v2/status HTTP/1.1\r\nHost: x\r\n\r\n";
  const viaHost = async (host: string, origin: string) => {
    const head = `POST /api/wire HTTP/1.1\r\nHost: ${host}\r\nOrigin: ${origin}\r\nContent-Type: message/http\r\nContent-Length: ${status.length}\r\nConnection: close\r\n\r\n`;
    return splitResponses((await inject(app.handle, head + status)).output)[0]!.status;
  };
  t.equal(await viaHost("127.0.0.1:80", "http://127.0.0.1"), 200, "Host: h:80 is the origin http://h");
  t.equal(await viaHost("LOCALHOST:8080", "http://localhost:8080"), 200, "host names compare without case");
  t.equal(await viaHost("127.0.0.1:8443", "https://127.0.0.1:8443"), 200, "https origins too (TLS, or a proxy in front)");
  t.equal(await viaHost("127.0.0.1:8080", "http://127.0.0.1:8080, http://evil.example"), 403, "two Origin values are refused");
});
