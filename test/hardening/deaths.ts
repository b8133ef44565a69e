// Workers killed under load: keep-alive clients send requests to a WORKERS
// server while workers are killed with SIGKILL, one at a time, and every
// request must end: answered, or with a connection error (closed, reset).
// A request that gets neither is what this looks for: a client left waiting
// on a connection that nobody will ever answer or close.
//
// Each client alternates `POST /api/v1/post/:id` (a 5 to 20 KB body) and
// `GET /api/v1/posts?limit=20` on one connection, one request at a time, and
// opens a new connection when its connection ends. A kill comes after every
// `between` answers; after the last one, and `between` answers more, the
// clients stop sending, and every request still open gets `hangMs` to end.
// Used by test/hardening/worker-deaths.test.ts (five kills).

import net from "node:net";
import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface DeathsOptions {
  readonly port: number;
  /** The primary: its children are the workers. */
  readonly primaryPid: number;
  readonly clients: number;
  readonly kills: number;
  /** Answers between two kills. */
  readonly between: number;
  /** How long a request may stay open once the clients stop, and how long the load may go without any request ending. */
  readonly hangMs: number;
}

export interface DeathsResult {
  readonly requests: number;
  readonly answered: number;
  /** Ended by a connection error: closed, reset, refused. */
  readonly failed: number;
  /** Requests that had not ended `hangMs` after they should have, described. */
  readonly hung: readonly string[];
  /** Workers killed (fewer than asked when the load stalled first). */
  readonly killed: number;
  /** Why the run stopped early, if it did. */
  readonly stalled?: string;
}

interface Open {
  readonly what: string;
  readonly at: number;
}

/** The end of the first whole response in `buf` (Content-Length or chunked), or -1. */
export function responseEnd(buf: Buffer): number {
  const headEnd = buf.indexOf("\r\n\r\n");
  if (headEnd === -1) return -1;
  const head = buf.subarray(0, headEnd).toString("latin1");
  let at = headEnd + 4;
  const status = Number(head.slice(9, 12));
  if (status === 204 || status === 304) return at;
  const length = /\r\ncontent-length:[ \t]*(\d+)/i.exec(head);
  if (length !== null) return buf.length >= at + Number(length[1]) ? at + Number(length[1]) : -1;
  if (!/\r\ntransfer-encoding:[^\r]*chunked/i.test(head)) throw new Error(`a response with no framing this reader knows: ${head.split("\r\n")[0]}`);
  for (;;) {
    const lineEnd = buf.indexOf("\r\n", at);
    if (lineEnd === -1) return -1;
    const size = parseInt(buf.subarray(at, lineEnd).toString("latin1"), 16);
    if (size === 0) {
      // No trailers from this server: the last chunk is followed by the empty line.
      return buf.length >= lineEnd + 4 ? lineEnd + 4 : -1;
    }
    at = lineEnd + 2 + size + 2;
    if (buf.length < at) return -1;
  }
}

function post(client: number, n: number): { what: string; bytes: string } {
  const size = 5_000 + ((client * 7919 + n * 104_729) % 15_001); // 5 to 20 KB, varied
  const body = JSON.stringify({ title: `post ${n} of client ${client}`, body: "x".repeat(size) });
  const id = `c${client}-${n}`;
  return {
    what: `POST /api/v1/post/${id} (${body.length} bytes)`,
    bytes: `POST /api/v1/post/${id} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
  };
}

const LIST = { what: "GET /api/v1/posts?limit=20", bytes: "GET /api/v1/posts?limit=20 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" };

export async function workerPids(primaryPid: number): Promise<number[]> {
  try {
    const { stdout } = await run("pgrep", ["-P", String(primaryPid)]);
    return stdout.trim().split("\n").filter(Boolean).map(Number);
  } catch {
    return []; // pgrep exits 1 when there is none
  }
}

export async function killUnderLoad(options: DeathsOptions): Promise<DeathsResult> {
  const open = new Set<Open>();
  const sockets = new Set<net.Socket>();
  let requests = 0;
  let answered = 0;
  let failed = 0;
  let sending = true;
  let progress: (() => void) | null = null;
  const ended = () => progress?.();

  /** One client: a request at a time on a keep-alive connection, a new connection when it ends. */
  const client = (id: number): Promise<void> =>
    new Promise((done) => {
      let n = 0;
      let socket: net.Socket;
      let current: Open | null = null;
      let buf: Buffer = Buffer.alloc(0);
      const next = () => {
        if (!sending) {
          socket.destroy();
          return done();
        }
        const request = n % 2 === 0 ? post(id, n) : LIST;
        n++;
        current = { what: `client ${id}, request ${n}: ${request.what} [local port ${socket.localPort}]`, at: Date.now() };
        open.add(current);
        requests++;
        socket.write(request.bytes);
      };
      const connect = () => {
        buf = Buffer.alloc(0);
        socket = net.connect(options.port, "127.0.0.1");
        sockets.add(socket);
        socket.on("connect", next);
        socket.on("data", (d: Buffer) => {
          buf = buf.length === 0 ? d : Buffer.concat([buf, d]);
          const end = responseEnd(buf);
          if (end === -1 || current === null) return;
          buf = buf.subarray(end);
          open.delete(current);
          current = null;
          answered++;
          ended();
          next();
        });
        socket.on("error", () => {}); // "close" follows, and says it
        socket.on("close", () => {
          sockets.delete(socket);
          if (current !== null) {
            open.delete(current);
            current = null;
            failed++;
            ended();
          }
          if (!sending) return done();
          connect();
        });
      };
      connect();
    });

  const clients = Array.from({ length: options.clients }, (_, i) => client(i));

  /** Resolves once `count` more requests have been answered; rejects when none ends for hangMs. */
  const answers = (count: number) =>
    new Promise<void>((resolve, reject) => {
      const target = answered + count;
      let timer = setTimeout(stall, options.hangMs);
      function stall() {
        progress = null;
        reject(new Error(`no request ended for ${options.hangMs} ms (${answered} answered so far)`));
      }
      progress = () => {
        clearTimeout(timer);
        if (answered >= target) {
          progress = null;
          return resolve();
        }
        timer = setTimeout(stall, options.hangMs);
      };
    });

  let killed = 0;
  let stalled: string | undefined;
  try {
    for (; killed < options.kills; killed++) {
      await answers(options.between);
      const pids = await workerPids(options.primaryPid);
      if (pids.length === 0) throw new Error("no worker to kill");
      process.kill(pids[killed % pids.length]!, "SIGKILL");
    }
    await answers(options.between);
  } catch (error) {
    stalled = (error as Error).message;
  }
  sending = false;

  // Every request still open must end within hangMs: answered, or its connection closed.
  const settled = Promise.all(clients).then(() => true);
  let timer: NodeJS.Timeout | undefined;
  const bounded = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), options.hangMs)));
  await Promise.race([settled, bounded]);
  clearTimeout(timer);
  const now = Date.now();
  const hung = [...open].map((o) => `${o.what}, open for ${now - o.at} ms`);
  for (const socket of sockets) socket.destroy();
  return { requests, answered, failed, hung, killed, ...(stalled === undefined ? {} : { stalled }) };
}
