// Test-side tools for looking at raw HTTP bytes: a minimal response splitter
// (the framings this server writes: Content-Length, and chunked for a
// streamed body) and helpers to run a server on a free loopback port and talk
// to it over a real socket.

import net from "node:net";
import { once } from "node:events";
import type { Handler, Service } from "../../src/http/connection/service.js";
import { createServer, type HttpServer, type ServerOptions } from "../../src/http/connection/server.js";

export interface RawResponse {
  readonly statusLine: string;
  readonly status: number;
  /** Lower-cased names; repeated fields keep the last value. */
  readonly headers: Record<string, string>;
  /** Field names in the order written, as written. */
  readonly fieldOrder: string[];
  readonly body: string;
}

/**
 * Split a byte stream of responses. `headRequests` lists, per response, whether
 * it answers a HEAD (no body despite Content-Length).
 */
export function splitResponses(bytes: Buffer, headRequests: readonly boolean[] = []): RawResponse[] {
  const out: RawResponse[] = [];
  let pos = 0;
  while (pos < bytes.length) {
    const end = bytes.indexOf("\r\n\r\n", pos, "latin1");
    if (end === -1) throw new Error(`Incomplete response head at byte ${pos}: ${bytes.subarray(pos).toString("latin1")}`);
    const lines = bytes.toString("latin1", pos, end).split("\r\n");
    const statusLine = lines[0]!;
    const status = Number(statusLine.split(" ")[1]);
    const headers: Record<string, string> = {};
    const fieldOrder: string[] = [];
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(":");
      const name = line.slice(0, colon);
      fieldOrder.push(name);
      headers[name.toLowerCase()] = line.slice(colon + 1).trim();
    }
    pos = end + 4;
    let length = 0;
    const isHead = status >= 200 && headRequests[out.filter((r) => r.status >= 200).length] === true;
    const withBody = !isHead && status >= 200 && status !== 204 && status !== 304;
    if (withBody && headers["transfer-encoding"] === "chunked") {
      const { content, next } = dechunk(bytes, pos);
      pos = next;
      out.push({ statusLine, status, headers, fieldOrder, body: content.toString("utf8") });
      continue;
    }
    if (withBody && headers["content-length"] !== undefined) length = Number(headers["content-length"]);
    const body = bytes.toString("utf8", pos, pos + length);
    pos += length;
    out.push({ statusLine, status, headers, fieldOrder, body });
  }
  return out;
}

/**
 * A chunked body (RFC 9112 §7.1) from `start`: its content, and where the
 * message ends. Throws when the last chunk never came (a cut stream).
 */
export function dechunk(bytes: Buffer, start: number): { content: Buffer; next: number } {
  const parts: Buffer[] = [];
  let pos = start;
  for (;;) {
    const eol = bytes.indexOf("\r\n", pos, "latin1");
    if (eol === -1) throw new Error(`Chunked body cut short at byte ${pos}: no last chunk`);
    const size = parseInt(bytes.toString("latin1", pos, eol).split(";")[0]!, 16);
    if (!Number.isInteger(size) || eol + 2 + size + 2 > bytes.length) throw new Error(`Chunked body cut short at byte ${pos}: no last chunk`);
    if (size === 0) {
      const trailerEnd = bytes.indexOf("\r\n", eol + 2, "latin1"); // no trailer fields: the empty line follows
      if (trailerEnd !== eol + 2) throw new Error(`Chunked body: unexpected trailer at byte ${eol + 2}`);
      return { content: Buffer.concat(parts), next: trailerEnd + 2 };
    }
    parts.push(bytes.subarray(eol + 2, eol + 2 + size));
    pos = eol + 2 + size + 2;
  }
}

export interface Running {
  readonly server: HttpServer;
  readonly port: number;
  close(): Promise<void>;
}

export async function listen(handler: Handler | Service, options: ServerOptions = {}): Promise<Running> {
  const server = createServer(handler, { onHandlerError: () => {}, ...options });
  const address = await server.listen(0, "127.0.0.1");
  return { server, port: address.port, close: () => server.close(1000) };
}

/**
 * Resolves once the server's count of open connections satisfies `ok` (a
 * socket is counted in at its accept and out when the server sees it close,
 * neither of which the client sees). Looks every 5 ms, on timers that do not
 * keep the process alive: a count that never comes is reported by happens(),
 * and does not hold the file open after it.
 */
export async function connectionsCount(server: { readonly connections: number }, ok: (n: number) => boolean): Promise<void> {
  while (!ok(server.connections)) await new Promise((resolve) => setTimeout(resolve, 5).unref());
}

/** Open a connection, send `chunks` (each its own write), and collect everything until the server closes. */
export async function talk(port: number, chunks: readonly (string | Buffer)[], opts: { halfClose?: boolean } = {}): Promise<Buffer> {
  const socket = net.connect(port, "127.0.0.1");
  await once(socket, "connect");
  const received = receivedUntilClose(socket);
  for (const c of chunks) socket.write(c);
  if (opts.halfClose) socket.end();
  return received;
}

/**
 * How long a wait for the server to close a connection may last before it is
 * reported as a hang: longer than the longest timeout the server has by
 * default (REQUEST_TIMEOUT_MS, 30 s), so a close that a timeout brings still
 * comes within it; far shorter than the runner's own limit, which would
 * report only that a file timed out. A bound on a hang, not on speed.
 */
export const CLOSE_HANG_MS = 60_000;

/**
 * Everything an open `socket` receives from now until it closes. A close that
 * has not come after `hangMs` fails with what was received so far (and the
 * socket is destroyed), rather than leaving the test to the runner's timeout.
 */
export async function receivedUntilClose(socket: net.Socket, hangMs = CLOSE_HANG_MS): Promise<Buffer> {
  const received: Buffer[] = [];
  socket.on("data", (d: Buffer) => received.push(d));
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      socket.destroy();
      const got = Buffer.concat(received).toString("latin1");
      reject(new Error(`hang: the server has not closed the connection ${hangMs / 1000} s on; it sent ${got.length} bytes: ${JSON.stringify(got.slice(0, 400))}`));
    }, hangMs);
    timer.unref();
  });
  try {
    await Promise.race([once(socket, "close"), hung]);
  } finally {
    clearTimeout(timer);
  }
  return Buffer.concat(received);
}

/** Wait until `bytes` contains `needle` on a socket that stays open. */
export function readUntil(socket: net.Socket, needle: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = "";
    const onData = (d: Buffer) => {
      seen += d.toString("latin1");
      if (seen.includes(needle)) {
        socket.off("data", onData);
        socket.off("close", onClose);
        resolve(seen);
      }
    };
    const onClose = () => reject(new Error(`Connection closed before ${JSON.stringify(needle)}; got ${JSON.stringify(seen)}`));
    socket.on("data", onData);
    socket.on("close", onClose);
  });
}
