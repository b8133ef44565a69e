// The access log's two formats, line by line for fixed exchanges and times,
// and what the connection hands the log (client address, version) in memory
// and over a real socket.

import { PassThrough } from "node:stream";
import t, { type Test } from "tap";
import type { Exchange } from "../src/http/connection/options.js";
import { inject } from "../src/http/connection/inject.js";
import { accessLog, formatCommon, formatJson } from "../src/log.js";
import { startServer, type ServerProcess } from "./helpers/process.js";
import { listen, talk } from "./helpers/wire.js";

const AT = Date.UTC(2026, 10, 23, 7, 56, 0); // 23 Nov 2026 07:56:00.000 UTC
const status: Exchange = { client: "127.0.0.1", method: "GET", target: "/api/v2/status", version: "HTTP/1.1", status: 200, bodyBytes: 31, ms: 0.4234 };

t.test("common: CLF with the duration after it", async (t) => {
  t.equal(formatCommon(status, AT), '127.0.0.1 - - [23/Nov/2026:07:56:00 +0000] "GET /api/v2/status HTTP/1.1" 200 31 0.42ms');
  t.equal(
    formatCommon({ ...status, client: "::1", method: "DELETE", target: "/api/v1/post/a?x=1", version: "HTTP/1.0", status: 204, bodyBytes: 0, ms: 12.345 }, Date.UTC(2027, 0, 5, 23, 4, 9, 999)),
    '::1 - - [05/Jan/2027:23:04:09 +0000] "DELETE /api/v1/post/a?x=1 HTTP/1.0" 204 - 12.35ms',
    "no body is '-', as CLF writes it; single-digit fields are zero-padded",
  );
});

t.test("common: a request whose request line never parsed is \"-\"; one whose head failed keeps its line and lacks its version", async (t) => {
  const garbage: Exchange = { client: "127.0.0.1", method: "-", target: "-", version: "-", status: 400, bodyBytes: 180, ms: 0.1 };
  t.equal(formatCommon(garbage, AT), '127.0.0.1 - - [23/Nov/2026:07:56:00 +0000] "-" 400 180 0.10ms');
  t.equal(formatCommon({ ...garbage, method: "GET", target: "/x" }, AT), '127.0.0.1 - - [23/Nov/2026:07:56:00 +0000] "GET /x -" 400 180 0.10ms');
  t.equal(formatCommon({ ...garbage, client: "-" }, AT), '- - - [23/Nov/2026:07:56:00 +0000] "-" 400 180 0.10ms', "an in-memory client has no address");
});

t.test("common: quotes, backslashes and control bytes cannot break the line", async (t) => {
  const line = formatCommon({ ...status, method: 'G"T', target: "/a\\b\r\n127.0.0.1 - - \x7f\xe9" }, AT);
  t.equal(line, '127.0.0.1 - - [23/Nov/2026:07:56:00 +0000] "G\\"T /a\\\\b\\x0d\\x0a127.0.0.1 - - \\x7f\\xe9 HTTP/1.1" 200 31 0.42ms');
  t.notMatch(line, /[\r\n]/);
});

t.test("the cached second follows the clock, forwards and back", async (t) => {
  t.match(formatCommon(status, AT + 999), "[23/Nov/2026:07:56:00 +0000]", "same second");
  t.match(formatCommon(status, AT + 1000), "[23/Nov/2026:07:56:01 +0000]", "the next second");
  t.match(formatCommon(status, Date.UTC(2028, 1, 29, 0, 0, 0)), "[29/Feb/2028:00:00:00 +0000]", "a jump ahead");
  t.match(formatCommon(status, AT), "[23/Nov/2026:07:56:00 +0000]", "a clock set back");
  t.match(formatJson(status, AT + 1007), '"time":"2026-11-23T07:56:01.007Z"', "JSON shares the cache and adds milliseconds");
});

t.test("json: one object with every field, exact text", async (t) => {
  const line = formatJson(status, AT + 5);
  t.equal(line, '{"time":"2026-11-23T07:56:00.005Z","client":"127.0.0.1","method":"GET","target":"/api/v2/status","version":"HTTP/1.1","status":200,"bytes":31,"ms":0.42}');
  t.same(JSON.parse(line), { time: "2026-11-23T07:56:00.005Z", client: "127.0.0.1", method: "GET", target: "/api/v2/status", version: "HTTP/1.1", status: 200, bytes: 31, ms: 0.42 });
  t.equal(new Date(JSON.parse(line).time).getTime(), AT + 5, "time is ISO 8601 a parser reads back exactly");
  t.same(JSON.parse(formatJson({ ...status, bodyBytes: 0 }, AT, 3)), { ...JSON.parse(formatJson(status, AT)), bytes: 0, worker: 3 }, "bytes 0 stays a number; worker as a field");
  const odd = JSON.parse(formatJson({ ...status, method: 'G"T', target: "/\n" }, AT));
  t.equal(odd.method, 'G"T');
  t.equal(odd.target, "/\n", "escaped by JSON, read back as sent");
});

t.test("accessLog: lines batched into one write per turn, worker as a prefix or a field", async (t) => {
  const collect = (options: Parameters<typeof accessLog>[1]) => {
    const out = new PassThrough();
    const writes: string[] = [];
    out.on("data", (d: Buffer) => writes.push(d.toString()));
    const log = accessLog(out, options);
    log(status);
    log({ ...status, target: "/api/v1/status" });
    return new Promise<string[]>((resolve) => setImmediate(() => setImmediate(() => resolve(writes))));
  };
  const common = await collect({});
  t.equal(common.length, 1, "one write for both lines");
  const lines = common[0]!.split("\n");
  t.equal(lines.length, 3);
  t.equal(lines[2], "", "each line ends with a newline");
  t.match(lines[0], /^127\.0\.0\.1 - - \[\d\d\/\w{3}\/\d{4}:\d\d:\d\d:\d\d \+0000\] "GET \/api\/v2\/status HTTP\/1\.1" 200 31 0\.42ms$/);
  t.match(lines[1], /"GET \/api\/v1\/status HTTP\/1\.1"/);

  const worker = (await collect({ worker: 2 }))[0]!.split("\n");
  t.match(worker[0], /^w2 127\.0\.0\.1 - - \[/);

  const json = (await collect({ format: "json", worker: 2 }))[0]!.split("\n");
  t.match(JSON.parse(json[0]!), { client: "127.0.0.1", method: "GET", target: "/api/v2/status", version: "HTTP/1.1", status: 200, bytes: 31, ms: 0.42, worker: 2 });
  t.match(JSON.parse(json[1]!), { target: "/api/v1/status", worker: 2 });
});

t.test("the connection hands the log the version and the client's address", async (t) => {
  const handler = () => ({ status: 200, body: "ok" });
  const memory = await inject(handler, "GET /a HTTP/1.0\r\n\r\nGET /b HTTP/1.1\r\nHost: t\r\n\r\nNONSENSE\r\n\r\n");
  t.same(
    memory.exchanges.map(({ client, method, target, version, status }) => ({ client, method, target, version, status })),
    [{ client: "-", method: "GET", target: "/a", version: "HTTP/1.0", status: 200 }],
    "HTTP/1.0 without keep-alive closes after its response",
  );
  const bad = await inject(handler, "GET /b HTTP/1.1\r\nHost: t\r\n\r\nNONSENSE\r\n\r\n");
  t.same(
    bad.exchanges.map(({ method, target, version, status }) => ({ method, target, version, status })),
    [
      { method: "GET", target: "/b", version: "HTTP/1.1", status: 200 },
      { method: "-", target: "-", version: "-", status: 400 },
    ],
  );
  const head = await inject(handler, "GET /c HTTP/1.1\r\nHost: t\r\nbad header\r\n\r\n");
  t.same(head.exchanges.map(({ method, target, version, status }) => ({ method, target, version, status })), [{ method: "GET", target: "/c", version: "HTTP/1.1", status: 400 }], "a head refused after its request line: that line, version included");

  const seen: Exchange[] = [];
  const running = await listen(handler, { onExchange: (e) => seen.push(e) });
  t.teardown(() => running.close());
  await talk(running.port, ["GET /d HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"]);
  t.match(seen, [{ client: "127.0.0.1", method: "GET", target: "/d", version: "HTTP/1.1", status: 200, bodyBytes: 2 }]);
});

// ---- Over a real server process (dist/, as `npm start` runs it) ----

const CLF_TIME = String.raw`\[\d\d\/(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\/\d{4}:\d\d:\d\d:\d\d \+0000\]`;

async function started(t: Test, env: Record<string, string>): Promise<{ server: ServerProcess; port: number; base: string }> {
  const server = startServer(env);
  t.teardown(async () => {
    server.child.kill("SIGTERM");
    await server.exited();
  });
  const base = await server.url();
  return { server, port: Number(new URL(base).port), base };
}

/** Three exchanges: a fetch, a request line the parser refuses, and a head refused after its request line. */
async function threeRequests(base: string, port: number): Promise<number> {
  const bytes = Buffer.byteLength(await (await fetch(`${base}/api/v2/status`)).text());
  await talk(port, ["NONSENSE\r\n\r\n"]);
  await talk(port, ["GET /api/v1/status HTTP/1.1\r\nHost: t\r\nno colon here\r\n\r\n"]);
  return bytes;
}

t.test("a server process logs Common Log Format lines by default, malformed requests included", async (t) => {
  const { server, port, base } = await started(t, {});
  const bytes = await threeRequests(base, port);
  const ok = await server.line(/"GET \/api\/v2\/status /);
  t.match(ok, new RegExp(String.raw`^127\.0\.0\.1 - - ${CLF_TIME} "GET /api/v2/status HTTP/1\.1" 200 ${bytes} \d+\.\d\dms$`));
  const garbage = await server.line(/"-" 400 /);
  t.match(garbage, new RegExp(String.raw`^127\.0\.0\.1 - - ${CLF_TIME} "-" 400 \d+ \d+\.\d\dms$`), "no request line: \"-\"");
  const badHead = await server.line(/"GET \/api\/v1\/status HTTP\/1\.1" 400 /);
  t.match(badHead, new RegExp(String.raw`^127\.0\.0\.1 - - ${CLF_TIME} "GET /api/v1/status HTTP/1.1" 400 \d+ \d+\.\d\dms$`), "the line the parser read, version included");
});

t.test("LOG_FORMAT=json: one JSON object per line", async (t) => {
  const { server, port, base } = await started(t, { LOG_FORMAT: "json" });
  const before = Date.now();
  const bytes = await threeRequests(base, port);
  const parsed = async (re: RegExp) => JSON.parse(await server.line(re)) as Record<string, unknown>;
  const ok = await parsed(/^\{.*"target":"\/api\/v2\/status"/);
  t.same(Object.keys(ok), ["time", "client", "method", "target", "version", "status", "bytes", "ms"]);
  t.match(ok, { client: "127.0.0.1", method: "GET", target: "/api/v2/status", version: "HTTP/1.1", status: 200, bytes, ms: Number });
  t.match(ok.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.ok(Date.parse(ok.time as string) >= before - 1000, "the time of this exchange");
  t.match(await parsed(/^\{.*"method":"-"/), { client: "127.0.0.1", method: "-", target: "-", version: "-", status: 400 });
  t.match(await parsed(/^\{.*"target":"\/api\/v1\/status"/), { method: "GET", version: "HTTP/1.1", status: 400 });
  t.notOk(server.lines.some((l) => l.includes('"GET /api/v2/status HTTP/1.1"')), "no common-format line");
});

t.test("LOG_FORMAT with another value stops the start with one line naming it", async (t) => {
  const server = startServer({ LOG_FORMAT: "apache" });
  t.equal(await server.exited(), 1);
  t.same(server.lines, ['startline: LOG_FORMAT must be one of common, json, got "apache"']);
});
