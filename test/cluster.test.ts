// WORKERS=2: two processes share the port and the SQLite database.

import t from "tap";
import net from "node:net";
import { once } from "node:events";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { startServer } from "./helpers/process.js";
import { splitResponses } from "./helpers/wire.js";
import { happens } from "./helpers/hang.js";

const run = promisify(execFile);
const dir = mkdtempSync(path.join(tmpdir(), "startline-cluster-"));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

/** One request on its own connection, so the cluster's round-robin sees each one. */
async function once1(port: number, request: string): Promise<{ status: number; body: string }> {
  const socket = net.connect(port, "127.0.0.1");
  await once(socket, "connect");
  const chunks: Buffer[] = [];
  socket.on("data", (d: Buffer) => chunks.push(d));
  socket.end(request);
  await once(socket, "close");
  const [r] = splitResponses(Buffer.concat(chunks));
  return { status: r!.status, body: r!.body };
}

const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n`;
const postFact = (text: string) =>
  `POST /api/v2/facts HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`;

async function workerPids(primary: number): Promise<number[]> {
  const { stdout } = await run("pgrep", ["-P", String(primary)]);
  return stdout.trim().split("\n").map(Number);
}

t.test("requests are served by more than one worker; usage is summed over workers", async (t) => {
  const server = startServer({ WORKERS: "2", DATA_DIR: path.join(dir, "spread") });
  const port = Number(new URL(await server.url()).port);
  for (let i = 0; i < 10; i++) t.equal((await once1(port, get("/api/v1/status"))).status, 200);
  await happens(t, server.line(/^w1 127\.0\.0\.1 - - \[[^\]]+\] "GET /), "an access-log line from worker 1");
  await happens(t, server.line(/^w2 127\.0\.0\.1 - - \[[^\]]+\] "GET /), "an access-log line from worker 2");
  server.child.kill("SIGTERM");
  t.equal(await server.exited(), 0, "SIGTERM drains every worker, then the primary exits 0");
  t.ok(server.lines.includes("requests per API version: v1=10 v1-1=0 v2=0"), server.lines.slice(-3).join("\n"));
});

// The JSON log and a worker's death share one cluster: what each asserts holds of any WORKERS=2 cluster
// on disk, and a cluster of its own cost the second a primary and two workers more to start (about 1 s
// of CPU). The log comes first, while both first workers serve; the death's writes are told apart by
// their own texts, and the log they add changes nothing they assert.
t.test("one WORKERS=2 cluster with LOG_FORMAT=json", async (t) => {
  const server = startServer({ WORKERS: "2", DATA_DIR: path.join(dir, "json-crash"), LOG_FORMAT: "json" });
  const port = Number(new URL(await server.url()).port);

  await t.test("LOG_FORMAT=json under WORKERS: the worker is a field of each object, not a prefix", async (t) => {
    t.equal((await once1(port, get("/api/v2/status"))).status, 200);
    const entry = JSON.parse(await server.line(/"target":"\/api\/v2\/status"/)) as Record<string, unknown>;
    t.match(entry, { client: "127.0.0.1", method: "GET", status: 200, worker: Number });
    t.ok(entry.worker === 1 || entry.worker === 2, `worker ${String(entry.worker)}`);
  });

  await t.test("a killed worker is replaced, the port keeps answering, and no acknowledged write is lost", async (t) => {
    const acknowledged: string[] = [];
    for (let i = 0; i < 20; i++) {
      const text = `Before the crash ${i}.`;
      // Nothing has failed yet: every write is answered, by either worker in turn.
      if (t.equal((await once1(port, postFact(text))).status, 201, `write ${i + 1} before the crash acknowledged`)) acknowledged.push(text);
    }
    const [victim] = await workerPids(server.child.pid!);
    process.kill(victim!, "SIGKILL");
    await server.line(/exited \(SIGKILL\); starting a replacement/);
    for (let i = 0; i < 20; i++) {
      const text = `After the crash ${i}.`;
      const r = await once1(port, postFact(text));
      t.equal(r.status, 201, "the port keeps answering");
      acknowledged.push(text);
    }
    const { body } = await once1(port, get("/api/v2/facts"));
    const stored = new Set((JSON.parse(body) as { facts: { text: string }[] }).facts.map((f) => f.text));
    t.same(acknowledged.filter((text) => !stored.has(text)), [], `all ${acknowledged.length} acknowledged writes are stored`);
  });

  server.child.kill("SIGTERM");
  t.equal(await server.exited(), 0, "SIGTERM ends the cluster, a replaced worker among them, with exit 0");
});

t.test("WORKERS with DATA_DIR=:memory: is refused: the workers could not share data", async (t) => {
  const server = startServer({ WORKERS: "2", DATA_DIR: ":memory:" });
  t.equal(await server.exited(), 1);
  t.match(server.lines[0], /WORKERS needs a DATA_DIR on disk/);
});
