// The data ceiling (bench/data.ts): the least any server must spend on the
// data endpoints, given rows stored as columns. node:net, no HTTP parsing
// beyond the request line, the Accept field and Content-Length; the same
// SQLite table and statements as bench/servers/fastify-data.ts; each answer
// JSON.stringify of the rows, one post with a SHA-256 ETag. No validation,
// no negotiation, no error handling worth the name: not a server anyone
// should run, a floor to measure against.
//
//   DATA_FILE=/tmp/x.sqlite PORT=0 node dist/bench/servers/data-ceiling.js

import { createHash } from "node:crypto";
import { createServer, type Socket } from "node:net";
import { dump } from "js-yaml";
import { openPostTable, toPost } from "./post-table.js";

const { db, q } = openPostTable(process.env.DATA_FILE ?? ":memory:");

let date = new Date().toUTCString();
setInterval(() => (date = new Date().toUTCString()), 1000).unref();

function send(socket: Socket, status: string, type: string, body: string, extra = ""): void {
  socket.write(`HTTP/1.1 ${status}\r\nDate: ${date}\r\nContent-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`);
}

function answer(socket: Socket, method: string, target: string, yaml: boolean, body: string): void {
  const [path, query = ""] = target.split("?", 2) as [string, string?];
  if (path.startsWith("/api/v1/post/")) {
    const id = path.slice("/api/v1/post/".length);
    if (method === "POST") {
      const fields = JSON.parse(body) as { title: string; body: string; author?: string; tags?: string[] };
      const now = new Date().toISOString();
      q.insert.run(id, fields.title, fields.body, fields.author ?? null, fields.tags === undefined ? null : JSON.stringify(fields.tags), now, now);
      send(socket, "201 Created", "application/json", JSON.stringify({ published: true, post: toPost(q.get.get(id)!) }), `Location: /api/v1/post/${id}\r\n`);
      return;
    }
    const row = q.get.get(id);
    if (row === undefined) return send(socket, "404 Not Found", "application/json", "{}");
    const json = JSON.stringify(toPost(row));
    const etag = createHash("sha256").update(json).digest("base64url").slice(0, 27);
    send(socket, "200 OK", "application/json", json, `Cache-Control: no-cache\r\nETag: "${etag}"\r\n`);
    return;
  }
  const params = new URLSearchParams(query);
  const limit = params.get("limit");
  const rows = limit === null ? q.all.all() : q.page.all(Number(params.get("after") ?? 0), Number(limit));
  const posts = rows.map(toPost);
  const link = limit !== null && rows.length === Number(limit) ? `Link: </api/v1/posts?limit=${limit}&after=${rows[rows.length - 1]!.seq}>; rel="next"\r\n` : "";
  if (yaml) send(socket, "200 OK", "application/yaml", dump({ posts }, { noRefs: true, lineWidth: -1 }), link);
  else send(socket, "200 OK", "application/json", JSON.stringify({ posts }), link);
}

const server = createServer((socket) => {
  let buffered = "";
  socket.setEncoding("latin1");
  socket.on("data", (data: string) => {
    buffered += data;
    for (;;) {
      const end = buffered.indexOf("\r\n\r\n");
      if (end === -1) return;
      const head = buffered.slice(0, end);
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      const bodyBytes = length === null ? 0 : Number(length[1]);
      if (buffered.length < end + 4 + bodyBytes) return;
      const body = Buffer.from(buffered.slice(end + 4, end + 4 + bodyBytes), "latin1").toString("utf8");
      buffered = buffered.slice(end + 4 + bodyBytes);
      const line = head.slice(0, head.indexOf("\r\n"));
      const [method = "", target = ""] = line.split(" ");
      answer(socket, method, target, /\r\naccept:[^\r]*yaml/i.test(head), body);
    }
  });
  socket.on("error", () => socket.destroy());
});
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? "127.0.0.1", () => {
  const address = server.address();
  console.log(`listening on http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`);
});
process.once("SIGTERM", () => (db.close(), process.exit(0)));
