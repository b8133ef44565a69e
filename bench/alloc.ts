// Bytes allocated per request on the hot path, measured in process.
//
//   npm run --silent build && node --expose-gc --max-semi-space-size=1024 dist/bench/alloc.js [--requests N] [--path /api/v1/status]
//
// Runs N pipelined requests through the real Connection (parser, router,
// handler, writer) over an in-memory stream whose output is dropped, with a
// young generation large enough that no collection runs meanwhile: the heap's
// growth divided by N is what one request allocates. Figures for the status
// endpoint are in bench/README.md.

import { Duplex } from "node:stream";
import { createApp } from "../src/app.js";
import { Connection, DEFAULT_CONNECTION_OPTIONS } from "../src/http/connection.js";
import { DEFAULT_LIMITS } from "../src/http/limits.js";
import { createMemoryStore } from "../src/store/memory.js";
import { seed } from "../src/store/seed.js";

const maybeGc = (globalThis as { gc?: () => void }).gc;
if (maybeGc === undefined) throw new Error("run with node --expose-gc --max-semi-space-size=1024");
const gc: () => void = maybeGc;

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : process.argv[i + 1]!;
}

async function main(): Promise<void> {
  const requests = Number(option("--requests", "20000"));
  const path = option("--path", "/api/v1/status");
  const store = createMemoryStore();
  await seed(store);
  const app = createApp({ store });
  const request = Buffer.from(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: alloc\r\nAccept: */*\r\n\r\n`, "latin1");

  const run = (n: number) =>
    new Promise<void>((resolve) => {
      let answered = 0;
      const wire = new Duplex({
        read() {},
        write(_chunk, _encoding, callback) {
          callback();
        },
        writev(_chunks, callback) {
          callback();
        },
      });
      new Connection(wire, app, { ...DEFAULT_CONNECTION_OPTIONS, limits: DEFAULT_LIMITS, maxPipelined: n + 1 }, {
        onExchange: () => {
          if (++answered === n) resolve();
        },
        onHandlerError: (e) => console.error(e),
        onClose: () => {},
      });
      // Reads of about 64 KiB, as a socket would deliver them.
      const perRead = Math.max(1, Math.floor(65536 / request.length));
      for (let sent = 0; sent < n; sent += perRead) wire.push(Buffer.concat(Array.from({ length: Math.min(perRead, n - sent) }, () => request)));
    });

  await run(2000); // warm up: compile the hot path
  gc();
  const before = process.memoryUsage().heapUsed;
  await run(requests);
  const after = process.memoryUsage().heapUsed;
  console.log(`${path}: ${((after - before) / requests).toFixed(0)} bytes allocated per request (${requests} pipelined requests, heap ${((after - before) / 1048576).toFixed(1)} MiB)`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
