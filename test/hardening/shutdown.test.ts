// SIGTERM under load, against the real process (dist/src/main.js, built by
// `npm test` before tap): autocannon keeps 16 connections busy on
// GET /api/v2/status, and one more connection is half-way through a request
// head. Then SIGTERM:
//
//   - every request the server received gets its whole response: the count of
//     requests the server routed (the `requests per API version` line it
//     prints on exit) equals the count of whole responses the clients parsed;
//   - the only client errors are refused connections (ECONNREFUSED): no
//     reset, no timeout, no truncated response;
//   - new connections are refused once the server says it stopped accepting
//     them, while it is still finishing;
//   - the request that was half-way through its head when the signal came is
//     answered (with Connection: close);
//   - the process exits 0 by itself: the grace period is an hour, so it
//     cannot have run out; the wait for the exit is bounded only as a hang.
//
// (SIGKILL in the middle of writes, losing no acknowledged write, is
// test/store/durability.test.ts.)

import t from "tap";
import net from "node:net";
import { once } from "node:events";
import autocannon from "autocannon";
import { startServer } from "../helpers/process.js";
import { happens } from "../helpers/hang.js";
import { readUntil } from "../helpers/wire.js";

// The most SHUTDOWN_GRACE_MS takes: the server must exit because everything
// finished, never because the grace ran out, whatever the machine's pace.
const GRACE_MS = 3_600_000;

t.test("SIGTERM under autocannon load: nothing received is lost, new connections refused, exit 0 once all is answered", async (t) => {
  const server = startServer({ QUIET: "1", SHUTDOWN_GRACE_MS: String(GRACE_MS), HEADERS_TIMEOUT_MS: "60000" });
  t.teardown(() => {
    if (server.child.exitCode === null) server.child.kill("SIGKILL");
  });
  const base = await server.url();
  const port = Number(new URL(base).port);

  // A request whose head is not finished when the signal comes.
  const partial = net.connect(port, "127.0.0.1");
  await once(partial, "connect");
  const partialBytes: Buffer[] = [];
  partial.on("data", (d: Buffer) => partialBytes.push(d));
  partial.write("GET /api/v2/status HTTP/1.1\r\nHost: t\r\n");

  let responses = 0;
  const statuses = new Map<number, number>();
  const errors = new Map<string, number>();
  let responsesAtSignal = 0;
  let finish!: (result: autocannon.Result) => void;
  const finished = new Promise<autocannon.Result>((resolve) => (finish = resolve));
  const instance = autocannon({ url: `${base}/api/v2/status`, connections: 16, pipelining: 1, duration: 60, timeout: 10 }, (_error: unknown, result: autocannon.Result) =>
    finish(result),
  );
  const signalledAt = new Promise<void>((resolve) => {
    instance.on("response", (_client: unknown, status: number) => {
      responses++;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (responses === 3000) {
        responsesAtSignal = responses;
        server.child.kill("SIGTERM");
        resolve();
      }
    });
  });
  instance.on("reqError", (error: NodeJS.ErrnoException) => {
    const code = error.code ?? error.message;
    errors.set(code, (errors.get(code) ?? 0) + 1);
  });

  await signalledAt;
  // Printed once the listening socket is closed, so a connection attempted now must be refused.
  await server.line(/^SIGTERM: stopped accepting connections; finishing requests in flight$/);
  // Still running (the unfinished request holds it), and no longer accepting.
  const probe = net.connect(port, "127.0.0.1");
  const [probeError] = (await once(probe, "error")) as [NodeJS.ErrnoException];
  t.equal(probeError.code, "ECONNREFUSED", "a new connection is refused");
  t.equal(server.child.exitCode, null, "while the server is still finishing");

  // The unfinished request completes and is answered, and its connection closes.
  const answered = readUntil(partial, '"The server is up."}');
  partial.write("\r\n");
  const partialResponse = await answered;
  t.match(partialResponse, /^HTTP\/1\.1 200 OK\r\n/, "the request in progress at the signal is answered");
  t.match(partialResponse, /\r\nConnection: close\r\n/i, "with Connection: close");
  await once(partial, "close");

  // Only a bound on a hang: a server that waited for its grace would wait an hour.
  const code = await happens(t, server.exited(), "the server exits by itself once its requests are done", 60_000);
  t.equal(code, 0, "exit code 0");

  instance.stop();
  const result = await finished;
  const usage = server.lines.find((l) => l.startsWith("requests per API version:"));
  const routed = Number(/\bv2=(\d+)/.exec(usage ?? "")?.[1] ?? "NaN");
  t.equal(routed, responses + 1, `every request the server routed (${routed}) got a whole response (${responses} to autocannon, 1 to the unfinished request)`);
  t.ok(responses > responsesAtSignal, `requests in flight at the signal were answered (${responses - responsesAtSignal} after it)`);
  t.same([...statuses.keys()], [200], "every response is a 200");
  t.same([...errors.keys()], ["ECONNREFUSED"], `the only client errors are refused connections: ${JSON.stringify(Object.fromEntries(errors))}`);
  t.equal(result.timeouts, 0, "no timeouts");
  t.equal(result.resets, 0, "no resets");
});
