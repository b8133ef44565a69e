// Real clients sending the custom method UPDATE: curl and Python's
// http.client, over loopback, against the article endpoint (docs/api.md, row 11).

import t from "tap";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { splitResponses } from "../helpers/wire.js";
import { ADMIN_TOKEN, startApi, USER_TOKEN } from "./client.js";

const run = promisify(execFile);

/** `curl -si -X UPDATE` of article 1 with a token, a media type and a body; the parsed response. */
async function curlUpdate(base: string, token: string, contentType: string, body: string) {
  const { stdout } = await run("curl", [
    "-si", "-X", "UPDATE",
    "-H", `Authorization: Bearer ${token}`,
    "-H", `Content-Type: ${contentType}`,
    "--data", body,
    `${base}/api/v1/artigo/1`,
  ]);
  return splitResponses(Buffer.from(stdout, "latin1"))[0]!;
}

t.test("curl -X UPDATE with an admin token: 200 and the updated article", async (t) => {
  const api = await startApi(t);
  const r = await curlUpdate(api.base, ADMIN_TOKEN, "application/merge-patch+json", '{"title":"Updated by curl"}');
  t.equal(r.status, 200);
  t.equal(r.headers["content-type"], "application/json");
  const article = JSON.parse(r.body);
  t.equal(article.id, "1");
  t.equal(article.title, "Updated by curl");
  t.equal((await api.store.articles.get("1"))?.title, "Updated by curl", "stored");
});

t.test("curl -X UPDATE with a user token: 401 with a Bearer challenge", async (t) => {
  const api = await startApi(t);
  const r = await curlUpdate(api.base, USER_TOKEN, "application/json", '{"title":"Nope"}');
  t.equal(r.status, 401);
  t.match(r.headers["www-authenticate"], /^Bearer/);
  t.equal(r.headers["content-type"], "application/problem+json");
  t.not((await api.store.articles.get("1"))?.title, "Nope");
});

t.test("curl GET of the article as a standard user: 200", async (t) => {
  const api = await startApi(t);
  const { stdout } = await run("curl", ["-s", "-w", "\n%{http_code}", "-H", `Authorization: Bearer ${USER_TOKEN}`, `${api.base}/api/v1/artigo/2`]);
  const lines = stdout.split("\n");
  t.equal(lines.at(-1), "200");
  t.equal(JSON.parse(lines.slice(0, -1).join("\n")).id, "2");
});

const PYTHON = `
import http.client, json, sys
port, token, article = int(sys.argv[1]), sys.argv[2], sys.argv[3]
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
conn.request("UPDATE", "/api/v1/artigo/" + article, body=json.dumps({"title": "Updated by Python", "author": "Guido"}).encode(),
             headers={"Authorization": "Bearer " + token, "Content-Type": "application/merge-patch+json"})
resp = conn.getresponse()
body = resp.read().decode("utf-8")
print(json.dumps({"status": resp.status, "contentType": resp.getheader("Content-Type"), "wwwAuthenticate": resp.getheader("WWW-Authenticate"), "body": body}))
conn.close()
`;

async function python(port: number, token: string, article: string): Promise<{ status: number; contentType: string; wwwAuthenticate: string | null; body: string }> {
  const { stdout } = await run("python3", ["-c", PYTHON, String(port), token, article]);
  return JSON.parse(stdout);
}

t.test("Python http.client sending UPDATE with an admin token: 200 and the JSON body", async (t) => {
  const api = await startApi(t);
  const r = await python(api.port, ADMIN_TOKEN, "3");
  t.equal(r.status, 200);
  t.equal(r.contentType, "application/json");
  const article = JSON.parse(r.body);
  t.same(
    { id: article.id, title: article.title, author: article.author },
    { id: "3", title: "Updated by Python", author: "Guido" },
  );
  t.type(article.body, "string");
  t.type(article.updatedAt, "string");
  t.equal((await api.store.articles.get("3"))?.author, "Guido", "stored");
});

t.test("Python http.client sending UPDATE with a user token: 401", async (t) => {
  const api = await startApi(t);
  const r = await python(api.port, USER_TOKEN, "3");
  t.equal(r.status, 401);
  t.equal(r.contentType, "application/problem+json");
  t.match(r.wwwAuthenticate, /^Bearer/);
  t.equal(JSON.parse(r.body).status, 401);
});
