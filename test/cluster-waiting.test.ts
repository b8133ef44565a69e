// WORKERS=N while no worker is ready (all of them restarting): the primary
// holds each connection it accepts until a worker is, within bounds. At most
// MAX_CONNECTIONS times WORKERS wait, and one more is refused as a worker
// refuses one past its own cap (a 503; over HTTPS, closed); and none waits
// longer than HEADERS_TIMEOUT_MS. Before, the queue had neither bound: a
// flood during a restart window held a socket each in the primary for as
// long as no worker came up, and a client that left was never let go.
//
// The primary is the real one; its workers are stand-ins
// (test/helpers/stalled-workers.mjs) whose replacements never become ready,
// so "no worker ready" lasts as long as the test needs, without a race
// against a real worker's start. src/waiting-room.ts is tested on its own in
// test/scaling/waiting-room.test.ts.

import t, { type Test } from "tap";
import net from "node:net";
import { once } from "node:events";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { startScript, type ServerProcess } from "./helpers/process.js";
import { splitResponses } from "./helpers/wire.js";
import { happens } from "./helpers/hang.js";
import { ROOT } from "./helpers/root.js";

const run = promisify(execFile);
const HARNESS = path.join(ROOT, "test", "helpers", "stalled-workers.mjs");
const dir = mkdtempSync(path.join(tmpdir(), "startline-cluster-waiting-"));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

/** Resolves once `n` output lines of `server` match `re`. */
function lines(server: ServerProcess, re: RegExp, n: number): Promise<void> {
  return new Promise((resolve) => {
    const check = () => server.lines.filter((l) => re.test(l)).length >= n && (stop(), resolve());
    const stop = server.onLine(check);
    check();
  });
}

/**
 * A primary with two stand-in workers, both killed once it listens: their replacements never
 * become ready, so from the resolved port on, every connection the primary accepts waits.
 */
async function noWorkerReady(t: Test, name: string, env: Record<string, string>): Promise<number> {
  const server = startScript(HARNESS, { WORKERS: "2", DATA_DIR: path.join(dir, name), QUIET: "1", ...env });
  t.teardown(async () => {
    server.child.kill("SIGTERM");
    await server.exited();
  });
  const port = Number(new URL(await server.url()).port);
  const { stdout } = await run("pgrep", ["-P", String(server.child.pid)]);
  for (const pid of stdout.trim().split("\n").map(Number)) process.kill(pid, "SIGKILL");
  await happens(t, lines(server, /exited \(SIGKILL\); starting a replacement/, 2), "both workers are gone, and replaced by ones that never become ready");
  return port;
}

/** A connection that has sent a request and is waiting; `closed` says whether the server has closed it yet. */
async function waitingClient(port: number): Promise<{ socket: net.Socket; closed: () => boolean }> {
  const socket = net.connect(port, "127.0.0.1");
  socket.on("error", () => {});
  await once(socket, "connect");
  socket.write("GET /api/v2/status HTTP/1.1\r\nHost: t\r\n\r\n");
  let closed = false;
  socket.once("close", () => (closed = true));
  return { socket, closed: () => closed };
}

/**
 * Everything a new connection that sends one request receives, until the server closes it (a close
 * with the request unread is a reset: the primary never reads a connection it does not hand over).
 */
async function answer(port: number): Promise<Buffer> {
  const { socket } = await waitingClient(port);
  const chunks: Buffer[] = [];
  socket.on("data", (d: Buffer) => chunks.push(d));
  await new Promise((resolve) => socket.once("close", resolve));
  return Buffer.concat(chunks);
}

t.test("with no worker ready, MAX_CONNECTIONS x WORKERS connections wait, and one more gets the 503 a worker gives past its cap", async (t) => {
  // A long headers timeout: the connections that wait are still waiting when the one past the bound comes.
  const port = await noWorkerReady(t, "cap", { MAX_CONNECTIONS: "2", HEADERS_TIMEOUT_MS: "60000" });
  const held = [];
  for (let i = 0; i < 4; i++) held.push(await waitingClient(port));
  const [refused] = splitResponses(await happens(t, answer(port), "the fifth connection is answered and closed"));
  t.equal(refused?.status, 503);
  t.match(refused?.body, /"type":\s*"\/problems\/too-many-connections"/);
  t.equal(refused?.headers["retry-after"], "1");
  t.same(held.map((c) => c.closed()), [false, false, false, false], "the four before it still wait");
  for (const c of held) c.socket.destroy();
});

t.test("over HTTPS, the connection past the bound is closed before any handshake, as a worker closes one past its cap", async (t) => {
  // The stand-in workers never read the certificate, and the primary never does: the paths only make it HTTPS.
  const port = await noWorkerReady(t, "cap-tls", {
    MAX_CONNECTIONS: "1",
    HEADERS_TIMEOUT_MS: "60000",
    TLS_CERT: path.join(dir, "unread-cert.pem"),
    TLS_KEY: path.join(dir, "unread-key.pem"),
  });
  const held = [await waitingClient(port), await waitingClient(port)];
  t.equal((await happens(t, answer(port), "the third connection is closed")).length, 0, "with nothing sent on it");
  t.same(held.map((c) => c.closed()), [false, false], "the two before it still wait");
  for (const c of held) c.socket.destroy();
});

t.test("with no worker ready, a connection that has waited HEADERS_TIMEOUT_MS is closed", async (t) => {
  const port = await noWorkerReady(t, "deadline", { HEADERS_TIMEOUT_MS: "200" });
  t.equal((await happens(t, answer(port), "the primary closes the connection at the headers timeout")).length, 0, "unanswered: no worker ever had it");
});
