// node:http's IncomingMessage on the engine: a Readable whose body streams as
// the connection reads it (exchange.ts pushes the pieces and stops the
// reading while this stream is full), with node's fields.
//
// Every member node's IncomingMessage.prototype defines is an own property
// of each request (see own-members.ts): Express 5 swaps a request's
// prototype for one whose chain ends in http.IncomingMessage.prototype, and
// node's methods there would reach for a parser and a socket that are not
// node's. Readable's own machinery (push, read, pipe, events) stays in the
// chain either way, since IncomingMessage extends Readable too.

import { Readable } from "node:stream";
import type { Socket } from "node:net";
import type { RequestHead } from "../http/message/request.js";
import type { Link } from "../http/connection/streamed.js";
import { notOffered, nodeError } from "./errors.js";
import { distinctHeaders, joinHeaders, rawHeaders, type NodeHeaders } from "./headers.js";

/**
 * The request's part of the exchange, apart from node's fields: what the
 * body's flow needs. The exchange itself (exchange.ts) for a request
 * answered through the engine, so that a request makes no object for it;
 * one of its own for a request handed over to an 'upgrade' listener.
 */
export interface BodyFlow {
  readonly link: Link;
  /** The reading is stopped until this stream wants more (Link.holdBody). */
  held: boolean;
  /**
   * Why the body will not come, when the engine said so: "engine" (the
   * connection broke a rule, or closes after an answer given before the
   * body: the socket is the engine's to close, after what it still writes),
   * or "client" (it went, or half-closed); null until then.
   */
  abandoned: "engine" | "client" | null;
}

export const kFlow = Symbol("startline.body-flow");

export class IncomingRequest extends Readable {
  method: string;
  url: string;
  headers: NodeHeaders;
  rawHeaders: string[];
  trailers: NodeHeaders;
  rawTrailers: string[];
  httpVersion: string;
  httpVersionMajor: number;
  httpVersionMinor: number;
  socket: Socket;
  connection: Socket;
  client: Socket;
  /** The whole body has arrived (node: the parser's message complete). */
  complete = false;
  /** The client went before the body was whole (node's deprecated flag, still read by frameworks). */
  aborted = false;
  upgrade: boolean;
  statusCode: null = null;
  statusMessage: null = null;
  joinDuplicateHeaders = false;
  /**
   * node's are getters on its prototype, which make the lists on first use.
   * Here they are data, made with the request: a getter would have to be
   * defined on each instance (own-members.ts), and defining accessors on an
   * object costs more than making the lists (about 0.5 µs a request, measured
   * against 0.1), and leaves every later access to the request slower.
   */
  headersDistinct: Record<string, string[]>;
  trailersDistinct: Record<string, string[]>;
  [kFlow]: BodyFlow;
  /**
   * What Express 5 and its router add to every request after giving it
   * their prototype, declared here (undefined until they set them) with
   * EventEmitter's count of events, which the first listener added makes
   * an own property. V8 (Node 20's) gives an object whose prototype was
   * swapped a hidden class of its own for every property added after the
   * swap, never one shared with the previous request's: every property
   * access on it then misses its inline cache, and each addition copies
   * the object. Declared before the swap, they are stores into fields the
   * object has, and every request keeps the same hidden class. A property
   * that is not declared here still works as on node, only slower. The
   * router's own mark, a symbol it does not export, is declared too once
   * one request has shown it (noteRouterMark). test/node/hidden-class.test.ts
   * holds requests of one Express app to one hidden class.
   */
  next: unknown = undefined;
  baseUrl: unknown = undefined;
  originalUrl: unknown = undefined;
  _parsedUrl: unknown = undefined;
  params: unknown = undefined;
  route: unknown = undefined;
  _eventsCount = 0;

  constructor(head: RequestHead, flow: BodyFlow, upgrade: boolean) {
    super();
    const socket = flow.link.socket as Socket;
    this.method = head.method;
    this.url = head.target;
    this.headers = joinHeaders(head.fields);
    this.rawHeaders = rawHeaders(head.fields, head.rawNames);
    this.headersDistinct = distinctHeaders(head.fields);
    this.trailers = {};
    this.rawTrailers = [];
    this.trailersDistinct = NO_TRAILERS;
    this.httpVersion = head.minor === 0 ? "1.0" : "1.1";
    this.httpVersionMajor = 1;
    this.httpVersionMinor = head.minor;
    this.socket = socket;
    this.connection = socket;
    this.client = socket;
    this.upgrade = upgrade;
    this[kFlow] = flow;
    if (routerMark !== null) (this as unknown as Record<symbol, unknown>)[routerMark] = undefined;
    // node's IncomingMessage.prototype, member for member (own-members.ts).
    this._read = readBody;
    this._destroy = destroyRequest;
    this.setTimeout = setRequestTimeout;
    this._dump = dump;
    this._addHeaderLines = parserOnly;
    this._addHeaderLine = parserOnly;
    this._addHeaderLineDistinct = parserOnly;
  }

  declare setTimeout: typeof setRequestTimeout;
  declare _dump: () => void;
  declare _addHeaderLines: () => never;
  declare _addHeaderLine: () => never;
  declare _addHeaderLineDistinct: () => never;
}

/**
 * Express 5's router marks every request it matches with a symbol of its own
 * (its description below), not exported: declared with every request (see
 * IncomingRequest's `next`) once found on one whose prototype was swapped,
 * which Express has answered. Looked for on the first such requests only, so
 * that an app that swaps prototypes without this router pays for no more
 * than a few looks.
 */
const ROUTER_MARK = "router.tracing.matchedRoute";
let routerMark: symbol | null = null;
let looksLeft = 64;

/** A request answered: when its prototype was swapped, is the router's mark among its own symbols? */
export function noteRouterMark(req: IncomingRequest): void {
  // Whether the prototype was swapped, read as its constructor (a load V8 caches for requests of one class):
  // Object.getPrototypeOf went to V8's runtime for every request (about 70 instructions a bare one).
  if (routerMark !== null || looksLeft === 0 || req.constructor === IncomingRequest) return;
  looksLeft--;
  for (const key of Object.getOwnPropertySymbols(req)) {
    if (key.description === ROUTER_MARK) {
      routerMark = key;
      return;
    }
  }
}

/**
 * The body is whole: its trailers (name as sent, value, ...), then the end of
 * the stream. A function, not a method: a framework may have swapped the
 * request's prototype by now.
 */
export function finishRequest(req: IncomingRequest, trailers: readonly string[] | undefined): void {
  if (req.complete) return;
  if (trailers !== undefined) {
    req.rawTrailers = trailers.slice();
    const fields = trailers.map((v, i) => (i % 2 === 0 ? v.toLowerCase() : v));
    req.trailers = joinHeaders(fields);
    req.trailersDistinct = distinctHeaders(fields);
  }
  req.complete = true;
  req.push(null);
}

/** What a Readable's state says of its reading, as far as finishBodiless and endQuietly need it (node's ReadableState, not typed by @types/node). */
interface ReadableStateView {
  length: number;
  ended: boolean;
  endEmitted: boolean;
  flowing: boolean | null;
  resumeScheduled: boolean;
  readableListening: boolean;
  destroyed: boolean;
  closed: boolean;
  closeEmitted: boolean;
  paused: boolean;
  sync: boolean;
  errored: Error | null;
}

const EMIT = Readable.prototype.emit;

/**
 * A request without a body, whole once its listeners have had it. Its end
 * is pushed as node's parser pushes it, and with nobody listening to the
 * request yet, nobody reading it and node's own emit, without the turn of
 * the tick queue node's Readable takes to emit 'readable' for it: the
 * stream is told the push is not synchronous with a read (node's `sync`,
 * which only that turn depends on), so 'readable' is emitted now, to nobody,
 * and `sync` is set back, leaving the state that turn leaves. A listener
 * the application adds later, for 'readable' on a tick of its own, hears
 * 'end' and not 'readable' (as it did when the end was pushed before the
 * listeners ran); one added in the listeners hears both, as on node.
 * test/node/quiet-end.test.ts holds both.
 */
export function finishBodiless(req: IncomingRequest): void {
  const state = (req as unknown as { _readableState: ReadableStateView })._readableState;
  if (req._eventsCount !== 0 || req.emit !== EMIT || req.complete || !state.sync || state.flowing !== null || state.destroyed) {
    finishRequest(req, undefined);
    return;
  }
  req.complete = true;
  state.sync = false;
  req.push(null);
  state.sync = true;
}

/** Every request's trailersDistinct until trailers come: one object, frozen, so that no request's writes reach another's. */
const NO_TRAILERS: Record<string, string[]> = Object.freeze(Object.create(null) as Record<string, string[]>);

/** The stream wants more: the connection reads the body again, if it had stopped. */
function readBody(this: IncomingRequest): void {
  const flow = this[kFlow];
  if (!flow.held) return;
  flow.held = false;
  flow.link.holdBody(false);
}

/**
 * As node's: a request destroyed before its body was read whole is aborted,
 * and its socket destroyed with it (its remaining bytes could not be told
 * from a next request's); the error reaches only those who listen for one.
 */
function destroyRequest(this: IncomingRequest, error: Error | null, callback: (error?: Error | null) => void): void {
  if (!this.readableEnded || !this.complete) {
    this.aborted = true;
    this.emit("aborted");
  }
  const flow = this[kFlow];
  if (this.aborted && !this.socket.destroyed) {
    // Destroyed by the application: its socket too, as node. The client half-closed: node ends the socket, after what
    // is written. Abandoned by the engine: it closes the socket itself, after what it still writes.
    if (flow.abandoned === null) this.socket.destroy();
    else if (flow.abandoned === "client") this.socket.end();
  }
  else if (flow.held) readBody.call(this);
  process.nextTick(destroyed, this, error, callback);
}

/** The end of destroyRequest, on node's tick (its arguments passed, not held by a closure made per request). */
function destroyed(req: IncomingRequest, error: Error | null, callback: (error?: Error | null) => void): void {
  callback(req.listenerCount("error") === 0 ? null : error);
}

/**
 * A request whose response is out, that nobody read or listened to, ends
 * and closes at once, in the state node's way leaves it. node drops such a
 * body with resume() (dump, above), and its request then goes through
 * four turns of the tick queue, one for each step: the resume, 'end', the
 * destroy's callback, 'close'; a bare listener's request spent more on
 * them than on the rest of the adapter's work (about 4,000 instructions
 * and 1,500 bytes of its 14,000 and 3,500). With no listener and no reader,
 * none of those steps is seen but by the state it leaves: 'resume', 'end'
 * and 'close' are emitted to nobody. So when the body is whole and unread,
 * and the request has no listener of any kind and node's own emit, its
 * state is set to where those steps end (flowing, ended, destroyed,
 * closed), now, after 'finish''s listeners ran, rather than over the next
 * four ticks. A listener added later than that hears nothing, as one added
 * after node's 'close' does. Otherwise (someone listens, reads, paused, or
 * there is body left) false, and the caller dumps it as node does.
 * test/node/quiet-end.test.ts holds the state left against node's way.
 */
export function endQuietly(req: IncomingRequest): boolean {
  if (req._eventsCount !== 0 || req.emit !== EMIT || !req.complete) return false;
  const state = (req as unknown as { _readableState: ReadableStateView })._readableState;
  if (!state.ended || state.length !== 0 || state.flowing !== null || state.resumeScheduled || state.readableListening) return false;
  if (state.endEmitted || state.destroyed || state.errored !== null) return false;
  // As resume() leaves it: flowing, and "not paused" said (node's legacy `paused`, false, sets that bit too).
  state.flowing = true;
  state.paused = false;
  state.endEmitted = true;
  state.destroyed = true;
  state.closed = true;
  state.closeEmitted = true;
  return true;
}

/** node:http's: the rest of a body nobody reads is read and dropped (after the response, so that the connection goes on). */
function dump(this: IncomingRequest): void {
  if (this.readableEnded || this.destroyed) return;
  this.removeAllListeners("data");
  this.resume();
}

function setRequestTimeout(this: IncomingRequest, ms: number, callback?: () => void): IncomingRequest {
  if (ms !== 0) throw notOffered("request.setTimeout()", "startline times every request itself; set server.headersTimeout and server.requestTimeout before listen()");
  if (callback !== undefined) this.on("timeout", callback);
  return this;
}

function parserOnly(): never {
  throw nodeError(Error, "ERR_STARTLINE_NOT_OFFERED", "A request's header lines are added by startline's parser only");
}
