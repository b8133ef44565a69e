// One request and its response, between the engine and node's interface:
// the engine's Streamed (src/http/connection/streamed.ts) for a request whose
// handler is a node:http listener. Body pieces go into the request's
// Readable as they arrive, and the reading stops while it is full; the
// response's answer goes back to the engine once the application has one.
//
// And each connection's part: the requests it has served (for
// maxRequestsPerSocket), the exchanges in flight, which hear when the client
// goes ('aborted' and 'close' on the request, 'close' on the response), and
// which response has the socket. As on node, pipelined requests may be in
// their listeners' hands at once, but only the response whose turn it is has
// `res.socket`: one behind it gets its socket (and a 'socket' event) when
// the one before it finishes. Libraries count on it: on-finished (Koa,
// Express) listens on the socket of every response that has one, and ten
// responses in the making on one socket would be eleven 'close' listeners,
// and node's warning of a leak.

import type { Request } from "../http/message/request.js";
import type { Response } from "../http/message/response.js";
import type { Link, Streamed } from "../http/connection/streamed.js";
import { nodeError } from "./errors.js";
import type { RequestHead } from "../http/message/request.js";
import { finishRequest, IncomingRequest, type BodyFlow } from "./request.js";
import { clientGone, type ServerResponseOnEngine } from "./response.js";

/** A connection as node's interface keeps it: its requests so far and those in flight. */
export interface ConnectionState {
  requests: number;
  /**
   * The exchanges in flight, in request order: an array, not a Set, since
   * each leaves as its response is out, the first of them almost always, and
   * a Set's delete of its last entry makes its table anew (about 120 bytes a
   * request) where an array's shift allocates nothing.
   */
  readonly inFlight: NodeExchange[];
  /** The response that has the socket (res.socket) now, and those waiting for it, in request order. */
  answering: ServerResponseOnEngine | null;
  readonly behind: ServerResponseOnEngine[];
}

const connections = new WeakMap<Link, ConnectionState>();

/**
 * The last connection asked for, and its state: pipelined requests come from
 * one read, one after the other, and each would otherwise look its link up
 * in the WeakMap (a hash of the key, about 100 instructions). Held until the
 * next request from another connection: at most one closed connection's
 * state is kept a little longer.
 */
let lastLink: Link | null = null;
let lastState: ConnectionState | null = null;

/** The state of `link`'s connection, made with its first request, and told once when its socket closes. */
export function connectionOf(link: Link): ConnectionState {
  if (link === lastLink) return lastState!;
  let state = connections.get(link);
  if (state === undefined) {
    const made: ConnectionState = { requests: 0, inFlight: [], answering: null, behind: [] };
    state = made;
    connections.set(link, made);
    link.socket.once("close", () => {
      for (const exchange of made.inFlight.splice(0)) exchange.gone();
    });
  }
  lastLink = link;
  lastState = state;
  return state;
}

export class NodeExchange implements Streamed, BodyFlow {
  readonly req: IncomingRequest;
  res: ServerResponseOnEngine | null = null;
  // The request's body flow (request.ts), here rather than in an object of its own.
  readonly link: Link;
  held = false;
  abandoned: "engine" | "client" | null = null;
  private readonly connection: ConnectionState;
  /** The answer, when the application gave it before the engine asked (a listener that ends at once). */
  private given: Response | null = null;
  /** The engine's wait for an answer it asked for before there was one. */
  private awaited: ((response: Response) => void) | null = null;

  /** The exchange of a request `head` read on `link`, and its node request. */
  constructor(head: RequestHead, link: Link, connection: ConnectionState) {
    this.link = link;
    this.connection = connection;
    this.req = new IncomingRequest(head, this, false);
    connection.inFlight.push(this);
  }

  /**
   * Asked for once, right after the head's listeners ran: the answer itself
   * when they gave one (no promise, no turn of the microtask queue: answers
   * to pipelined requests leave together), else a promise of it.
   */
  get response(): Response | Promise<Response> {
    if (this.given !== null) return this.given;
    return new Promise((resolve) => (this.awaited = resolve));
  }

  /** The response's answer, to the engine (once). */
  answer(response: Response): void {
    const awaited = this.awaited;
    if (awaited === null) {
      this.given ??= response;
      return;
    }
    this.awaited = null;
    awaited(response);
  }

  body(piece: Buffer): void {
    const req = this.req;
    // A request destroyed, or dumped after its response: its bytes are read and dropped.
    if (req.destroyed) return;
    if (!req.push(piece) && !this.held) {
      this.held = true;
      this.link.holdBody(true);
    }
  }

  end(request: Request): void {
    finishRequest(this.req, request.trailers);
  }

  /**
   * The body will never be whole, or the client went before the answer: as
   * node, the request is destroyed with ECONNRESET (which reaches only an
   * 'error' listener), 'aborted' when its body was not read whole, then
   * 'close'. When the client went, node ends the socket, and the response
   * still being written with it; otherwise the engine closes it after what it
   * still writes (its 400, or an answer given before the body).
   */
  abort(clientGone = true): void {
    const req = this.req;
    if (req.destroyed) return;
    // The engine closes after an answer (Connection: close) given before the parser reported the end of a request
    // whose body is whole (none at all, for a GET): nothing was abandoned, and the request ends as node's does
    // ('end', then 'close'), not aborted with an ECONNRESET.
    if (!clientGone && req.complete) return;
    this.abandoned = clientGone ? "client" : "engine";
    const error = nodeError(Error, "ECONNRESET", "aborted");
    req.destroy(error);
  }

  /** The response's socket: its own when no earlier response is still being made, else null until its turn (passSocket). */
  assignSocket(res: ServerResponseOnEngine): void {
    this.res = res;
    const connection = this.connection;
    if (connection.answering === null) connection.answering = res;
    else {
      res.socket = null;
      res.connection = null;
      connection.behind.push(res);
    }
  }

  /**
   * The response left whole: the connection no longer needs to tell this
   * exchange of its close, and the next response has the socket, told by
   * its 'socket' event (node hands it on as the first of 'finish''s listeners).
   */
  done(): void {
    const connection = this.connection;
    const inFlight = connection.inFlight;
    if (inFlight[0] === this) inFlight.shift();
    else {
      const at = inFlight.indexOf(this);
      if (at > 0) inFlight.splice(at, 1);
    }
    if (connection.answering !== this.res) return;
    const next = connection.behind.shift() ?? null;
    connection.answering = next;
    if (next === null) return;
    const socket = this.req.socket;
    next.socket = socket;
    next.connection = socket;
    next.emit("socket", socket);
  }

  /** No response waits for the socket behind this one's: done() hands it to nobody. */
  alone(): boolean {
    return this.connection.behind.length === 0;
  }

  /** The socket closed with this exchange in flight. */
  gone(): void {
    this.abort();
    if (this.res !== null) clientGone(this.res);
    // The engine forgets an exchange whose connection closed: its answer is never asked for.
    this.awaited = null;
  }
}
