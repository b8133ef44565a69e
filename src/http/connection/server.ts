// The listening side: accepts sockets, gives each a Connection, keeps time for
// all of them with one sweep, and shuts down gracefully.

import net from "node:net";
import tls from "node:tls";
import type { AddressInfo } from "node:net";
import { Connection } from "./connection.js";
import { checkMaxUnanswered, DEFAULT_CONNECTION_OPTIONS, DEFAULT_SHUTDOWN_GRACE_MS, type ConnectionOptions, type Exchange, type LiveConnection } from "./options.js";
import { asService, type Handler, type Service } from "./service.js";
import { isStreamedService, type StreamedService } from "./streamed.js";
import { checkLimits } from "../parse/limits.js";
import { DEFAULT_LIMITS, type ParserLimits } from "../parse/parser.js";
import type { Request } from "../message/request.js";
import { refuse } from "./refuse.js";
import { Turns } from "./turns.js";

export interface TlsFiles {
  /** PEM certificate chain and private key (contents, not paths). */
  readonly cert: string | Buffer;
  readonly key: string | Buffer;
}

export interface ServerOptions extends Partial<Omit<ConnectionOptions, "limits">> {
  readonly limits?: Partial<ParserLimits>;
  /** Serve HTTPS: the same connection code runs over node:tls sockets (ALPN http/1.1). */
  readonly tls?: TlsFiles;
  /** Open connections at most; past it a new connection gets a 503 and is closed (over TLS, closed before its handshake: connections in one count). */
  readonly maxConnections?: number;
  /** One call per response, for the access log. */
  readonly onExchange?: (exchange: Exchange) => void;
  /** A handler failed; the client got a 500 without details. Defaults to console.error. */
  readonly onHandlerError?: (error: unknown, request: Request | null) => void;
}


/**
 * What an operator tunes, all of it: the parser's limits, the timeouts and
 * the connection cap. The settings (src/config.ts) produce one of these and
 * hand it to createServer whole.
 */
export interface ServerSettings
  extends Pick<ConnectionOptions, "headersTimeoutMs" | "bodyTimeoutMs" | "requestTimeoutMs" | "keepAliveTimeoutMs" | "sendTimeoutMs"> {
  readonly limits: ParserLimits;
  readonly maxConnections: number;
}

export interface HttpServer {
  listen(port: number, host: string): Promise<AddressInfo>;
  /**
   * Stop accepting, let requests in flight finish, close idle connections;
   * after `graceMs` close whatever is left. Resolves when every connection it
   * serves is gone. The listening socket is closed before close() returns
   * (net.Server#close closes its handle at once), so a connection attempted
   * after that is refused. A TLS connection still in its handshake is not
   * served yet and has asked nothing: it is not waited for, and is closed
   * when its handshake ends (or fails, within the headers timeout).
   */
  close(graceMs?: number): Promise<void>;
  /**
   * Serves a connection another process accepted (under WORKERS the primary
   * accepts, and hands each connection to a worker), as if this server had
   * accepted it, TLS handshake included. After close(), the connection is closed.
   */
  adopt(socket: net.Socket): void;
  /** Connections currently open, as counted toward maxConnections (over TLS, from before the handshake). */
  readonly connections: number;
  /**
   * The listening server itself, for an interface that listens as node's
   * does (src/node/: every signature of listen(), address(), its events);
   * listening through it serves connections exactly as listen() does.
   */
  readonly listener: net.Server;
  /**
   * Close connections now, whatever is in flight ("all"), or those with
   * nothing in flight ("idle"); a connection handed over to another protocol
   * is not this server's to close.
   */
  closeConnections(which: "all" | "idle"): void;
}

function logHandlerError(error: unknown, request: Request | null): void {
  const where = request === null ? "" : ` while handling ${request.method} ${request.target}`;
  console.error(`startline: handler error${where}:`, error);
}

export function createServer(handler: Handler | Service | StreamedService, options: ServerOptions = {}): HttpServer {
  const service = isStreamedService(handler) ? handler : asService(handler);
  const turns = new Turns();
  const d = DEFAULT_CONNECTION_OPTIONS;
  const connectionOptions: ConnectionOptions = {
    limits: checkLimits({ ...DEFAULT_LIMITS, ...options.limits }),
    headersTimeoutMs: options.headersTimeoutMs ?? d.headersTimeoutMs,
    bodyTimeoutMs: options.bodyTimeoutMs ?? d.bodyTimeoutMs,
    requestTimeoutMs: options.requestTimeoutMs ?? d.requestTimeoutMs,
    keepAliveTimeoutMs: options.keepAliveTimeoutMs ?? d.keepAliveTimeoutMs,
    maxUnanswered: checkMaxUnanswered(options.maxUnanswered ?? d.maxUnanswered),
    lingerMs: options.lingerMs ?? d.lingerMs,
    sendTimeoutMs: options.sendTimeoutMs ?? d.sendTimeoutMs,
    responseFields: options.responseFields ?? d.responseFields,
    trace: options.trace,
    turns,
  };
  const maxConnections = options.maxConnections ?? Infinity;
  const secure = options.tls !== undefined;
  const live = new Set<LiveConnection>();
  /**
   * Open connections, counted from their TCP accept, over TLS too: uncounted
   * while handshaking, connections that never finish a handshake would hold
   * sockets past the cap. A plain one is its Connection from the accept on,
   * and is counted out when that closes; a TLS one, by its own socket, which
   * a failed handshake closes without a Connection ever being made.
   */
  let open = 0;
  const hooks = {
    ...(options.onExchange === undefined ? {} : { onExchange: options.onExchange }),
    onHandlerError: options.onHandlerError ?? logHandlerError,
    onClose(connection: LiveConnection) {
      live.delete(connection);
      if (!secure) open--;
      if (live.size === 0) allClosed?.();
    },
  };
  let allClosed: (() => void) | null = null;
  let closing = false;

  const serve = (socket: net.Socket) => {
    turns.arrival();
    live.add(new Connection(socket, service, connectionOptions, hooks));
  };
  // allowHalfOpen: a client that half-closes after its last request still gets its
  // responses; the connection ends its side itself once they are written.
  // Over TLS, only once the handshake is done: a client that half-closes before that can never send the
  // Finished message a handshake ends with, so its connection is closed at its FIN (node ends a socket
  // that is not half-open when its reading side ends, and the TLS socket takes the setting from the TCP
  // one) rather than held, with its place under maxConnections, until the handshake's timeout. The TLS
  // socket is made half-open when it is served, which node does as the handshake ends, before reading
  // anything after it: a FIN that follows the handshake, however closely, finds it half-open.
  // A handshake is part of getting a request's head: it gets the head's time (node's own default is 2 minutes).
  const server: net.Server = options.tls
    ? tls.createServer(
        { cert: options.tls.cert, key: options.tls.key, ALPNProtocols: ["http/1.1"], allowHalfOpen: false, handshakeTimeout: connectionOptions.headersTimeoutMs },
        (socket: tls.TLSSocket) => {
          // A handshake that ends after close(): nothing was asked on it, and nothing would time it out.
          if (closing) return void socket.destroy();
          socket.allowHalfOpen = true;
          serve(socket);
        },
      )
    : net.createServer({ noDelay: true, allowHalfOpen: true });
  // Every connection, plain or TLS, is admitted here, at its TCP accept (adopt() included).
  server.on("connection", (socket: net.Socket) => {
    if (open >= maxConnections) {
      // Past the cap: a 503, then close (over TLS, closed before its handshake: the TLS wrapper, already
      // listening, sees it fail and lets it go).
      refuse(socket, { secure, responseFields: connectionOptions.responseFields });
      return;
    }
    open++;
    if (secure) socket.once("close", () => open--);
    else serve(socket);
  });
  // A TLS handshake that fails (a plain-HTTP client on the HTTPS port, a scanner, one that times out) is the
  // client's problem, and its socket is closed here: node reports a handshake that timed out and leaves the
  // socket open, so one that connects and never finishes its handshake would otherwise be held for good.
  server.on("tlsClientError", (_error: Error, socket: tls.TLSSocket) => socket.destroy());
  // Errors while listening are the listen() promise's to report; later ones (rare: the
  // listening socket itself failing) are logged, since nobody else would see them.
  let listening = false;
  server.on("error", (error) => {
    if (listening) console.error("startline: server error:", error);
  });

  // One timer keeps time for every connection: cheaper than a timer per socket,
  // and precise to a quarter of the shortest timeout.
  const shortest = Math.min(
    connectionOptions.headersTimeoutMs,
    connectionOptions.bodyTimeoutMs,
    connectionOptions.requestTimeoutMs,
    connectionOptions.keepAliveTimeoutMs,
    connectionOptions.lingerMs,
    connectionOptions.sendTimeoutMs,
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
          listening = true;
          server.off("error", reject);
          resolve(server.address() as AddressInfo);
        });
      });
    },
    adopt(socket) {
      if (closing) return void socket.destroy();
      // A socket made from a handle sent by another process has default options, not the server's
      // (over TLS, not half-open until the handshake is done: see createServer above).
      socket.allowHalfOpen = !secure;
      socket.setNoDelay(true);
      server.emit("connection", socket);
    },
    close(graceMs = DEFAULT_SHUTDOWN_GRACE_MS) {
      closing = true;
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
      return open;
    },
    listener: server,
    closeConnections(which) {
      for (const connection of live) if (!connection.handedOver && (which === "all" || connection.idle)) connection.destroy();
    },
  };
}
