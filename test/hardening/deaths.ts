// Workers killed under load: keep-alive clients send requests to a WORKERS
// server while workers are killed with SIGKILL, one at a time, and every
// request must end: answered, or with a connection error (closed, reset).
// A request that gets neither is what this looks for: a client left waiting
// on a connection that nobody will ever answer or close.
//
// Each client alternates `POST /api/v1/post/:id` (a 5 to 20 KB body) and
// `GET /api/v1/posts?limit=5` (25 to 100 KB, many TCP segments) on one
// connection, one request at a time, and opens a new connection when its
// connection ends. Lists of twenty made each answer four times as costly
// to make and read, for no other kind of ending: what is looked for is a
// request that never ends, not one that ends late. A kill comes after every
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

/**
 * The ends of responses on one connection, found as their bytes come (Content-Length or chunked; no
 * trailers from this server), without joining the pieces: a list of posts comes in many of
 * them, and joining what had come at every piece cost more CPU than all the rest this test does.
 */
export class ResponseEnds {
  /** Reading the head; a body of `left` more bytes; a chunk-size line; a chunk (and its CRLF) of `left` more; the closing CRLF. */
  private state: "head" | "body" | "size" | "chunk" | "last" = "head";
  private head = "";
  private line = "";
  private left = 0;

  /** How many responses ended in `piece`. */
  feed(piece: Buffer): number {
    let ended = 0;
    let at = 0;
    while (at < piece.length) {
      if (this.state === "head") {
        const seen = this.head.length;
        this.head += piece.toString("latin1", at);
        const end = this.head.indexOf("\r\n\r\n", Math.max(0, seen - 3));
        if (end === -1) return ended;
        at += end + 4 - seen;
        ended += this.begin(this.head.slice(0, end));
        this.head = "";
      } else if (this.state === "size") {
        const nl = piece.indexOf(0x0a, at);
        this.line += piece.toString("latin1", at, nl === -1 ? piece.length : nl + 1);
        if (nl === -1) return ended;
        at = nl + 1;
        const size = parseInt(this.line, 16);
        this.line = "";
        this.state = size === 0 ? "last" : "chunk";
        this.left = size === 0 ? 2 : size + 2;
      } else {
        const taken = Math.min(this.left, piece.length - at);
        at += taken;
        this.left -= taken;
        if (this.left > 0) return ended;
        if (this.state === "chunk") this.state = "size";
        else {
          this.state = "head";
          ended++;
        }
      }
    }
    return ended;
  }

  /** Reads a head: 1 when the response ends with it, else 0 and what its body is. */
  private begin(head: string): number {
    const status = Number(head.slice(9, 12));
    if (status === 204 || status === 304) return 1;
    const length = /\r\ncontent-length:[ \t]*(\d+)/i.exec(head);
    if (length !== null) {
      this.left = Number(length[1]);
      if (this.left === 0) return 1;
      this.state = "body";
      return 0;
    }
    if (!/\r\ntransfer-encoding:[^\r]*chunked/i.test(head)) throw new Error(`a response with no framing this reader knows: ${head.split("\r\n")[0]}`);
    this.state = "size";
    return 0;
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

const LIST = { what: "GET /api/v1/posts?limit=5", bytes: "GET /api/v1/posts?limit=5 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" };

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
      let ends = new ResponseEnds();
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
        ends = new ResponseEnds();
        socket = net.connect(options.port, "127.0.0.1");
        sockets.add(socket);
        socket.on("connect", next);
        socket.on("data", (d: Buffer) => {
          // One request at a time: a response that ends answers the one open.
          if (ends.feed(d) === 0 || current === null) return;
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
