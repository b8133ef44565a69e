// node:http's ServerResponse on the engine. The application sets a status and
// fields and writes a body, as on node; what it writes becomes an engine
// Response (src/http/message/response.ts), and the engine's writer frames
// and writes every byte: the status line, the fields (checked: no header
// injection), Date, Content-Length or chunked framing, Connection.
//
// A response ended in one call (end(body), what most frameworks do) goes to
// the engine whole, and leaves in one write with its Content-Length. One
// written in pieces (write(), flushHeaders(), a pipe) goes as a stream, the
// engine asking for each piece once the socket has taken the last (so a
// client that does not read stops the writer: write() returns false, then
// 'drain'). A Content-Length the application sets frames the body, and is
// checked: a body that does not match it throws ERR_HTTP_CONTENT_LENGTH_MISMATCH
// as node's strictContentLength does, before the head goes out when the body
// is given whole, and the engine cuts the connection rather than misframe a
// stream that turns out longer or shorter.
//
// Every member of node's ServerResponse.prototype and OutgoingMessage.prototype
// is an own property (own-members.ts); node's framing methods (_send,
// _writeRaw, _storeHeader, ...) throw here, so they can never write.

import type { Socket } from "node:net";
import { Readable } from "node:stream";
import { checkToken, checkValue, type FieldValue, type Response } from "../http/message/response.js";
import { statusAllowsBody } from "../http/message/status.js";
import { headersSent, nodeError, notOffered } from "./errors.js";
import { heldOutHeaders, madeOutHeaders, noOutHeaders, outHeaders, type HeaderValue } from "./out-headers.js";
import { endQuietly, kFlow, noteRouterMark, type IncomingRequest } from "./request.js";
import { LeanStream } from "./stream-base.js";

/** Where the response goes: its answer, to the engine, once; and word that it left whole. */
export interface Answering {
  answer(response: Response): void;
  done(): void;
  /** No response waits behind this one for the socket: done() emits no 'socket' event. */
  alone(): boolean;
}

/** A piece of a body written in pieces, and its write's callback. */
interface Piece {
  piece: Buffer | string;
  callback: (() => void) | undefined;
}

/** Where a response stands; one per response, under a symbol so that no framework's names can meet it. */
interface OutState {
  readonly exchange: Answering;
  /** The connection closes after this response (server.maxRequestsPerSocket). */
  readonly lastOnConnection: boolean;
  /** The engine has the response (its head is going out). */
  started: boolean;
  /** A body in pieces: what is written and not yet taken, with each write's callback; null until the first (most responses are ended in one call). */
  queue: Piece[] | null;
  queued: number;
  /** The engine's wait for the next piece, when the queue was empty. */
  wake: (() => void) | null;
  /** The callback of the piece the engine took last: called when it asks for the next (the socket took it). */
  taken: (() => void) | undefined;
  /** Bytes written so far, against a declared Content-Length. */
  written: number;
  declared: number;
  trailers: Record<string, FieldValue> | undefined;
  /** Whether the status and method let a body be sent at all (not HEAD, 204, 304). */
  withBody: boolean;
}

export const kOut = Symbol("startline.response");

/** node's default: a writer stops when this much waits unsent. */
const HIGH_WATER_MARK = 16 * 1024;

/**
 * Fields the engine writes itself, or that frame the message: what setHeader
 * does with each (the value is kept, for getHeader, either way).
 */
function checkSpecial(lower: string, value: HeaderValue): void {
  switch (lower) {
    case "content-length":
      if (!(typeof value === "number" ? Number.isSafeInteger(value) && value >= 0 : typeof value === "string" && /^\d{1,15}$/.test(value.trim()))) {
        throw nodeError(TypeError, "ERR_HTTP_INVALID_HEADER_VALUE", `Invalid value "${String(value)}" for header "Content-Length": a number of bytes`);
      }
      return;
    case "transfer-encoding":
      if (String(value).trim().toLowerCase() !== "chunked") throw notOffered(`Transfer-Encoding: ${String(value)}`, "startline frames a body by its Content-Length, or chunked when it has none");
      return;
    case "date":
      throw notOffered("Setting Date", "startline writes the Date field of every response itself");
    case "keep-alive":
    case "upgrade":
      throw notOffered(`Setting ${lower}`, "startline's writer owns the connection's fields; for an upgrade, answer on the socket of the server's 'upgrade' event");
    case "x-content-type-options":
      if (String(value).trim().toLowerCase() !== "nosniff") throw notOffered(`X-Content-Type-Options: ${String(value)}`, "startline sends nosniff on every response");
      return;
  }
}

/** What node's own setHeader refuses in a value: anything but tab, visible ASCII, space and 0x80 to 0xFF. */
const NODE_REFUSES = /[^\t\x20-\x7e\x80-\xff]/;

/**
 * ERR_INVALID_CHAR for a value `what` names: node's own message when node
 * would refuse it too (frameworks log and send that message, and tests match
 * it), the reason added when only startline's writer refuses it.
 */
function invalidChar(what: string, value: string): Error {
  if (NODE_REFUSES.test(value)) return nodeError(TypeError, "ERR_INVALID_CHAR", `Invalid character in ${what}`);
  return nodeError(TypeError, "ERR_INVALID_CHAR", `Invalid character in ${what}: startline writes visible ASCII, spaces and tabs only (no bytes above 0x7F)`);
}

/**
 * Field names lower-cased, each once: an app sets and reads the same few
 * names on every response (Express's res.send alone reads or sets six), and
 * a name lower-cased anew is a new string each time, which V8 must also
 * look up in its string table at every use as a key; the kept one is found
 * by identity. At most MAX_LOWERED names, the first ones seen (they are
 * the app's, not the client's).
 */
const lowered = new Map<string, string>();
const MAX_LOWERED = 256;

function lowerName(name: string): string {
  let lower = lowered.get(name);
  if (lower === undefined) {
    lower = name.toLowerCase();
    if (lowered.size < MAX_LOWERED) lowered.set(name, lower);
  }
  return lower;
}

function checkField(name: string, value: HeaderValue | undefined): HeaderValue {
  if (typeof name !== "string") throw nodeError(TypeError, "ERR_INVALID_HTTP_TOKEN", `Header name must be a valid HTTP token ["${String(name)}"]`);
  try {
    checkToken(name);
  } catch {
    throw nodeError(TypeError, "ERR_INVALID_HTTP_TOKEN", `Header name must be a valid HTTP token ["${name}"]`);
  }
  if (value === undefined) throw nodeError(TypeError, "ERR_HTTP_INVALID_HEADER_VALUE", `Invalid value "undefined" for header "${name}"`);
  // A single value (Koa sets two a response, Express six) checked as it is: no list made around it to loop over.
  if (Array.isArray(value)) for (const v of value as readonly unknown[]) checkOneValue(name, String(v));
  else checkOneValue(name, String(value));
  checkSpecial(lowerName(name), value);
  return Array.isArray(value) ? (value as readonly unknown[]).map(String) : (value as string | number);
}

function checkOneValue(name: string, value: string): void {
  try {
    checkValue(name, value);
  } catch {
    throw invalidChar(`header content ["${name}"]`, value);
  }
}

export class ServerResponseOnEngine extends LeanStream {
  statusCode = 200;
  statusMessage: string | undefined = undefined;
  sendDate = true;
  strictContentLength = true;
  chunkedEncoding = false;
  useChunkedEncodingByDefault = true;
  shouldKeepAlive: boolean;
  req: IncomingRequest;
  socket: Socket | null;
  connection: Socket | null;
  /** node's rendered head, when there is one; here a summary (its status line): truthy once the head is final. */
  _header: string | null = null;
  _headerSent = false;
  headersSent = false;
  finished = false;
  writableEnded = false;
  writableFinished = false;
  writableNeedDrain = false;
  writableLength = 0;
  writableHighWaterMark = HIGH_WATER_MARK;
  writableObjectMode = false;
  writableCorked = 0;
  /**
   * True for the response's whole life, as node's is (after end(), and after the client went): stream.finished()
   * reads a legacy stream that is no longer writable at 'close' as finished, and would miss a client that left.
   */
  writable = true;
  destroyed = false;
  closed = false;
  errored: Error | null = null;
  /** Express's res.locals, declared before Express swaps the prototype: see IncomingRequest's `next` (request.ts). */
  locals: unknown = undefined;
  /**
   * on-finished's queue of listeners (Koa and Express call it for every
   * response), declared as `locals` is: added afterwards, it was a store
   * that moves every response to another hidden class (and, behind a
   * prototype swap, to one of its own). on-finished reads only whether it
   * is set.
   */
  __onFinished: unknown = undefined;
  [kOut]: OutState;

  constructor(req: IncomingRequest, exchange: Answering, lastOnConnection: boolean) {
    super();
    this.req = req;
    this.socket = req.socket;
    this.connection = req.socket;
    this.shouldKeepAlive = !lastOnConnection;
    this[kOut] = {
      exchange,
      lastOnConnection,
      started: false,
      queue: null,
      queued: 0,
      wake: null,
      taken: undefined,
      written: 0,
      declared: -1,
      trailers: undefined,
      withBody: req.method !== "HEAD",
    };
    // No fields yet, where node's own setHeader finds them (out-headers.ts): made with the first one set.
    noOutHeaders(this);
    // node's ServerResponse.prototype and OutgoingMessage.prototype, member for member (own-members.ts).
    this.setHeader = setHeader;
    this.setHeaders = setHeaders;
    this.appendHeader = appendHeader;
    this.getHeader = getHeader;
    this.getHeaders = getHeaders;
    this.getHeaderNames = getHeaderNames;
    this.getRawHeaderNames = getRawHeaderNames;
    this.hasHeader = hasHeader;
    this.removeHeader = removeHeader;
    this.writeHead = writeHead;
    this.writeHeader = writeHead;
    this._implicitHeader = implicitHeader;
    this.flushHeaders = flushHeaders;
    this.write = write;
    this.end = end;
    this.addTrailers = addTrailers;
    this.writeContinue = writeContinue;
    this.cork = cork;
    this.uncork = uncork;
    this.setTimeout = setResponseTimeout;
    this.destroy = destroyResponse;
    this.pipe = cannotPipe;
    this.writeProcessing = writeProcessing;
    this.writeEarlyHints = writeEarlyHints;
    this.assignSocket = assignSocket;
    this.detachSocket = detachSocket;
    // node's framing: never to run here, whatever prototype the response is given.
    this._send = framing;
    this._writeRaw = framing;
    this._storeHeader = framing;
    this._renderHeaders = framing;
    this._finish = framing;
    this._flush = framing;
    this._flushOutput = framing;
  }

  declare setHeader: typeof setHeader;
  declare setHeaders: typeof setHeaders;
  declare appendHeader: typeof appendHeader;
  declare getHeader: typeof getHeader;
  declare getHeaders: typeof getHeaders;
  declare getHeaderNames: typeof getHeaderNames;
  declare getRawHeaderNames: typeof getRawHeaderNames;
  declare hasHeader: typeof hasHeader;
  declare removeHeader: typeof removeHeader;
  declare writeHead: typeof writeHead;
  declare writeHeader: typeof writeHead;
  declare _implicitHeader: typeof implicitHeader;
  declare flushHeaders: typeof flushHeaders;
  declare write: typeof write;
  declare end: typeof end;
  declare addTrailers: typeof addTrailers;
  declare writeContinue: typeof writeContinue;
  declare cork: typeof cork;
  declare uncork: typeof uncork;
  declare setTimeout: typeof setResponseTimeout;
  declare destroy: typeof destroyResponse;
  declare writeProcessing: () => never;
  declare writeEarlyHints: () => never;
  declare assignSocket: () => never;
  declare detachSocket: () => never;
  declare _send: () => never;
  declare _writeRaw: () => never;
  declare _storeHeader: () => never;
  declare _renderHeaders: () => never;
  declare _finish: () => never;
  declare _flush: () => never;
  declare _flushOutput: () => never;
}

type Res = ServerResponseOnEngine;

function offeredNot(what: string, instead: string): () => never {
  return () => {
    throw notOffered(what, instead);
  };
}

// Made once, not per response: every response shares them.
const writeProcessing = offeredNot("writeProcessing() (102 Processing)", "startline sends no interim response but 100 Continue, which it sends itself");
const writeEarlyHints = offeredNot("writeEarlyHints() (103 Early Hints)", "startline sends no interim response but 100 Continue, which it sends itself");
const assignSocket = offeredNot("assignSocket()", "the engine owns the connection's socket");
const detachSocket = offeredNot("detachSocket()", "the engine owns the connection's socket");

function framing(): never {
  throw nodeError(Error, "ERR_STARTLINE_NOT_OFFERED", "node's own framing of a response does not run on startline: its writer frames every response");
}

function cannotPipe(this: Res): never {
  throw nodeError(Error, "ERR_STREAM_CANNOT_PIPE", "Cannot pipe, not readable");
}

// ---- Fields ----

function setHeader(this: Res, name: string, value: HeaderValue): Res {
  if (this._header !== null) throw headersSent("set headers");
  const checked = checkField(name, value);
  outHeaders(this)[lowerName(name)] = [name, checked, checked];
  return this;
}

function setHeaders(this: Res, headers: Headers | Map<string, HeaderValue>): Res {
  if (this._header !== null) throw headersSent("set headers");
  if (headers === null || typeof headers !== "object" || typeof headers.forEach !== "function") {
    throw nodeError(TypeError, "ERR_INVALID_ARG_TYPE", 'The "headers" argument must be an instance of Headers or Map');
  }
  const cookies: string[] = [];
  (headers as Map<string, HeaderValue>).forEach((value, name) => {
    if (name.toLowerCase() === "set-cookie") cookies.push(...(Array.isArray(value) ? value : [String(value)]));
    else this.setHeader(name, value);
  });
  if (cookies.length > 0) this.setHeader("set-cookie", cookies);
  return this;
}

function appendHeader(this: Res, name: string, value: HeaderValue): Res {
  if (this._header !== null) throw headersSent("append headers");
  const checked = checkField(name, value);
  const fields = outHeaders(this);
  const lower = lowerName(name);
  const before = fields[lower];
  if (before === undefined) fields[lower] = [name, checked, checked];
  else {
    const list = (Array.isArray(before[1]) ? before[1] : [String(before[1])]) as string[];
    before[1] = list.concat(Array.isArray(checked) ? (checked as string[]) : [String(checked)]);
  }
  return this;
}

function getHeader(this: Res, name: string): HeaderValue | undefined {
  if (typeof name !== "string") throw nodeError(TypeError, "ERR_INVALID_ARG_TYPE", 'The "name" argument must be of type string');
  return heldOutHeaders(this)[lowerName(name)]?.[1];
}

function getHeaders(this: Res): Record<string, HeaderValue> {
  const out = Object.create(null) as Record<string, HeaderValue>;
  const fields = heldOutHeaders(this);
  for (const lower of Object.keys(fields)) out[lower] = fields[lower]![1];
  return out;
}

function getHeaderNames(this: Res): string[] {
  return Object.keys(heldOutHeaders(this));
}

function getRawHeaderNames(this: Res): string[] {
  return Object.values(heldOutHeaders(this)).map((field) => field[0]);
}

function hasHeader(this: Res, name: string): boolean {
  if (typeof name !== "string") throw nodeError(TypeError, "ERR_INVALID_ARG_TYPE", 'The "name" argument must be of type string');
  return heldOutHeaders(this)[lowerName(name)] !== undefined;
}

function removeHeader(this: Res, name: string): void {
  if (typeof name !== "string") throw nodeError(TypeError, "ERR_INVALID_ARG_TYPE", 'The "name" argument must be of type string');
  if (this._header !== null) throw headersSent("remove headers");
  delete outHeaders(this)[lowerName(name)];
}

// ---- The head ----

/**
 * writeHead(status[, statusMessage][, headers]), headers an object or node's
 * flat [name, value, name, value...] list (whose names replace the fields set
 * before, and may repeat). The head is final from here, as on node; it
 * leaves with the first write, end() or flushHeaders().
 */
function writeHead(this: Res, status: number, message?: string | Record<string, HeaderValue> | readonly unknown[], headers?: Record<string, HeaderValue> | readonly unknown[]): Res {
  if (this._header !== null) throw headersSent("write headers");
  let fields = headers;
  if (typeof message === "string") this.statusMessage = message;
  else fields = message;
  const code = Number(status) | 0;
  if (code < 100 || code > 999) throw nodeError(RangeError, "ERR_HTTP_INVALID_STATUS_CODE", `Invalid status code: ${String(status)}`);
  if (code < 200 || code > 599) {
    throw notOffered(`Status ${code}`, "startline writes final responses of 200 to 599; 100 Continue it sends itself, and a 101 is written on the socket of the server's 'upgrade' event");
  }
  this.statusCode = code;
  // Every field is checked before any is set: a refused one leaves none of the others behind, as node's
  // writeHead does with the object it is given (Fastify answers its own 500 on the same response after such a throw).
  if (Array.isArray(fields)) {
    if (fields.length % 2 !== 0) throw nodeError(TypeError, "ERR_INVALID_ARG_VALUE", "The argument 'headers' must be an object or a flat list of names and values");
    for (let i = 0; i < fields.length; i += 2) if (fields[i]) checkField(String(fields[i]), fields[i + 1] as HeaderValue);
    for (let i = 0; i < fields.length; i += 2) this.removeHeader(String(fields[i]));
    for (let i = 0; i < fields.length; i += 2) if (fields[i]) this.appendHeader(String(fields[i]), fields[i + 1] as HeaderValue);
  } else if (fields !== undefined && fields !== null) {
    const given = fields as Record<string, HeaderValue>;
    const names = Object.keys(given).filter((name) => name !== "");
    const checked = names.map((name) => checkField(name, given[name]));
    const out = outHeaders(this);
    for (let i = 0; i < names.length; i++) out[lowerName(names[i]!)] = [names[i]!, checked[i]!, checked[i]!];
  }
  const reason = this.statusMessage === undefined ? undefined : String(this.statusMessage);
  const line = reason === undefined ? summaryLine(code) : reasonLine(code, reason);
  const out = madeOutHeaders(this);
  // Checked again before the head is final: a field set through node's own OutgoingMessage.prototype.setHeader
  // (out-headers.ts) was checked by node's rules only, and the writer's are stricter. Nothing has changed yet if one throws.
  // A string or number still the one our setHeader checked is not checked twice; a list may have grown in place.
  // No field ever set (res.end("hi")): nothing to check, and no list of names made to find that out.
  if (out !== null) {
    for (const lower of Object.keys(out)) {
      const field = out[lower]!;
      if (typeof field[1] !== "object" && field[1] === field[2]) continue;
      field[1] = checkField(field[0], field[1]);
    }
  }
  const state = this[kOut];
  state.withBody = state.withBody && statusAllowsBody(code);
  const length = out?.["content-length"];
  const chunked = out?.["transfer-encoding"] !== undefined;
  state.declared = length === undefined || chunked ? -1 : Number(String(length[1]).trim());
  this.chunkedEncoding = state.declared < 0 && state.withBody;
  this._header = line;
  this.headersSent = true;
  return this;
}

/** `_header` without a reason phrase, by status: made once each, not a new string for every response. */
const summaries: string[] = [];

function summaryLine(code: number): string {
  return (summaries[code] ??= `HTTP/1.1 ${code}\r\n`);
}

/**
 * `_header` with a reason phrase, the reason checked: the last one given with
 * each status is kept with its line, so that the same one again (Koa sets
 * statusMessage to the standard phrase on every response) is neither checked
 * nor joined into a new string again. Any other reason is checked and kept
 * instead, one per status, so the table stays as small as the statuses.
 */
const reasonLines: ({ reason: string; line: string } | undefined)[] = [];

function reasonLine(code: number, reason: string): string {
  const kept = reasonLines[code];
  if (kept !== undefined && kept.reason === reason) return kept.line;
  try {
    checkValue("statusMessage", reason);
  } catch {
    throw invalidChar("statusMessage", reason);
  }
  const line = `HTTP/1.1 ${code} ${reason}\r\n`;
  reasonLines[code] = { reason, line };
  return line;
}

/** node's: the head as it stands, when the body starts without writeHead() (through writeHead, which code such as on-headers wraps). */
function implicitHeader(this: Res): void {
  this.writeHead(this.statusCode);
}

/**
 * The engine's response (src/http/message/response.ts): status, reason, the
 * fields it does not write itself, the framing the application asked for. A
 * class, so that every response has one shape and its two callbacks are
 * methods, not closures made per response.
 */
class EngineAnswer implements Response {
  readonly status: number;
  readonly reason: string | undefined;
  readonly headers: Record<string, FieldValue> | undefined;
  readonly body: string | Buffer | AsyncIterable<string | Buffer> | undefined;
  readonly length: number | undefined;
  readonly close: boolean;
  private readonly res: Res;

  constructor(res: Res, headers: Record<string, FieldValue> | undefined, body: EngineAnswer["body"], declared: number, close: boolean) {
    this.status = res.statusCode;
    this.reason = res.statusMessage === undefined ? undefined : String(res.statusMessage);
    this.headers = headers;
    this.body = body;
    this.length = declared < 0 ? undefined : declared;
    this.close = close;
    this.res = res;
  }

  /** Asked for once a chunked body's last piece is out: addTrailers() may come after the head. */
  trailers(): Readonly<Record<string, FieldValue>> | undefined {
    return this.res[kOut].trailers;
  }

  /**
   * The engine handed the whole response to the socket: 'finish' and the
   * rest, on a tick of their own, as node emits them after its write; at
   * once when no event of theirs would reach anyone (quietlySent).
   */
  onSent(): void {
    const res = this.res;
    if (quietlySent(res)) sent(res);
    else process.nextTick(sent, res);
  }
}

function engineResponse(res: Res, body: EngineAnswer["body"], declared: number): Response {
  if (res.sendDate !== true) throw notOffered("sendDate = false", "startline writes the Date field of every response");
  const state = res[kOut];
  let close = state.lastOnConnection;
  const fields = madeOutHeaders(res);
  // No field ever set: the engine takes no fields object at all (its writer skips an undefined one).
  if (fields === null) return new EngineAnswer(res, undefined, body, declared, close);
  const headers: Record<string, FieldValue> = {};
  for (const lower of Object.keys(fields)) {
    // Every field was checked when the head became final (writeHead).
    const [name, checked] = fields[lower]!;
    switch (lower) {
      case "content-length":
      case "transfer-encoding":
      case "x-content-type-options":
        continue;
      case "connection":
        if (/(?:^|,)\s*close\s*(?:,|$)/i.test(String(checked))) close = true;
        continue;
    }
    // A field named __proto__ is a field, as node sends it: a store would set the object's prototype and drop it.
    // Defined for that name alone, so that every other response's fields object is a plain literal (no prototype
    // set on each, which costs V8 a change of hidden class).
    if (lower === "__proto__") Object.defineProperty(headers, name, { value: checked, enumerable: true, writable: true, configurable: true });
    else headers[name] = checked as FieldValue;
  }
  return new EngineAnswer(res, headers, body, declared, close);
}

/** node's own emit: a response whose emit is another (wrapped by some library) has every event emitted through it. */
const EMIT = LeanStream.prototype.emit;
const REQUEST_EMIT = Readable.prototype.emit;

/**
 * Whether `sent` may run as the engine hands the response to the socket,
 * rather than on a turn of the tick queue of its own (the queueing and the
 * turn, which was all a bare listener's response still took one for). It
 * may when nothing it does is an event anyone hears: the response and its
 * request have node's own emit, the response no 'prefinish', 'finish' or
 * 'close' listener (end(callback) adds a 'finish' one), the request no
 * listener at all, and no response waits behind this one for the socket
 * (done() would emit its 'socket' event). What is left to see is the
 * state `sent` sets (writableFinished, the request ended and closed, the
 * response destroyed) a turn earlier: code the listener deferred with
 * process.nextTick sees the response finished, as it sees node's
 * writableFinished, a getter true once end() wrote to the socket.
 * Otherwise every event keeps its tick, after what the listener deferred,
 * as on node. test/node/quiet-end.test.ts holds both ways.
 */
function quietlySent(res: Res): boolean {
  const req = res.req;
  if (res.emit !== EMIT || req._eventsCount !== 0 || req.emit !== REQUEST_EMIT) return false;
  const events = (res as unknown as { _events: Record<string, unknown> })._events;
  return events.prefinish === undefined && events.finish === undefined && events.close === undefined && res[kOut].exchange.alone();
}

/** The engine handed the whole response to the socket: 'prefinish', 'finish', then 'close', as node emits them; a body nobody read is dropped. */
function sent(res: Res): void {
  noteRouterMark(res.req);
  res[kOut].exchange.done();
  res.writableFinished = true;
  res.writableLength = 0;
  // Emitted to nobody, an event is nothing but the call (and the list of its arguments node's emit makes): not made.
  const events = (res as unknown as { _events: Record<string, unknown> })._events;
  const emits = res.emit !== EMIT;
  if (emits || events.prefinish !== undefined) res.emit("prefinish");
  if (emits || events.finish !== undefined) res.emit("finish");
  const req = res.req;
  if ((!req.complete || !req.readableEnded) && !endQuietly(req)) req._dump();
  closeResponse(res);
}

/**
 * 'close' once, after 'finish' or when the client went first, on a tick of
 * its own. Nobody listening for it (a bare listener's response, most of
 * them), the tick would emit it to nobody and only mark the response
 * destroyed: that is done now instead, a turn of the tick queue less (node
 * queues its own before the application's 'finish' listeners run, so code
 * those listeners defer sees the response destroyed either way). A 'close'
 * listener added later than this hears nothing, as one added after node's
 * 'close' does. test/node/quiet-end.test.ts holds both ways.
 */
export function closeResponse(res: Res): void {
  if (res.closed) return;
  res.closed = true;
  if (res.emit === EMIT && (res as unknown as { _events: Record<string, unknown> })._events.close === undefined) res.destroyed = true;
  else process.nextTick(emitClose, res);
}

/** As node's: a response is destroyed once closed, so that a late write only calls back (afterEnd). */
function emitClose(res: Res): void {
  res.destroyed = true;
  res.emit("close");
}

/** The client went before the response was whole: writing stops, and what waits is dropped. */
export function clientGone(res: Res): void {
  const state = res[kOut];
  state.queue = null;
  state.queued = 0;
  res.destroyed = true;
  if (state.wake !== null) {
    const wake = state.wake;
    state.wake = null;
    wake();
  }
  if (!res.writableFinished) closeResponse(res);
}

/** A body in pieces: the engine takes each when the socket has taken the last. */
function pieces(res: Res): AsyncIterable<string | Buffer> {
  const state = res[kOut];
  const next = (): Promise<IteratorResult<string | Buffer>> => {
    // The engine asks for the next piece once the socket has taken the last: that write is done.
    const taken = state.taken;
    state.taken = undefined;
    taken?.();
    const item = state.queue?.shift();
    if (item !== undefined) {
      state.queued -= typeof item.piece === "string" ? item.piece.length : item.piece.length;
      res.writableLength = state.queued;
      state.taken = item.callback;
      if (res.writableNeedDrain && state.queued < HIGH_WATER_MARK) {
        res.writableNeedDrain = false;
        process.nextTick(() => res.emit("drain"));
      }
      return Promise.resolve({ value: item.piece, done: false });
    }
    if (res.writableEnded || res.closed) return Promise.resolve({ value: undefined, done: true });
    return new Promise<void>((resume) => (state.wake = resume)).then(next);
  };
  return {
    [Symbol.asyncIterator]: () => ({
      next,
      // The engine stopped: the client went, or the socket failed.
      return: () => {
        clientGone(res);
        return Promise.resolve({ value: undefined, done: true });
      },
    }),
  };
}

/** Hands the engine a response whose body follows in pieces (after write(), flushHeaders()). */
function startPieces(res: Res): void {
  const state = res[kOut];
  if (res._header === null) res._implicitHeader();
  state.started = true;
  res._headerSent = true;
  const declared = state.withBody || res.req.method === "HEAD" ? state.declared : -1;
  // A response without a body (HEAD, 204, 304): its head alone; an answer to HEAD announces what GET would frame by.
  const body = state.withBody || (res.req.method === "HEAD" && declared < 0) ? pieces(res) : undefined;
  state.exchange.answer(engineResponse(res, body, declared));
}

function flushHeaders(this: Res): void {
  if (!this[kOut].started) startPieces(this);
}

// ---- The body ----

function chunkOf(chunk: unknown, encoding: BufferEncoding | undefined): string | Buffer {
  if (typeof chunk === "string") return encoding === undefined || encoding === "utf8" || encoding === "utf-8" ? chunk : Buffer.from(chunk, encoding);
  if (chunk instanceof Uint8Array) return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  throw nodeError(TypeError, "ERR_INVALID_ARG_TYPE", 'The "chunk" argument must be of type string or an instance of Buffer or Uint8Array');
}

const byteLength = (piece: string | Buffer): number => (typeof piece === "string" ? Buffer.byteLength(piece) : piece.length);
const sizeOf = (piece: string | Buffer | undefined): number => (piece === undefined ? 0 : byteLength(piece));

function mismatch(declared: number, actual: number): Error {
  return nodeError(Error, "ERR_HTTP_CONTENT_LENGTH_MISMATCH", `Response body's content-length of ${actual} byte(s) does not match the content-length of ${declared} byte(s) set in header`);
}

/**
 * A write after end(): its callback hears the error, and the response emits
 * it too unless it is destroyed by then (closed, or the client went), as
 * node's does, so that a late write (a timer after the answer) cannot crash
 * the process through an 'error' nobody listens for.
 */
function afterEnd(res: Res, callback: ((error?: Error | null) => void) | undefined): false {
  const error = nodeError(Error, "ERR_STREAM_WRITE_AFTER_END", "write after end");
  if (res.destroyed) {
    if (callback !== undefined) process.nextTick(callback, error);
    return false;
  }
  process.nextTick(() => {
    callback?.(error);
    if (!res.destroyed) res.emit("error", error);
  });
  return false;
}

function write(this: Res, chunk: unknown, encoding?: BufferEncoding | ((error?: Error | null) => void), callback?: (error?: Error | null) => void): boolean {
  if (typeof encoding === "function") {
    callback = encoding;
    encoding = undefined;
  }
  // node takes null for an absent encoding or callback (Fastify passes both).
  if (typeof callback !== "function") callback = undefined;
  if (typeof encoding !== "string") encoding = undefined;
  if (this.writableEnded) return afterEnd(this, callback);
  const piece = chunkOf(chunk, encoding);
  const state = this[kOut];
  if (!state.started) startPieces(this);
  if (this.destroyed) {
    // As node's: the client went (or the response was destroyed), so nothing more will leave; the writer hears it
    // through its callback and a false, and no 'error' is emitted.
    const error = nodeError(Error, "ERR_STREAM_DESTROYED", "Cannot call write after a stream was destroyed");
    if (callback !== undefined) process.nextTick(callback, error);
    return false;
  }
  if (!state.withBody) {
    // node drops what is written to a response without a body (HEAD, 204, 304).
    if (callback !== undefined) process.nextTick(callback);
    return true;
  }
  const size = byteLength(piece);
  if (state.declared >= 0 && state.written + size > state.declared) throw mismatch(state.declared, state.written + size);
  state.written += size;
  if (size === 0) {
    if (callback !== undefined) process.nextTick(callback);
    return true;
  }
  (state.queue ??= []).push({ piece, callback: callback === undefined ? undefined : () => callback!() });
  state.queued += typeof piece === "string" ? piece.length : piece.length;
  this.writableLength = state.queued;
  if (state.wake !== null) {
    const wake = state.wake;
    state.wake = null;
    wake();
  }
  if (state.queued >= HIGH_WATER_MARK) this.writableNeedDrain = true;
  return !this.writableNeedDrain;
}

function end(this: Res, chunk?: unknown, encoding?: BufferEncoding | (() => void), callback?: () => void): Res {
  if (typeof chunk === "function") {
    callback = chunk as () => void;
    chunk = undefined;
  } else if (typeof encoding === "function") {
    callback = encoding;
    encoding = undefined;
  }
  if (typeof callback !== "function") callback = undefined;
  if (typeof encoding !== "string") encoding = undefined;
  if (this.writableEnded) {
    if (callback !== undefined) process.nextTick(callback);
    return this;
  }
  const state = this[kOut];
  const piece = chunk === undefined || chunk === null ? undefined : chunkOf(chunk, encoding as BufferEncoding | undefined);
  if (callback !== undefined) this.once("finish", callback);
  if (!state.started) {
    // Whole: the engine writes head and body in one, with its Content-Length, checked before the head is final.
    // The body's size is measured only when there is a length to hold it to (most answers set none: the engine
    // frames the body by its own count), and the fields looked up only when one was ever set (res.end("hi") sets
    // none, and the empty stand-in heldOutHeaders reads is a dictionary: a hashed lookup for each name).
    const fields = madeOutHeaders(this);
    const field = fields === null ? undefined : fields["content-length"];
    const chunked = fields !== null && fields["transfer-encoding"] !== undefined;
    if (this._header === null && field !== undefined && !chunked && this.req.method !== "HEAD" && Number(String(field[1]).trim()) !== sizeOf(piece)) {
      throw mismatch(Number(String(field[1]).trim()), sizeOf(piece));
    }
    if (this._header === null) this._implicitHeader();
    if (state.withBody && state.declared >= 0 && state.declared !== sizeOf(piece)) throw mismatch(state.declared, sizeOf(piece));
    state.started = true;
    this._headerSent = true;
    this.finished = true;
    this.writableEnded = true;
    if (chunked && state.withBody) {
      // Asked for chunked framing: a stream of one piece.
      if (piece !== undefined && sizeOf(piece) > 0) state.queue = [{ piece, callback: undefined }];
      state.exchange.answer(engineResponse(this, pieces(this), -1));
      return this;
    }
    const head = this.req.method === "HEAD";
    let body: string | Buffer | AsyncIterable<string | Buffer> | undefined = state.withBody ? piece ?? "" : undefined;
    let declared = -1;
    if (head) {
      // What GET would have framed by: the declared length, that of the body given, or (neither) chunked.
      declared = state.declared >= 0 ? state.declared : -1;
      body = declared >= 0 ? undefined : piece !== undefined ? piece : statusAllowsBody(this.statusCode) ? pieces(this) : undefined;
    }
    state.exchange.answer(engineResponse(this, body, declared));
    return this;
  }
  if (piece !== undefined) this.write(piece);
  this.finished = true;
  this.writableEnded = true;
  if (state.withBody && state.declared >= 0 && state.written !== state.declared) {
    // The engine cuts the connection when the stream ends short: the application hears why.
    const error = mismatch(state.declared, state.written);
    if (state.wake !== null) {
      const wake = state.wake;
      state.wake = null;
      wake();
    }
    throw error;
  }
  if (state.wake !== null) {
    const wake = state.wake;
    state.wake = null;
    wake();
  }
  return this;
}

function addTrailers(this: Res, headers: Record<string, HeaderValue> | readonly (readonly [string, HeaderValue])[]): void {
  const state = this[kOut];
  const entries = Array.isArray(headers) ? (headers as readonly (readonly [string, HeaderValue])[]) : Object.entries(headers as Record<string, HeaderValue>);
  for (const [name, value] of entries) {
    const checked = checkField(name, value);
    (state.trailers ??= {})[name] = checked as FieldValue;
  }
}

/**
 * The 100 Continue a 'checkContinue' listener held goes out (RFC 9110
 * §10.1.1). Otherwise the engine sent it itself once it awaited the body,
 * and there is nothing more to write.
 */
function writeContinue(this: Res, callback?: () => void): void {
  this.req[kFlow].link.sendContinue();
  if (typeof callback === "function") process.nextTick(callback);
}

function cork(this: Res): void {
  this.writableCorked++;
}

function uncork(this: Res): void {
  if (this.writableCorked > 0) this.writableCorked--;
}

function setResponseTimeout(this: Res, ms: number, callback?: () => void): Res {
  if (ms !== 0) throw notOffered("response.setTimeout()", "startline times every exchange itself; set server.headersTimeout and server.requestTimeout before listen()");
  if (callback !== undefined) this.on("timeout", callback);
  return this;
}

function destroyResponse(this: Res, error?: Error): Res {
  if (this.destroyed) return this;
  this.destroyed = true;
  this.errored = error ?? null;
  // A response still waiting for its turn has no socket yet (node destroys the one it gets, once it gets it): it is the request's.
  (this.socket ?? this.req.socket).destroy(error);
  return this;
}
