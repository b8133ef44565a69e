// The listening side: accepts sockets, gives each a Connection, keeps time for
// all of them with one sweep, and shuts down gracefully.

import net from "node:net";
import type { AddressInfo } from "node:net";
import { Connection, DEFAULT_CONNECTION_OPTIONS, type ConnectionOptions, type Exchange, type Handler } from "./connection.js";
import { DEFAULT_LIMITS, type ParserLimits } from "./parser.js";
import type { Request } from "./request.js";

export interface ServerOptions extends Partial<Omit<ConnectionOptions, "limits">> {
  readonly limits?: Partial<ParserLimits>;
  /** One call per response, for the access log. */
  readonly onExchange?: (exchange: Exchange) => void;
  /** A handler failed; the client got a 500 without details. Defaults to console.error. */
  readonly onHandlerError?: (error: unknown, request: Request | null) => void;
}

export interface HttpServer {
  listen(port: number, host: string): Promise<AddressInfo>;
  /**
   * Stop accepting, let requests in flight finish, close idle connections;
   * after `graceMs` close whatever is left. Resolves when every connection is gone.
   */
  close(graceMs?: number): Promise<void>;
  /** Connections currently open. */
  readonly connections: number;
}

function logHandlerError(error: unknown, request: Request | null): void {
  const where = request === null ? "" : ` while handling ${request.method} ${request.target}`;
  console.error(`startline: handler error${where}:`, error);
}

export function createServer(handler: Handler, options: ServerOptions = {}): HttpServer {
  const d = DEFAULT_CONNECTION_OPTIONS;
  const connectionOptions: ConnectionOptions = {
    limits: { ...DEFAULT_LIMITS, ...options.limits },
    headersTimeoutMs: options.headersTimeoutMs ?? d.headersTimeoutMs,
    bodyTimeoutMs: options.bodyTimeoutMs ?? d.bodyTimeoutMs,
    keepAliveTimeoutMs: options.keepAliveTimeoutMs ?? d.keepAliveTimeoutMs,
    maxPipelined: options.maxPipelined ?? d.maxPipelined,
    lingerMs: options.lingerMs ?? d.lingerMs,
  };
  const onExchange = options.onExchange ?? (() => {});
  const live = new Set<Connection>();
  const hooks = {
    onExchange,
    onHandlerError: options.onHandlerError ?? logHandlerError,
    onClose(connection: Connection) {
      live.delete(connection);
      if (live.size === 0) allClosed?.();
    },
  };
  let allClosed: (() => void) | null = null;

  // allowHalfOpen: a client that half-closes after its last request still gets its
  // responses; the connection ends its side itself once they are written.
  const server = net.createServer({ noDelay: true, allowHalfOpen: true }, (socket) => {
    live.add(new Connection(socket, handler, connectionOptions, hooks));
  });
  // A client that connects and vanishes is not the server's problem.
  server.on("error", (error) => console.error("startline: server error:", error));

  // One timer keeps time for every connection: cheaper than a timer per socket,
  // and precise to a quarter of the shortest timeout.
  const shortest = Math.min(
    connectionOptions.headersTimeoutMs,
    connectionOptions.bodyTimeoutMs,
    connectionOptions.keepAliveTimeoutMs,
    connectionOptions.lingerMs,
  );
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const connection of live) connection.checkDeadline(now);
  }, Math.max(5, Math.min(1000, shortest / 4)));
  sweep.unref();

  return {
    listen(port, host) {
      return new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => {
          server.off("error", reject);
          resolve(server.address() as AddressInfo);
        });
      });
    },
    close(graceMs = 10_000) {
      return new Promise((resolve) => {
        const finish = () => {
          clearInterval(sweep);
          clearTimeout(force);
          resolve();
        };
        server.close();
        const force = setTimeout(() => {
          for (const connection of live) connection.destroy();
        }, graceMs);
        force.unref();
        if (live.size === 0) return finish();
        allClosed = finish;
        for (const connection of live) connection.drain();
      });
    },
    get connections() {
      return live.size;
    },
  };
}
