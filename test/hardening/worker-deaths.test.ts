// A worker's death leaves no request hanging: under WORKERS=2, eight
// keep-alive clients send posts of 5 to 20 KB and read lists straight to the
// cluster while a worker is killed with SIGKILL five times
// (test/hardening/deaths.ts drives it). Requests in flight in the dead
// worker may fail, with a closed connection; every request must end,
// answered or failed, once the load stops. The bound on that wait (HANG_MS) is
// a hang detector, not a timing: before the primary handed connections over
// itself (src/cluster.ts), a connection given to a worker as it died stayed
// open in the primary, and its request never ended (2 in 10 kills;
// docs/reliability.md). It is as wide as a replacement's start: the kills
// take the older and the newer worker in turn, so one can take the only
// worker serving while the other is still starting, and then no request ends
// until that one, which boots node and opens the store, serves; on a loaded
// 2-core machine that has taken over 10 s.

import t from "tap";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { killUnderLoad, workerPids } from "./deaths.js";
import { happens } from "../helpers/hang.js";
import { startServer } from "../helpers/process.js";
import { MAX_FAILED_STARTS } from "../../src/cluster.js";

const dir = mkdtempSync(path.join(tmpdir(), "startline-deaths-"));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

/** Only a bound on a hang: a replacement worker's start, on a loaded machine, with room to spare. */
const HANG_MS = 60_000;

// Both checks run on one cluster, the quick kills first: a replacement's start is the same after five
// kills as on a first start (the primary's count of failed starts goes back to zero whenever a worker
// serves), and a cluster of its own would cost each check a primary and two workers more to start.
// The access log stays on (the quick kills tell the workers apart by it); under load it only adds lines.
t.test("one WORKERS=2 cluster, its workers killed", async (t) => {
  const server = startServer({ WORKERS: "2", DATA_DIR: dir });
  t.teardown(async () => {
    if (server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill("SIGTERM");
      await server.exited();
    }
  });
  const port = Number(new URL(await server.url()).port);
  const replacements = () => server.lines.filter((l) => /exited \(SIGKILL\); starting a replacement$/.test(l)).length;

  await t.test("a worker killed as soon as it serves is replaced every time: dying after serving is not a failure to start", async (t) => {
    // As many workers in a row as the primary's bound on failed starts (five), each killed right after its
    // first answer, each younger than a second or two: the primary once counted such deaths as a crash loop
    // and gave up at the fifth, closing the port. Each kill more costs a worker's start (0.4 s of CPU) and
    // proves nothing more: the count only grows.
    // The access log (not QUIET) names the worker of each answer: w1, w2, then w3 for the first replacement...
    // The primary holds the port and hands each new connection to the next serving worker in turn.
    const status = async () => {
      const response = await fetch(`http://127.0.0.1:${port}/api/v2/status`, { headers: { Connection: "close" }, signal: AbortSignal.timeout(HANG_MS) });
      await response.arrayBuffer();
      return response.status;
    };
    const answeredBy = (id: number) => server.lines.some((l) => l.startsWith(`w${id} `));
    const kills = MAX_FAILED_STARTS;
    // A replacement boots node, loads the server and opens the store before it serves: on a loaded 2-core
    // machine that has taken over 10 s, so these hang bounds are wider than the default (they only catch a hang).
    const startBound = HANG_MS;
    // The primary says when a replacement takes connections; one that gave up would exit instead
    // ("exit", not "close": a worker still alive holds the output pipes open).
    const gaveUp = new Promise<never>((_, reject) =>
      server.child.once("exit", (code) => reject(new Error(`the primary exited (${code}):\n${server.lines.join("\n")}`))),
    );
    gaveUp.catch(() => {}); // looked at only while the primary is awaited
    for (let k = 0; k < kills; k++) {
      const youngest = 2 + k;
      if (k > 0) await happens(t, Promise.race([server.line(new RegExp(`^worker ${youngest} \\(pid \\d+\\) serves, in place of one that exited$`)), gaveUp]), `the primary says worker ${youngest} serves`, startBound);
      // Asked until the youngest worker has answered one: connections go to the serving workers in turn,
      // so with both serving that takes one or two (the hang detector bounds it).
      await happens(t, (async () => {
        while (!answeredBy(youngest)) t.equal(await status(), 200);
      })(), `worker ${youngest} answers`, startBound);
      // Process ids grow: the youngest worker has the highest.
      const pids = await workerPids(server.child.pid!);
      process.kill(Math.max(...pids), "SIGKILL");
      const replaced = new Promise<void>((resolve) => {
        const seen = () => replacements() > k;
        if (seen()) return resolve();
        const stop = server.onLine(() => seen() && (stop(), resolve()));
      });
      await happens(t, Promise.race([replaced, gaveUp]), `worker ${youngest}'s death is followed by a replacement`, startBound);
    }
    t.equal(await status(), 200, "the port still answers");
    t.equal(server.child.exitCode, null, "the primary is still running");
  });

  await t.test("five workers killed under load: every request ends, and the server goes on answering", async (t) => {
    const before = replacements();
    const result = await killUnderLoad({ port, primaryPid: server.child.pid!, clients: 8, kills: 5, between: 200, hangMs: HANG_MS });
    t.equal(result.stalled, undefined, `the load never went ${HANG_MS / 1000} s without a request ending`);
    t.equal(result.killed, 5, "five workers were killed");
    t.strictSame(result.hung, [], `requests that neither got an answer nor saw their connection end, of ${result.requests}`);
    t.ok(result.answered >= 6 * 200, `${result.answered} answered, ${result.failed} ended by a connection error`);
    t.equal(replacements() - before, 5, "the primary replaced each");
    const status = await fetch(`http://127.0.0.1:${port}/api/v2/status`, { headers: { Connection: "close" }, signal: AbortSignal.timeout(HANG_MS) });
    t.equal(status.status, 200, "and the port still answers");
    await status.arrayBuffer();
  });
});
