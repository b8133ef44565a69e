// A service that takes each request at its head, and its body in pieces as
// they arrive, rather than whole: for an interface whose handlers read the
// body as a stream (node:http's, in src/node/), where a handler may read a
// body far larger than the server would ever hold, and may answer before
// the body is whole. The connection still parses, frames and writes every
// byte; the service only sees pieces, and says when it is full.
//
// What a handler gets of its connection is the Link: the socket's peer, the
// socket itself (as node:http hands it to its handlers), the reading of the
// body (stop while the reader is full, go on once it has room), and the
// hand-over of the socket after a head that switches protocols.

import type { ProtocolError } from "../parse/errors.js";
import type { Request, RequestHead } from "../message/request.js";
import type { Response } from "../message/response.js";
import type { Transport } from "./options.js";

/** What a streamed service gives back for a head: its answer, and where the body goes. */
export interface Streamed {
  /** The answer, whenever it is ready: before the body is whole, or after. Read once, as the handler returns. */
  readonly response: Response | Promise<Response>;
  /** A piece of the body, as it arrives (a view into the read: kept, never modified). */
  body(piece: Buffer): void;
  /** The body is whole (there was none, for a head that announces none): the request, with its trailers if any. */
  end(request: Request): void;
  /**
   * The body will never be whole: the client went (its socket closed, or it
   * half-closed), or it broke a rule or ran out of time, or the connection
   * closes after an answer given before the body. In the last cases the
   * connection writes what it still has to (its own error, that answer) and
   * closes the socket itself.
   */
  abort(clientGone: boolean): void;
}

/** A request's connection, as its streamed handler may use it. */
export interface Link {
  /** The socket; its bytes are the connection's to read and write, until handOver(). */
  readonly socket: Transport;
  /** The peer's address and port, read when the connection began ("-" and 0 when unknown: an in-memory peer). */
  readonly remoteAddress: string;
  readonly remotePort: number;
  /** Stop reading the body while the reader is full (true), go on once it has room (false). */
  holdBody(full: boolean): void;
  /**
   * Take the socket over after the head just handed on (only inside the
   * handler's call for that head, and only when no earlier answer is still
   * pending): the connection stops reading, writing and timing it, and the
   * bytes it had read past the head are returned, to be read as the new
   * protocol's first. Null when it cannot be done now.
   */
  handOver(): Buffer | null;
  /**
   * The handler decides when its client may send the body it holds back
   * (Expect: 100-continue): called inside the handler's call for the head,
   * the connection sends no 100 Continue until sendContinue(). Answered
   * without one, the body is never read, and the connection closes after
   * the answer (RFC 9110 §10.1.1: the client may not send it at all).
   */
  holdContinue(): void;
  /** The 100 Continue held for the request being read goes out (once every earlier answer is out). */
  sendContinue(): void;
}

/** Takes each request at its head (see Streamed); the head carries its fields' names as sent (rawNames). */
export interface StreamedService {
  readonly streamed: (head: RequestHead, link: Link) => Streamed;
  /**
   * The bytes broke a rule, or a request ran out of time, with no earlier
   * answer still to be written: true when the service answers on the socket
   * itself (node:http's 'clientError' listener), which is then its, as after
   * handOver(); false, or absent, and the connection answers with its own
   * problem and closes.
   */
  readonly clientError?: (error: ProtocolError, link: Link) => boolean;
  /**
   * What the client's half-close (its FIN: it sends nothing more) does to
   * requests still in their handlers' hands. Absent or false: they are
   * answered, then the connection closes, as the engine does for every
   * service. True: they are abandoned and the connection closes at once,
   * its output ended, which node:http does and its applications expect
   * (their responses see 'close' before 'finish'). RFC 9112 §9.6 allows
   * either: a half-close may be a client that is done, or one that left.
   */
  readonly abortOnHalfClose?: boolean;
}

export function isStreamedService(service: unknown): service is StreamedService {
  return typeof service === "object" && service !== null && typeof (service as StreamedService).streamed === "function";
}
