// One request and its response, between the engine and node's interface:
// the engine's Streamed (src/http/connection/streamed.ts) for a request whose
// handler is a node:http listener. Body pieces go into the request's
// Readable as they arrive, and the reading stops while it is full; the
// response's answer goes back to the engine once the application has one.
//
// And each connection's part: the requests it has served (for
// maxRequestsPerSocket), and the exchanges in flight, which hear when the
// client goes ('aborted' and 'close' on the request, 'close' on the response).

import type { Request } from "../http/message/request.js";
import type { Response } from "../http/message/response.js";
import type { Link, Streamed } from "../http/connection/streamed.js";
import { nodeError } from "./errors.js";
import { finishRequest, kFlow, type IncomingRequest } from "./request.js";
import { clientGone, type ServerResponseOnEngine } from "./response.js";

/** A connection as node's interface keeps it: its requests so far and those in flight. */
export interface ConnectionState {
  requests: number;
  readonly inFlight: Set<NodeExchange>;
}

const connections = new WeakMap<Link, ConnectionState>();

/** The state of `link`'s connection, made with its first request, and told once when its socket closes. */
export function connectionOf(link: Link): ConnectionState {
  let state = connections.get(link);
  if (state === undefined) {
    const made: ConnectionState = { requests: 0, inFlight: new Set() };
    state = made;
    connections.set(link, made);
    link.socket.once("close", () => {
      for (const exchange of made.inFlight) exchange.gone();
      made.inFlight.clear();
    });
  }
  return state;
}

export class NodeExchange implements Streamed {
  readonly req: IncomingRequest;
  res: ServerResponseOnEngine | null = null;
  private readonly connection: ConnectionState;
  /** The answer, when the application gave it before the engine asked (a listener that ends at once). */
  private given: Response | null = null;
  /** The engine's wait for an answer it asked for before there was one. */
  private awaited: ((response: Response) => void) | null = null;

  constructor(req: IncomingRequest, connection: ConnectionState) {
    this.req = req;
    this.connection = connection;
    connection.inFlight.add(this);
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
    if (!req.push(piece)) {
      const flow = req[kFlow];
      if (!flow.held) {
        flow.held = true;
        flow.link.holdBody(true);
      }
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
    req[kFlow].abandoned = clientGone ? "client" : "engine";
    const error = nodeError(Error, "ECONNRESET", "aborted");
    req.destroy(error);
  }

  /** The response left whole: the connection no longer needs to tell this exchange of its close. */
  done(): void {
    this.connection.inFlight.delete(this);
  }

  /** The socket closed with this exchange in flight. */
  gone(): void {
    this.abort();
    if (this.res !== null) clientGone(this.res);
    // The engine forgets an exchange whose connection closed: its answer is never asked for.
    this.awaited = null;
  }
}
