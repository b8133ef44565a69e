// node:http's Server on the engine: `createServer([options,] listener)` as
// node's, for an Express, Koa or Fastify app (or a bare listener), whose
// requests the engine parses, frames and answers. Every method token reaches
// the listener as sent (node's parser refuses those outside its fixed list
// with a 400 before any handler runs), pipelined requests are read and
// answered in order, and each body streams to the application as it arrives.
//
// The engine's server is made when the server first listens, from the
// timeouts set by then (as on node, they are properties); setting one
// afterwards throws rather than being silently ignored.

import { EventEmitter } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Socket } from "node:net";
import { createServer as createEngineServer, type HttpServer, type ServerOptions } from "../http/connection/server.js";
import type { RequestHead } from "../http/message/request.js";
import type { Link, Streamed, StreamedService } from "../http/connection/streamed.js";
import { fieldListElements } from "../http/message/field-lists.js";
import { DEFAULT_LIMITS } from "../http/parse/limits.js";
import { clientError, nodeError, notOffered } from "./errors.js";
import { connectionOf, NodeExchange } from "./exchange.js";
import { finishBodiless, finishRequest, IncomingRequest } from "./request.js";
import { ServerResponseOnEngine } from "./response.js";

/**
 * A listener as node:http types it, so that an Express, Koa or Fastify handler
 * is taken as it is: the objects it gets are startline's (IncomingRequest and
 * ServerResponseOnEngine), with node's interface.
 */
export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/** node's createServer options that apply here, and the engine's own under `startline`. */
export interface NodeServerOptions {
  /** node's defaults: 60 s, 300 s and 5 s; 0 turns a timeout off. */
  readonly headersTimeout?: number;
  readonly requestTimeout?: number;
  readonly keepAliveTimeout?: number;
  /** The largest header section, in bytes (node's default, 16 KiB). */
  readonly maxHeaderSize?: number;
  /** Requests served on one connection before it closes; 0: no limit. */
  readonly maxRequestsPerSocket?: number;
  /** The engine's own settings (its limits, a connection cap, TLS): see docs/library.md. */
  readonly startline?: Omit<ServerOptions, "headersTimeoutMs" | "requestTimeoutMs" | "keepAliveTimeoutMs">;
  readonly [other: string]: unknown;
}

/** A request switched protocols: its connection is the 'upgrade' listener's, and answers nothing through the engine. */
const HANDED_OVER: Streamed = Object.freeze({
  response: new Promise<never>(() => {}),
  body() {},
  end() {},
  abort() {},
});

/**
 * Pipelined requests whose answers may be in the making at once, unless
 * `startline.maxUnanswered` says otherwise. node:http hands every pipelined
 * request to its listener as it is parsed; the engine does so for requests
 * with safe methods only, side by side (protocol.ts, RFC 9112 §9.3.2), and at
 * most this many, so that what a connection holds of answers waiting behind
 * one not yet known stays bounded.
 */
const MAX_UNANSWERED = 16;

/** Never resolved: a node timeout of 0 is none at all. */
const NEVER = Infinity;
const ms = (value: number) => (value === 0 ? NEVER : value);

/** Would node's parser call this request an upgrade: an Upgrade field, and "upgrade" among Connection's options (RFC 9110 §7.8). */
function asksUpgrade(head: RequestHead): boolean {
  const fields = head.fields;
  let upgrade = false;
  let connection = false;
  for (let i = 0; i < fields.length; i += 2) {
    if (fields[i] === "upgrade") upgrade = true;
    else if (fields[i] === "connection" && fieldListElements(fields[i + 1]!).some((o) => o.toLowerCase() === "upgrade")) connection = true;
  }
  return upgrade && connection;
}

export class Server extends EventEmitter {
  private engine: HttpServer | null = null;
  private readonly options: NodeServerOptions;
  private timeouts: { headersTimeout: number; requestTimeout: number; keepAliveTimeout: number };
  private requestsPerSocket: number;
  /** node's maxHeadersCount, when set: the engine's maxHeaderCount (its own default, 100, otherwise). */
  private headersCount: number | null = null;
  private readonly service: StreamedService;

  constructor(options: NodeServerOptions = {}, listener?: RequestListener) {
    super();
    if (options.IncomingMessage !== undefined || options.ServerResponse !== undefined) {
      throw notOffered("Custom IncomingMessage or ServerResponse classes", "startline makes its own request and response objects; extend them in a 'request' listener instead");
    }
    if (options.insecureHTTPParser === true) throw notOffered("insecureHTTPParser", "startline's parser is strict, always");
    if (options.requireHostHeader === false) {
      throw notOffered("requireHostHeader: false", "an HTTP/1.1 request without a Host field is answered 400, as RFC 9112 §3.2 asks");
    }
    this.options = options;
    this.timeouts = {
      headersTimeout: options.headersTimeout ?? 60_000,
      requestTimeout: options.requestTimeout ?? 300_000,
      keepAliveTimeout: options.keepAliveTimeout ?? 5_000,
    };
    this.requestsPerSocket = options.maxRequestsPerSocket ?? 0;
    if (listener !== undefined) this.on("request", listener);
    this.service = {
      streamed: (head, link) => this.take(head, link),
      clientError: (error, link) => {
        if (this.listenerCount("clientError") === 0) return false;
        this.emit("clientError", clientError(error), link.socket);
        return true;
      },
      // node:http ends the socket when its client half-closes, and what was in flight sees 'close' without 'finish'.
      abortOnHalfClose: true,
    };
  }

  // ---- Timeouts: read when the server starts to listen ----

  private setTimeoutOption(name: "headersTimeout" | "requestTimeout" | "keepAliveTimeout", value: number | undefined): void {
    if (this.engine !== null) throw notOffered(`Setting server.${name} after listen()`, "startline reads its timeouts when the server starts listening; set them before");
    // node's server reads these properties as they are, and one set to undefined times nothing (Fastify's own
    // createServer assigns its option, undefined when not given): the same as 0 here.
    if (value === undefined) value = 0;
    if (typeof value !== "number" || !(value >= 0)) throw nodeError(TypeError, "ERR_INVALID_ARG_TYPE", `server.${name} must be a number of milliseconds, 0 or more`);
    this.timeouts[name] = value;
  }
  get headersTimeout(): number {
    return this.timeouts.headersTimeout;
  }
  set headersTimeout(value: number) {
    this.setTimeoutOption("headersTimeout", value);
  }
  get requestTimeout(): number {
    return this.timeouts.requestTimeout;
  }
  set requestTimeout(value: number) {
    this.setTimeoutOption("requestTimeout", value);
  }
  get keepAliveTimeout(): number {
    return this.timeouts.keepAliveTimeout;
  }
  set keepAliveTimeout(value: number) {
    this.setTimeoutOption("keepAliveTimeout", value);
  }
  /** The most header fields a request may have: the engine's limit (100 unless set), read when the server starts to listen. */
  get maxHeadersCount(): number {
    return this.headersCount ?? this.options.startline?.limits?.maxHeaderCount ?? DEFAULT_LIMITS.maxHeaderCount;
  }
  set maxHeadersCount(value: number) {
    if (this.engine !== null) throw notOffered("Setting server.maxHeadersCount after listen()", "startline reads its limits when the server starts listening; set it before");
    this.headersCount = value;
  }
  get maxRequestsPerSocket(): number {
    return this.requestsPerSocket;
  }
  set maxRequestsPerSocket(value: number) {
    this.requestsPerSocket = value ?? 0;
  }
  /** node's socket inactivity timeout: 0, none (the engine times each state of a connection itself). */
  get timeout(): number {
    return 0;
  }
  set timeout(value: number) {
    if (value !== 0) throw notOffered("server.timeout", "startline times connections itself; set headersTimeout, requestTimeout and keepAliveTimeout");
  }

  setTimeout(msecs: number | (() => void) = 0, callback?: () => void): this {
    if (typeof msecs === "function") {
      callback = msecs;
      msecs = 0;
    }
    this.timeout = msecs;
    if (callback !== undefined) this.on("timeout", callback);
    return this;
  }

  // ---- Listening ----

  /** The engine's server, made on the first listen() from the settings as they stand then. */
  private start(): HttpServer {
    if (this.engine !== null) return this.engine;
    const t = this.timeouts;
    const own = this.options.startline ?? {};
    const maxHeaderSize = this.options.maxHeaderSize;
    const engine = createEngineServer(this.service, {
      maxUnanswered: MAX_UNANSWERED,
      ...own,
      headersTimeoutMs: ms(t.headersTimeout),
      requestTimeoutMs: ms(t.requestTimeout),
      // node has no timeout of its own for a stalled body: its request timeout bounds it.
      bodyTimeoutMs: own.bodyTimeoutMs ?? ms(t.requestTimeout),
      keepAliveTimeoutMs: ms(t.keepAliveTimeout),
      limits: {
        ...own.limits,
        // node's maxHeaderSize bounds the request line too (its parser counts the whole head): so does the engine's
        // room for the line, when that is smaller than its own.
        ...(maxHeaderSize === undefined
          ? {}
          : { maxHeaderBytes: maxHeaderSize, maxRequestLineBytes: Math.min(own.limits?.maxRequestLineBytes ?? DEFAULT_LIMITS.maxRequestLineBytes, maxHeaderSize) }),
        ...(this.headersCount === null ? {} : { maxHeaderCount: this.headersCount }),
      },
    });
    const listener = engine.listener;
    listener.on("listening", () => this.emit("listening"));
    listener.on("error", (error) => this.emit("error", error));
    listener.on("close", () => this.emit("close"));
    listener.on("connection", (socket: Socket) => this.emit("connection", socket));
    this.engine = engine;
    return engine;
  }

  /** node's listen(), every signature: (port, host, backlog, callback), (options, callback), (path, callback), (handle, callback). */
  listen(...args: unknown[]): this {
    (this.start().listener.listen as (...a: unknown[]) => unknown)(...args);
    return this;
  }

  get listening(): boolean {
    return this.engine?.listener.listening ?? false;
  }

  /**
   * The listening socket's handle, null when not listening: node's own
   * net.Server field, undocumented but read by supertest, which closes a
   * server it started only when it has one (without it, the server stayed
   * open and the test process never ended).
   */
  get _handle(): unknown {
    return (this.engine?.listener as { _handle?: unknown } | undefined)?._handle ?? null;
  }

  address(): AddressInfo | string | null {
    return this.engine?.listener.address() ?? null;
  }

  /**
   * Stop accepting; connections with nothing in flight close now, the others
   * once their answers are out (node's close(), which waits as long as that
   * takes). `callback` once every connection is gone, with
   * ERR_SERVER_NOT_RUNNING when the server was not listening.
   */
  close(callback?: (error?: Error) => void): this {
    // As node's close() does, through the instance: code that wraps closeIdleConnections (Fastify counts
    // on this call and makes no second one for node's servers) sees it.
    this.closeIdleConnections();
    const engine = this.engine;
    if (engine === null || !engine.listener.listening) {
      if (callback !== undefined) process.nextTick(callback, nodeError(Error, "ERR_SERVER_NOT_RUNNING", "Server is not running."));
      return this;
    }
    if (callback !== undefined) engine.listener.once("close", () => callback());
    // As long as it takes (the largest delay a timer takes): node's close() never cuts a request in flight.
    void engine.close(2 ** 31 - 1);
    return this;
  }

  closeAllConnections(): void {
    this.engine?.closeConnections("all");
  }

  closeIdleConnections(): void {
    this.engine?.closeConnections("idle");
  }

  getConnections(callback: (error: Error | null, count: number) => void): this {
    const engine = this.engine;
    process.nextTick(callback, null, engine === null ? 0 : engine.connections);
    return this;
  }

  ref(): this {
    this.engine?.listener.ref();
    return this;
  }

  unref(): this {
    this.engine?.listener.unref();
    return this;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (!this.listening) return;
    await new Promise<void>((resolve) => this.close(() => resolve()));
  }

  // ---- Requests ----

  /** A request's head: its node request and response, to the 'request' listeners (or, switching protocols, 'upgrade'). */
  private take(head: RequestHead, link: Link): Streamed {
    const connection = connectionOf(link);
    connection.requests++;
    if (this.listenerCount("upgrade") > 0 && asksUpgrade(head)) {
      // Switching protocols when the engine can hand the socket over now; else answered as any request is.
      const rest = link.handOver();
      if (rest !== null) {
        const req = new IncomingRequest(head, { link, held: false, abandoned: null }, true);
        finishRequest(req, undefined);
        this.emit("upgrade", req, link.socket, rest);
        return HANDED_OVER;
      }
    }
    // node:http's 'checkContinue': its listener decides whether the client may send the body (writeContinue).
    const checks = head.expectContinue && head.framing.kind !== "none" && this.listenerCount("checkContinue") > 0;
    if (checks) link.holdContinue();
    const exchange = new NodeExchange(head, link, connection);
    const req = exchange.req;
    const max = this.requestsPerSocket;
    const res = new ServerResponseOnEngine(req, exchange, max > 0 && connection.requests >= max);
    exchange.assignSocket(res);
    this.emit(checks ? "checkContinue" : "request", req, res);
    // As node's parser: a request without a body is whole once its listeners have had it (in them, req.complete is false).
    if (head.framing.kind === "none") finishBodiless(req);
    return exchange;
  }
}

/**
 * node:http's createServer([options,] listener), on the startline engine: not
 * the engine's own createServer(handler) (the package's root export), which
 * takes a handler that returns a Response.
 */
export function createServer(options?: NodeServerOptions | RequestListener, listener?: RequestListener): Server {
  if (typeof options === "function") return new Server({}, options);
  return new Server(options ?? {}, listener);
}
