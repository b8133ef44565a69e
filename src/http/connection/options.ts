// What a connection is given (its options, with their defaults) and what it
// reports (one Exchange per response, handler failures, its end), apart from
// the connection's own logic in connection.ts.

import type { Duplex } from "node:stream";
import type { ParserLimits } from "../parse/limits.js";
import type { Request } from "../message/request.js";
import type { TraceFactory } from "./trace-hook.js";
import type { Turns } from "./turns.js";

/** What a connection needs of its socket: a net.Socket, a tls.TLSSocket, or an in-memory Duplex. */
export type Transport = Duplex & {
  setNoDelay?(noDelay?: boolean): unknown;
  /** A TCP socket's reset (RST): see Connection's cutStalled. */
  resetAndDestroy?(): unknown;
  readonly remoteAddress?: string | undefined;
  readonly remotePort?: number | undefined;
};

export interface ConnectionOptions {
  readonly limits: ParserLimits;
  /** From the first byte of a request to the end of its head (408 after). */
  readonly headersTimeoutMs: number;
  /** Longest pause while a body is arriving (408 after). */
  readonly bodyTimeoutMs: number;
  /**
   * From the first byte of a request to its last (408 after), however steadily
   * the bytes come: a body trickled a byte a second restarts the body timeout
   * each time, but cannot stretch this one.
   */
  readonly requestTimeoutMs: number;
  /** How long a connection may wait, with nothing in flight, for its next request. */
  readonly keepAliveTimeoutMs: number;
  /**
   * Requests on one connection whose answers may be in the making at once
   * (handlers that have not answered, answers waiting behind an earlier
   * one); at this many the server reads no further request from it until one
   * leaves. 1, as nginx and Go's net/http do: a pipelined request is read once
   * the answer before it is out, so no answer waits whole in memory behind
   * one not yet known, however large it is and however long the client does
   * not read. Pipelined requests whose handlers answer at once are unaffected:
   * a read's answers still leave together. Above 1, only requests with safe
   * methods are in the making side by side (protocol.ts, mayHandOn).
   */
  readonly maxUnanswered: number;
  /** After a closing response, how long to drain the client's bytes before closing hard. */
  readonly lingerMs: number;
  /** How long responses may wait to be sent without any progress (a client that stopped reading). */
  readonly sendTimeoutMs: number;
  /** Field lines added to every response, already serialized ("Name: value\r\n"), e.g. HSTS. */
  readonly responseFields: string;
  /** The server's turns of the event loop, shared by its connections (turns.ts); absent (inject(), tests), turns nobody arrives in. */
  readonly turns?: Turns | undefined;
  /** Someone to tell every part read and written, per connection (TRACE=1); absent, nothing is made. */
  readonly trace?: TraceFactory | undefined;
}

/**
 * `n` as maxUnanswered, or a RangeError: at 0 (or less) no request would
 * ever be answered, the connection waiting for good; NaN would bound nothing.
 */
export function checkMaxUnanswered(n: number): number {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`maxUnanswered must be a whole number, 1 or more (got ${n}): it is how many answers may be in the making at once`);
  return n;
}

/**
 * How long a server's close() lets requests in flight finish before it cuts what is left. Here, beside
 * the connections' defaults, so that src/config.ts reads the defaults without loading the server.
 */
export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;

export const DEFAULT_CONNECTION_OPTIONS = {
  headersTimeoutMs: 10_000,
  bodyTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxUnanswered: 1,
  lingerMs: 2_000,
  sendTimeoutMs: 20_000,
  responseFields: "",
} as const;

/** One line of the access log: version is "HTTP/1.1" or "HTTP/1.0"; "-" is what the parser never had (or an in-memory peer's address). */
export interface Exchange {
  readonly client: string;
  readonly method: string;
  readonly target: string;
  readonly version: string;
  readonly status: number;
  readonly bodyBytes: number;
  readonly ms: number;
}

export interface ConnectionHooks {
  /** The access log; without it, nothing is timed or gathered per exchange. */
  onExchange?(exchange: Exchange): void;
  /** A handler threw or rejected, or returned a response the writer refused. */
  onHandlerError(error: unknown, request: Request | null): void;
  onClose(connection: LiveConnection): void;
}

/** What the server does with a connection it keeps (connection.ts makes them): its sweep, its shutdown. */
export interface LiveConnection {
  /** True when nothing is in flight: shutting the connection down now loses nothing. */
  readonly idle: boolean;
  /** True once its socket is another protocol's (lifecycle.ts, HandedOver). */
  readonly handedOver: boolean;
  /** Act on whatever deadline has run out by `now`. */
  checkDeadline(now: number): void;
  /** Finish what is in flight, then close. */
  drain(): void;
  /** Close now, whatever is in flight. */
  destroy(): void;
}
