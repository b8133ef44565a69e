// The command users run: `node dist/src/main.js` as `npm start` runs it
// (npm test builds dist/ before the tests start).

import t from "tap";
import { startServer } from "./helpers/process.js";

t.test("npm start: prints the address, serves the status endpoints, logs, exits 0 on SIGTERM", async (t) => {
  const server = startServer({});
  const listening = await server.line(/^listening on /);
  // A first start with no admin token (the store is new, in memory) makes one and prints it, before it listens.
  const token = server.lines.filter((l) => /administrator token/.test(l));
  t.equal(token.length, 1, "a first start with no admin token creates one and prints it");
  t.match(token[0], /: sl_[A-Za-z0-9_-]{43}$/);
  const m = /^listening on (http:\/\/127\.0\.0\.1:(\d+))$/.exec(listening);
  t.ok(m, `the address line: ${listening}`);
  const base = m![1]!;
  const v1 = await fetch(`${base}/api/v1/status`);
  t.same(await v1.json(), { resposta: "O servidor está no ar." });
  t.equal(v1.headers.get("deprecation"), "@1767225600");
  t.equal(v1.headers.get("link"), '</api/v2/status>; rel="successor-version"');
  const v11 = await fetch(`${base}/api/v1-1/status`);
  t.same(await v11.json(), { resposta: "O servidor está no ar.", versao: "v1-1" });
  const v2 = await fetch(`${base}/api/v2/status`);
  t.same(await v2.json(), { response: "The server is up." });
  t.equal(v2.headers.get("content-type"), "application/json");
  await server.line(/^127\.0\.0\.1 - - \[\d\d\/[A-Z][a-z]{2}\/\d{4}:\d\d:\d\d:\d\d \+0000\] "GET \/api\/v2\/status HTTP\/1\.1" 200 \d+ [\d.]+ms$/);
  server.child.kill("SIGTERM");
  t.equal(await server.exited(), 0);
  t.ok(server.lines.includes("requests per API version: v1=1 v1-1=1 v2=1"), server.lines.join("\n"));
  t.equal(server.lines.filter((l) => /administrator token/.test(l)).length, 1, "the token was printed once");
});

t.test("--quiet: no access log", async (t) => {
  const server = startServer({}, ["--quiet"]);
  const base = await server.url();
  await (await fetch(`${base}/api/v2/status`)).text();
  server.child.kill("SIGINT");
  t.equal(await server.exited(), 0);
  t.notOk(server.lines.some((l) => l.includes('"GET ')), "no access-log line");
});

t.test("a bad setting stops the start with one clear line", async (t) => {
  const server = startServer({ PORT: "eighty" });
  t.equal(await server.exited(), 1);
  t.same(server.lines, ['startline: PORT must be a whole number, got "eighty"']);
});

t.test("an unusable DATA_DIR stops the start with one clear line", async (t) => {
  const server = startServer({ DATA_DIR: "/dev/null/data" });
  t.equal(await server.exited(), 1);
  t.equal(server.lines.length, 1);
  t.match(server.lines[0], /^startline: cannot open the database .*Check that DATA_DIR exists and is writable/);
});
