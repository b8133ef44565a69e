// Run raw request bytes through the real connection code, in memory.
//
// The bytes go through the same parser, handler and writer as on a socket,
// with the same ordering, keep-alive and error rules; what comes back is every
// byte the server would have written. Used by tests and by tools that show
// the wire, without opening a port: those watch the run through the
// connection's trace hook (trace-hook.ts), so what they show is what this
// one run read.

import { Duplex } from "node:stream";
import { Connection } from "./connection.js";
import { checkMaxUnanswered, DEFAULT_CONNECTION_OPTIONS, type ConnectionOptions, type Exchange } from "./options.js";
import { asService, type Handler, type Service } from "./service.js";
import type { ConnectionTrace } from "./trace-hook.js";
import type { Response } from "../message/response.js";
import { DEFAULT_LIMITS, type ParserLimits } from "../parse/parser.js";

export interface InjectOptions {
  readonly limits?: Partial<ParserLimits>;
  readonly onHandlerError?: (error: unknown) => void;
  /** Requests whose answers may be in the making at once (ConnectionOptions.maxUnanswered); 1 unless said. */
  readonly maxUnanswered?: number;
  /**
   * Deliver each chunk of the input on a turn of the event loop of its own,
   * and only once the connection is quiet (no handler busy, nothing left to
   * write): other connections are served in between, as between the reads of
   * a real socket. Chunks that end where requests end run the requests one
   * at a time.
   */
  readonly stepwise?: boolean;
  /**
   * Stepwise, and keep at most this many bytes of output (plus the head of the
   * response that crosses it): once a response has reached it, no further
   * request is run. The rest of that response is counted, not kept. The input
   * after it is still read, as the connection reads it (so that a trace sees
   * every request), but each request is answered without its handler, and
   * nothing written from then on is kept, counted or logged.
   */
  readonly keepBytes?: number;
  /**
   * Told everything the connection reads and writes, as TRACE=1 is
   * (trace-hook.ts): its parser's spans and verdicts, its decisions, its
   * responses.
   */
  readonly trace?: ConnectionTrace;
  /**
   * Stepwise, and stopped when it aborts: no further chunk is delivered, and
   * the result holds what was written until then. Aborted from inside the
   * run (a trace that has seen enough), the rest of the read being parsed
   * still goes through the connection; the caller's handler decides whether
   * it runs.
   */
  readonly signal?: AbortSignal;
  /**
   * The address of the client the input stands for, as a socket would
   * report its peer (RequestHead.peer, the access log): the wire view runs
   * a client's bytes as that client's. "-" unless given.
   */
  readonly peer?: string;
}

/** The in-memory socket, with the peer it stands for when one is given. */
function asPeer(wire: Duplex, peer: string | undefined): Duplex {
  if (peer !== undefined) Object.defineProperty(wire, "remoteAddress", { value: peer });
  return wire;
}

export interface InjectResult {
  /** Everything the server wrote, in order (its first `keepBytes`, when that was set). */
  readonly output: Buffer;
  /** How many bytes the server wrote, kept or not. */
  readonly written: number;
  /** One entry per response, as the access log would see it. */
  readonly exchanges: readonly Exchange[];
}

/**
 * Feed `input` (one buffer, or several chunks delivered separately) as a
 * client that then half-closes, and collect the server's answer.
 */
export function inject(handler: Handler | Service, input: string | Buffer | readonly (string | Buffer)[], options: InjectOptions = {}): Promise<InjectResult> {
  const chunks = (Array.isArray(input) ? input : [input]).map((c: string | Buffer) => (typeof c === "string" ? Buffer.from(c, "latin1") : c));
  const connectionOptions: ConnectionOptions = {
    ...DEFAULT_CONNECTION_OPTIONS,
    limits: { ...DEFAULT_LIMITS, ...options.limits },
    ...(options.maxUnanswered === undefined ? {} : { maxUnanswered: checkMaxUnanswered(options.maxUnanswered) }),
    ...(options.trace === undefined ? {} : { trace: () => options.trace! }),
  };
  if (options.stepwise === true || options.keepBytes !== undefined || options.signal !== undefined) return stepwise(handler, chunks, connectionOptions, options);
  const written: Buffer[] = [];
  const exchanges: Exchange[] = [];
  return new Promise((resolve) => {
    const wire = new Duplex({
      allowHalfOpen: true,
      read() {},
      // Copies, as a socket's kernel buffer does: once a write is acknowledged, its producer may reuse the bytes (stream-body.ts).
      write(chunk: Buffer, _encoding, callback) {
        written.push(Buffer.from(chunk));
        callback();
      },
      writev(items, callback) {
        for (const item of items) written.push(Buffer.from(item.chunk as Buffer));
        callback();
      },
      final(callback) {
        callback();
        const output = Buffer.concat(written);
        resolve({ output, written: output.length, exchanges });
      },
    });
    new Connection(asPeer(wire, options.peer), handler, connectionOptions, {
      onExchange: (e) => exchanges.push(e),
      onHandlerError: options.onHandlerError ?? (() => {}),
      onClose: () => {},
    });
    for (const chunk of chunks) wire.push(chunk);
    wire.push(null);
  });
}

/** Room past `keepBytes` for the head of the response that crosses it (this server's heads are far smaller). */
const HEAD_ROOM = 8 * 1024;

/** The answer to a request read once the output is full: its handler is not called, and nothing of it is kept or counted. */
const NOT_RUN: Response = { status: 204 };

/**
 * Every write is acknowledged from setImmediate, with a write buffer of one
 * byte, so the connection stops reading until each response is taken; the
 * next chunk of input (and in the end the client's half-close) is delivered
 * only when nothing is busy or unwritten, so a request never starts while
 * an earlier one is still at work, and the half-close never drops a request
 * still waiting to be read. A request is at work from its handler's call
 * until its exchange is logged: a streamed body is logged once its last piece
 * is written, so the half-close never arrives while one is still going out
 * (it would make the next response say Connection: close).
 */
function stepwise(service: Handler | Service, chunks: readonly Buffer[], connectionOptions: ConnectionOptions, options: InjectOptions): Promise<InjectResult> {
  const keep = options.keepBytes ?? Infinity;
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let written = 0;
  let exchangeStart = 0;
  /** Requests handed to the handler, and those of them whose response is all written. */
  let handled = 0;
  let answered = 0;
  const busy = () => handled - answered;
  let next = 0;
  let feeding = false;
  let done = false;
  /** The output has reached `keep`: from now on requests are read, not run, and nothing written counts. */
  let full = false;
  const exchanges: Exchange[] = [];

  return new Promise((resolve) => {
    const finish = () => {
      if (done) return;
      done = true;
      resolve({ output: Buffer.concat(kept), written, exchanges });
    };
    /** Counts a chunk, keeping what fits: the output kept is always a prefix of what was written. */
    const take = (chunk: Buffer | string, encoding: BufferEncoding) => {
      if (full) return;
      const size = typeof chunk === "string" ? Buffer.byteLength(chunk, encoding) : chunk.length;
      const room = keptBytes === written ? Math.max(keep, exchangeStart + HEAD_ROOM) - keptBytes : 0;
      if (room >= size) {
        // A copy: once the write is acknowledged, its producer may reuse the bytes (stream-body.ts).
        kept.push(typeof chunk === "string" ? Buffer.from(chunk, encoding) : Buffer.from(chunk));
        keptBytes += size;
      } else if (room > 0) {
        // A copy of the first bytes only: the rest of a large body is neither kept nor encoded.
        const head = typeof chunk === "string" ? Buffer.from(chunk.slice(0, room), encoding).subarray(0, room) : chunk.subarray(0, room);
        kept.push(Buffer.from(head));
        keptBytes += head.length;
      }
      written += size;
    };
    /** On a later turn: the next chunk if the connection is quiet, or the half-close once there is none. */
    const feed = () => {
      if (feeding) return;
      feeding = true;
      setImmediate(() => {
        feeding = false;
        if (done || next > chunks.length || busy() > 0 || wire.writableLength > 0) return; // an acknowledgement feeds again
        if (next < chunks.length) {
          wire.push(chunks[next++]);
          feed();
        } else {
          next++;
          wire.push(null);
          // The connection may have paused reading; the end is delivered all the same.
          wire.read(0);
        }
      });
    };
    /** After a turn: once a response is all out, whether the output has reached its limit; then go on. */
    const later = (callback: (error?: Error | null) => void, length: number) =>
      setImmediate(() => {
        if (done) return;
        if (wire.writableLength === length && busy() === 0) {
          reached();
          exchangeStart = written;
        }
        callback();
        feed();
      });
    const wire = new Duplex({
      allowHalfOpen: true,
      decodeStrings: false,
      writableHighWaterMark: 1,
      read() {},
      write(chunk: Buffer | string, encoding, callback) {
        take(chunk, encoding);
        later(callback, chunk.length);
      },
      writev(items, callback) {
        let length = 0;
        for (const item of items) {
          take(item.chunk as Buffer | string, item.encoding);
          length += (item.chunk as Buffer | string).length;
        }
        later(callback, length);
      },
      final(callback) {
        callback();
        finish();
      },
    });
    wire.on("close", finish);
    const signal = options.signal;
    if (signal !== undefined) {
      const stop = () => {
        wire.destroy();
        finish();
      };
      if (signal.aborted) stop();
      else signal.addEventListener("abort", stop, { once: true });
    }
    const { handle, admit } = asService(service);
    // Full once the output has reached the limit: found when the write that reached it is acknowledged, or, for a
    // body sent in pieces, at its exchange (logged after its last write). The connection reads no next request before
    // then, so even an answer it gives itself (a 400, a refusal from the head) is not counted. The handler's call
    // looks again, so that no request can run past the limit.
    const reached = () => {
      if (written >= keep) full = true;
    };
    const counted: Handler = (request) => {
      handled++;
      reached();
      return full ? NOT_RUN : handle(request);
    };
    new Connection(asPeer(wire, options.peer), admit === undefined ? { handle: counted } : { handle: counted, admit }, connectionOptions, {
      onExchange: (e) => {
        // Once the run is over (stopped by its signal), nothing more is its result: the exchanges were handed over.
        if (!full && !done) exchanges.push(e);
        reached();
        // Responses go out in order, and one the parser or admission gave (not a handler) comes after every handled one.
        if (answered < handled) answered++;
        feed();
      },
      onHandlerError: options.onHandlerError ?? (() => {}),
      onClose: () => {},
    });
    feed();
  });
}
