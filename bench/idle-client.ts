// The client side of the idle-connections scenarios: a process of its own,
// pinned to the load generator's core with a limit on open files raised for
// the connections (bench/launch.ts starts it), that opens `connections`
// connections to the server (at most 100 being opened at a time), sends one
// request on each and reads its answer, then keeps them all open and silent.
//
//   node dist/bench/idle-client.js PORT CONNECTIONS REQUEST_JSON
//
// It prints one JSON line (IdleOpened) once they are all open, holds them
// until its stdin ends, then closes them and prints a second line
// (IdleClosed): how many the server had closed before that, which must be 0.

import net from "node:net";
import { formatRequest } from "./probe.js";
import { openFilesLimit } from "./proc.js";
import type { RequestSpec } from "./scenarios.js";

export interface IdleOpened {
  /** Connections open and answered, now idle. */
  readonly open: number;
  /** Connections that failed (refused, reset, timed out, closed before their answer). */
  readonly failed: number;
  /** Answers that were not 2xx. */
  readonly non2xx: number;
  /** The first few failures, for the report. */
  readonly errors: readonly string[];
  readonly openingMs: number;
  /** This process's limit on open files: it must hold the connections. */
  readonly openFilesLimit: number;
}

export interface IdleClosed {
  /** Idle connections that the server closed (or reset) before the end. */
  readonly closedEarly: number;
  /** Connections closed at the end. */
  readonly closed: number;
}

const CONCURRENCY = 100;
const TIMEOUT_MS = 10_000;

interface Idle {
  readonly socket: net.Socket;
  closedEarly: boolean;
}

let closing = false;

/** Opens one connection, sends the request, reads the answer (framed by Content-Length); resolves with its status code. */
function openOne(port: number, raw: Buffer): Promise<{ idle: Idle; status: number }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    const entry: Idle = { socket, closedEarly: false };
    let received: Buffer = Buffer.alloc(0);
    let answered = false;
    const timer = setTimeout(() => fail(new Error(`no answer within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
    function fail(error: Error): void {
      clearTimeout(timer);
      socket.destroy();
      reject(error);
    }
    socket.on("connect", () => socket.write(raw));
    socket.on("error", (error) => {
      if (!answered) fail(error);
    });
    socket.on("close", () => {
      if (!answered) fail(new Error("closed before the answer"));
      else if (!closing) entry.closedEarly = true;
    });
    socket.on("data", (chunk: Buffer) => {
      if (answered) return; // nothing more is expected; counted as an early close if the server gives up on us
      received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
      const headEnd = received.indexOf("\r\n\r\n");
      if (headEnd < 0) return;
      const head = received.subarray(0, headEnd).toString("latin1");
      const length = /\r\ncontent-length:[ \t]*(\d+)/i.exec(head);
      if (length === null) return fail(new Error("an answer without Content-Length"));
      if (received.length < headEnd + 4 + Number(length[1])) return;
      answered = true;
      clearTimeout(timer);
      received = Buffer.alloc(0);
      resolve({ idle: entry, status: Number(head.split(" ", 2)[1]) });
    });
  });
}

async function main(port: number, connections: number, request: RequestSpec): Promise<void> {
  const started = process.hrtime.bigint();
  const raw = formatRequest(request, `127.0.0.1:${port}`);
  const idle: Idle[] = [];
  let next = 0;
  let failed = 0;
  let non2xx = 0;
  const errors: string[] = [];
  const worker = async () => {
    while (next < connections) {
      next++;
      try {
        const { idle: entry, status } = await openOne(port, raw);
        idle.push(entry);
        if (status < 200 || status > 299) non2xx++;
      } catch (error) {
        failed++;
        if (errors.length < 5) errors.push(error instanceof Error ? error.message : String(error));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, connections) }, worker));
  const opened: IdleOpened = {
    open: idle.filter((e) => !e.closedEarly).length,
    failed,
    non2xx,
    errors,
    openingMs: Number(process.hrtime.bigint() - started) / 1e6,
    openFilesLimit: openFilesLimit(process.pid),
  };
  process.stdout.write(JSON.stringify(opened) + "\n");
  process.stdin.resume();
  await new Promise((resolve) => process.stdin.once("end", resolve));
  closing = true;
  const closedEarly = idle.filter((e) => e.closedEarly).length;
  await Promise.all(
    idle.map(
      ({ socket }) =>
        new Promise<void>((resolve) => {
          if (socket.destroyed && socket.closed) return resolve();
          socket.once("close", () => resolve());
          socket.destroy();
        }),
    ),
  );
  const closed: IdleClosed = { closedEarly, closed: idle.length };
  process.stdout.write(JSON.stringify(closed) + "\n");
}

const [port, connections, request] = process.argv.slice(2);
await main(Number(port), Number(connections), JSON.parse(request!) as RequestSpec);
