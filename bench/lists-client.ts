// The client side of bench/lists.ts: a startline process on a data
// directory, one list read as fast as the socket allows (time to first body
// byte, total time, bytes), requests one after another on a keep-alive
// connection (latency of each), RSS sampled while something runs, and curl
// processes reading lists beside it.

import { spawn, type ChildProcess } from "node:child_process";
import net from "node:net";
import { once } from "node:events";
import { withoutSettings } from "../src/config.js";
import { STARTLINE_MAIN } from "./paths.js";
import { procStatus } from "./proc.js";

export interface Server {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly port: number;
  stop(): Promise<void>;
}

/** startline on `dataDir` (SQLite), quiet, on a free port of 127.0.0.1. */
export async function startStartline(dataDir: string, env: Readonly<Record<string, string>> = {}): Promise<Server> {
  const { NODE_OPTIONS: _hook, ...inherited } = withoutSettings(process.env);
  const child = spawn(process.execPath, [STARTLINE_MAIN], {
    env: { ...inherited, DATA_DIR: dataDir, PORT: "0", HOST: "127.0.0.1", QUIET: "1", ADMIN_TOKEN: "bench-lists-admin-token-0001", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const port = await new Promise<number>((resolve, reject) => {
    const onData = (d: Buffer) => {
      output += d.toString();
      const m = /listening on http:\/\/[^:]+:(\d+)/.exec(output);
      if (m !== null) resolve(Number(m[1]));
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => reject(new Error(`startline exited (${code}) before listening: ${output}`)));
  });
  child.stdout!.resume();
  child.stderr!.resume();
  return {
    child,
    pid: child.pid!,
    port,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill("SIGTERM");
      await once(child, "exit");
    },
  };
}

export interface Transfer {
  /** From sending the request to the head's first byte, ms. */
  readonly headMs: number;
  /** From sending the request to the first byte of the body, ms. */
  readonly firstBodyByteMs: number;
  readonly totalMs: number;
  /** Bytes received, head and framing included. */
  readonly bytes: number;
}

/** One GET on its own connection (Connection: close), read as fast as it comes. */
export function readWhole(port: number, target: string, headers: Readonly<Record<string, string>> = {}): Promise<Transfer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    let sent = 0;
    let head = -1;
    let firstBody = -1;
    let bytes = 0;
    let tail = "";
    let headDone = false;
    socket.on("connect", () => {
      let request = `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n`;
      for (const [name, value] of Object.entries(headers)) request += `${name}: ${value}\r\n`;
      sent = performance.now();
      socket.write(request + "\r\n");
    });
    socket.on("data", (d: Buffer) => {
      const now = performance.now();
      if (head < 0) head = now;
      if (headDone) {
        if (firstBody < 0) firstBody = now;
      } else {
        const text = tail + d.toString("latin1");
        const end = text.indexOf("\r\n\r\n");
        headDone = end >= 0;
        if (headDone && text.length > end + 4) firstBody = now;
        tail = text.slice(-3);
      }
      bytes += d.length;
    });
    socket.on("error", reject);
    socket.on("close", () => resolve({ headMs: head - sent, firstBodyByteMs: firstBody - sent, totalMs: performance.now() - sent, bytes }));
  });
}

/** A keep-alive connection that sends one request at a time and times each answer (Content-Length, chunked or 304). */
export class Sequential {
  private buf: Buffer = Buffer.alloc(0);
  private wake: (() => void) | null = null;
  private constructor(private readonly socket: net.Socket) {
    socket.on("data", (d: Buffer) => {
      this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
      this.wake?.();
    });
    socket.on("close", () => this.wake?.());
  }

  static async open(port: number): Promise<Sequential> {
    const socket = net.connect(port, "127.0.0.1");
    socket.setNoDelay(true);
    await once(socket, "connect");
    return new Sequential(socket);
  }

  /** Sends one GET and resolves with its latency in ms once the whole answer is in. */
  async get(target: string, headers: Readonly<Record<string, string>> = {}): Promise<{ ms: number; status: number; link?: string }> {
    let request = `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n`;
    for (const [name, value] of Object.entries(headers)) request += `${name}: ${value}\r\n`;
    const sent = performance.now();
    this.socket.write(request + "\r\n");
    for (;;) {
      const done = this.parse();
      if (done !== undefined) return { ms: performance.now() - sent, ...done };
      if (this.socket.destroyed) throw new Error(`connection closed while waiting for ${target}`);
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = null;
    }
  }

  close(): void {
    this.socket.destroy();
  }

  /** One whole response off the front of the buffer, if it is all there. */
  private parse(): { status: number; link?: string } | undefined {
    const headEnd = this.buf.indexOf("\r\n\r\n");
    if (headEnd < 0) return undefined;
    const head = this.buf.toString("latin1", 0, headEnd);
    const status = Number(head.split(" ")[1]);
    const link = /\r\nLink: ([^\r]*)/i.exec(head)?.[1];
    let end = headEnd + 4;
    const length = /\r\nContent-Length: (\d+)/i.exec(head);
    if (/\r\nTransfer-Encoding: chunked/i.test(head)) {
      for (;;) {
        const eol = this.buf.indexOf("\r\n", end);
        if (eol < 0) return undefined;
        const size = parseInt(this.buf.toString("latin1", end, eol), 16);
        if (this.buf.length < eol + 2 + size + 2) return undefined;
        end = eol + 2 + size + 2;
        if (size === 0) break;
      }
    } else if (length !== null) {
      end += Number(length[1]);
      if (this.buf.length < end) return undefined;
    }
    this.buf = this.buf.subarray(end);
    return link === undefined ? { status } : { status, link };
  }
}

/** Samples a process's RSS every `everyMs` until stopped; resolves with the largest seen, in KiB. */
export function sampleRss(pid: number, everyMs = 10): { stop(): number } {
  let peak = procStatus(pid).rssKiB;
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, procStatus(pid).rssKiB);
    } catch {
      // the process is gone: keep what was seen
    }
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return peak;
    },
  };
}

/**
 * curl reading a list to /dev/null in a process of its own: `spawned` once
 * it runs (spawning blocks this process's event loop for some milliseconds,
 * so a measurement here should not overlap it), `done` with curl's own
 * timings (s) and size.
 */
export function curlList(port: number, target: string, accept = "application/json"): { spawned: Promise<void>; done: Promise<{ firstByteS: number; totalS: number; bytes: number }> } {
  const child = spawn("curl", ["-s", "-o", "/dev/null", "-H", `Accept: ${accept}`, "-w", "%{time_starttransfer} %{time_total} %{size_download} %{http_code}", `http://127.0.0.1:${port}${target}`]);
  const spawned = once(child, "spawn").then(() => undefined);
  const done = new Promise<{ firstByteS: number; totalS: number; bytes: number }>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.once("error", reject);
    child.once("exit", (code) => {
      const [first, total, size, status] = out.trim().split(" ");
      if (code !== 0 || status !== "200") reject(new Error(`curl ${target}: exit ${code}, ${out}`));
      else resolve({ firstByteS: Number(first), totalS: Number(total), bytes: Number(size) });
    });
  });
  return { spawned, done };
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
