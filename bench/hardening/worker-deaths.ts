// `npm run --silent build && node dist/bench/hardening/worker-deaths.js
// [--kills N] [--clients N] [--between N]`: a WORKERS=2 server on a fresh
// SQLite file, keep-alive clients sending posts and reading lists, and a
// worker killed with SIGKILL after every `between` answers (deaths.ts). It
// prints how many requests were answered, ended by a connection error, and
// left hanging; it exits 1 if any hung.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { killUnderLoad } from "./deaths.js";
import { startServer } from "./lib.js";

const { values } = parseArgs({
  options: {
    kills: { type: "string", default: "20" },
    clients: { type: "string", default: "8" },
    between: { type: "string", default: "300" },
  },
});
const dir = mkdtempSync(path.join(tmpdir(), "startline-deaths-"));
const server = await startServer({ WORKERS: "2", DATA_DIR: dir });
try {
  const t0 = performance.now();
  const result = await killUnderLoad({
    port: server.port,
    primaryPid: server.pid,
    clients: Number(values.clients),
    kills: Number(values.kills),
    between: Number(values.between),
    hangMs: 10_000,
  });
  const seconds = ((performance.now() - t0) / 1000).toFixed(1);
  console.log(
    `${result.killed} workers killed in ${seconds} s: ${result.requests} requests, ${result.answered} answered, ` +
      `${result.failed} ended by a connection error, ${result.hung.length} hung`,
  );
  if (result.stalled !== undefined) console.log(`stopped early: ${result.stalled}`);
  for (const h of result.hung) console.log(`  hung: ${h}`);
  process.exitCode = result.hung.length > 0 ? 1 : 0;
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
