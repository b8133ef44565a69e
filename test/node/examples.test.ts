// The examples of node's interface on the engine (examples/express-update.mjs,
// koa-update.mjs, fastify.mjs), run as they stand, importing "startline/node"
// as a user would: this repository's workspace link to packages/startline,
// filled from the build as packing fills it. Each prints its listening line,
// then answers over a real socket, UPDATE included where the framework routes it.

import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import t, { type Test } from "tap";
import { listeningScript } from "../helpers/process.js";
import { ROOT } from "../helpers/root.js";
import { splitResponses, talk } from "../helpers/wire.js";

await promisify(execFile)(process.execPath, [path.join(ROOT, "packages", "startline", "fill.mjs")]);

async function start(t: Test, name: string): Promise<number> {
  const { url } = await listeningScript(t, name, path.join(ROOT, "examples", name), { PORT: "0", HOST: "127.0.0.1" }, ROOT);
  return Number(new URL(url).port);
}

const line = (request: string, last = false, body = "", fields = "") =>
  `${request} HTTP/1.1\r\nHost: 127.0.0.1\r\n${fields}${body === "" ? "" : `Content-Length: ${Buffer.byteLength(body)}\r\n`}${last ? "Connection: close\r\n" : ""}\r\n${body}`;

t.test("examples/express-update.mjs: GET, POST and UPDATE on a note", async (t) => {
  const port = await start(t, "express-update.mjs");
  const json = "Content-Type: application/json\r\n";
  const [read, updated, again, missing] = splitResponses(
    await talk(port, [line("GET /notes/a"), line("UPDATE /notes/a", false, '{"text":"new"}', json), line("GET /notes/a"), line("UPDATE /notes/zz", true, "{}", json)]),
  );
  t.same(JSON.parse(read!.body), { text: "first" });
  t.equal(updated!.status, 200);
  t.same(JSON.parse(updated!.body), { text: "new" });
  t.same(JSON.parse(again!.body), { text: "new" });
  t.equal(missing!.status, 404);
});

t.test("examples/koa-update.mjs: UPDATE adds to the counter", async (t) => {
  const port = await start(t, "koa-update.mjs");
  const [first, second, read] = splitResponses(await talk(port, [line("UPDATE /counter", false, "5"), line("UPDATE /counter", false, "2"), line("GET /counter", true)]));
  t.same(JSON.parse(first!.body), { counter: 5 });
  t.same(JSON.parse(second!.body), { counter: 7 });
  t.same(JSON.parse(read!.body), { counter: 7 });
});

t.test("examples/fastify.mjs: its routes, pipelined", async (t) => {
  const port = await start(t, "fastify.mjs");
  const [hello, echo] = splitResponses(await talk(port, [line("GET /hello/you") + line("POST /echo", true, '{"a":1}', "Content-Type: application/json\r\n")]));
  t.same(JSON.parse(hello!.body), { hello: "you" });
  t.same(JSON.parse(echo!.body), { got: { a: 1 } });
});
