// Responses as plain data, and the writer that turns them into bytes.
//
// Handlers return a Response; they never touch a socket. The writer owns the
// framing fields (Date, Content-Length, Connection), so a handler cannot get
// them wrong, and it refuses any field a handler supplies that could break
// the message: a name that is not a token, or a value holding CR, LF, NUL or
// any other control character (RFC 9110 §5.5). Header injection is therefore
// impossible through this API, whatever a handler puts in a value.

import { TCHAR } from "../parse/byte-classes.js";
import { httpDate } from "./date.js";
import { REASONS, statusAllowsBody, statusLine } from "./status.js";
import { isBodyStream, type BodyStream } from "./stream-body.js";

export type { BodyStream } from "./stream-body.js";

/**
 * A field's value; a list for a field sent on several lines, which only
 * Set-Cookie needs (RFC 9110 §5.3: its values cannot be joined with commas).
 */
export type FieldValue = string | number | readonly string[];

export interface Response {
  readonly status: number;
  /** Field names as they should appear on the wire, e.g. "Content-Type". */
  readonly headers?: Readonly<Record<string, FieldValue>>;
  /**
   * The content: whole, or produced in pieces (an async iterable, sent with
   * chunked transfer coding as the client takes them; see stream-body.ts and connection/send-body.ts). An
   * iterable is not started when no body is sent (HEAD, 204, 304).
   */
  readonly body?: string | Uint8Array | BodyStream;
  /**
   * The status line's reason phrase, when not the standard one (node:http's
   * statusMessage; RFC 9112 §4: HTAB, SP and visible characters only).
   */
  readonly reason?: string;
  /**
   * The content's length as the handler declares it, for Content-Length: a
   * stream of this length is framed by it rather than chunked (and is cut,
   * with the connection, if it turns out longer or shorter), and an answer
   * to HEAD without a body announces it. A whole body must have exactly
   * this many bytes: the writer refuses it otherwise.
   */
  readonly length?: number;
  /** A chunked stream's trailer fields (RFC 9112 §7.1.2), asked for once its last piece is out. */
  readonly trailers?: () => Readonly<Record<string, FieldValue>> | undefined;
  /** The connection closes after this response (node:http's "Connection: close"). */
  readonly close?: boolean;
  /** Called once the response is handed to the socket whole (not when the client went away first). */
  readonly onSent?: () => void;
}

/** How the connection wants this response framed. */
export interface WriteOptions {
  /** A response to HEAD: every header field GET would send, no body (RFC 9110 §9.3.2). */
  readonly omitBody: boolean;
  /** The connection closes after this response: say so (RFC 9112 §9.6). */
  readonly close: boolean;
  /** An HTTP/1.0 client asked to keep the connection: confirm it (RFC 9112 §9.3). */
  readonly confirmKeepAlive: boolean;
  /** Field lines the server adds to every response, serialized by fieldLines(). */
  readonly extraFields?: string;
  /** The client reads chunked transfer coding (HTTP/1.1); otherwise a streamed body ends with the connection. */
  readonly chunked?: boolean;
}

export interface Serialized {
  /** Status line and header section, ASCII only, ending in the empty line. */
  readonly head: string;
  /** Head and body encoded once, for a remembered response: what the connection writes, with nothing to encode per request. */
  readonly bytes?: Buffer;
  /** The content to send after the head; absent for HEAD, 1xx, 204 and 304. */
  readonly body: string | Uint8Array | undefined;
  /** Length of the content in bytes, as announced (also for HEAD); 0 for a stream, counted as it is sent. */
  readonly bodyBytes: number;
  /** A body to send in pieces after the head (never together with `body`). */
  readonly stream?: BodyStream;
}

export class InvalidHeaderError extends TypeError {
  override readonly name = "InvalidHeaderError";
}

/** Fields the writer sets itself; a handler that sets one has a bug. */
const RESERVED = new Set(["content-length", "transfer-encoding", "connection", "date", "keep-alive", "upgrade", "x-content-type-options"]);

/**
 * On every response: a browser must take Content-Type as sent and never sniff
 * a JSON body into HTML or script (Fetch standard, "X-Content-Type-Options").
 */
const NOSNIFF = "X-Content-Type-Options: nosniff\r\n";

/** Names already checked, so a name is validated once per process, not per response. */
const checkedNames = new Set<string>();
const MAX_CHECKED_NAMES = 1024;

/** Visible ASCII, space and tab: what this server writes in a field value. */
const UNSAFE_VALUE = /[^\t\x20-\x7e]/;

/** Throws unless `name` is a token (RFC 9110 §5.1): what any field name written must be. */
export function checkToken(name: string): void {
  if (name.length === 0) throw new InvalidHeaderError("A header field name is empty");
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c > 0xff || TCHAR[c] !== 1) throw new InvalidHeaderError(`Header field name ${JSON.stringify(name)} is not a token`);
  }
}

function checkName(name: string): void {
  if (checkedNames.has(name)) return;
  checkToken(name);
  if (RESERVED.has(name.toLowerCase())) {
    throw new InvalidHeaderError(`Header field ${name} is set by the response writer; handlers must not set it`);
  }
  if (checkedNames.size < MAX_CHECKED_NAMES) checkedNames.add(name);
}

/** A reason phrase the writer may send: HTAB, SP and visible ASCII (RFC 9112 §4 allows obs-text; this writer does not). */
function checkedStatusLine(status: number, reason: string | undefined): string {
  // The standard phrase (what Koa sets on every response) is the status line built once, at load.
  if (reason === undefined || reason === REASONS[status]) return statusLine(status);
  if (UNSAFE_VALUE.test(reason)) throw new InvalidHeaderError("The reason phrase has a control or non-ASCII character; refusing to write it");
  return `HTTP/1.1 ${status} ${reason}\r\n`;
}

/** Throws unless the writer would send `value` (see UNSAFE_VALUE). */
export function checkValue(name: string, value: string): void {
  if (UNSAFE_VALUE.test(value)) {
    throw new InvalidHeaderError(`Header field ${name} has a value with a control or non-ASCII character; refusing to write it`);
  }
}

/** A frozen response's bytes, as last serialized: valid while the Date and the server's own fields are the same. */
interface Remembered {
  readonly date: string;
  readonly extraFields: string;
  readonly out: Serialized;
}

/**
 * Frozen responses (a status answer, a document built once, a compressed
 * copy: see compression.ts and policies/versions.ts) are taken as immutable, headers
 * included, so each is serialized at most once per Date value, i.e. once a
 * second, for the common framing (a keep-alive answer to GET or POST); every
 * request in between gets the very same Serialized object. The writer's
 * checks ran when it was built.
 */
const remembered = new WeakMap<Response, Remembered>();

/**
 * The response last written from memory, and its entry: a server asked for
 * one resource again and again (a health check, a benchmark) finds it by
 * identity, without the WeakMap's hash lookup. It keeps that one response
 * alive until another takes its place.
 */
let lastResponse: Response | null = null;
let lastRemembered: Remembered | undefined;

export function serialize(res: Response, opts: WriteOptions): Serialized {
  const date = httpDate();
  if (opts.omitBody || opts.close || opts.confirmKeepAlive) return serializeNow(res, opts, date);
  const extraFields = opts.extraFields ?? "";
  // Only frozen responses are remembered, and a frozen object stays frozen: a hit needs no isFrozen call.
  const known = res === lastResponse ? lastRemembered : remembered.get(res);
  if (known !== undefined && known.date === date && known.extraFields === extraFields) {
    // Stored only when it changes: a store of an object is a write barrier, on every request otherwise.
    if (res !== lastResponse) {
      lastResponse = res;
      lastRemembered = known;
    }
    return known.out;
  }
  if (!Object.isFrozen(res)) return serializeNow(res, opts, date);
  const out = serializeNow(res, opts, date);
  if (out.stream !== undefined) return out;
  const body = out.body;
  const bytes = Buffer.concat([Buffer.from(out.head, "latin1"), typeof body === "string" ? Buffer.from(body) : body ?? Buffer.alloc(0)]);
  // Spelled out, not spread from `out`: a copy made by spreading got a hidden class of its own each time
  // (each second, with the Date), and the connection's reads of these fields went megamorphic.
  const kept: Serialized = Object.freeze({ head: out.head, bytes, body: out.body, bodyBytes: out.bodyBytes });
  const entry: Remembered = { date, extraFields, out: kept };
  remembered.set(res, entry);
  lastResponse = res;
  lastRemembered = entry;
  return kept;
}

function serializeNow(res: Response, opts: WriteOptions, date: string): Serialized {
  const status = res.status;
  // A final response is 2xx to 5xx: a 1xx here would be read as interim, and every later
  // response on the connection would answer the wrong request (RFC 9110 §15.2).
  if (!Number.isInteger(status) || status < 200 || status > 599) throw new RangeError(`Invalid final status code ${status}`);
  const content = res.body;
  if (isBodyStream(content)) return serializeStream(res, content, opts);
  if (content !== undefined && typeof content !== "string" && !(content instanceof Uint8Array)) {
    throw new TypeError(`A response body must be a string, bytes or an async iterable of them, not ${typeof content}`);
  }
  let head = checkedStatusLine(status, res.reason) + "Date: " + date + "\r\n" + NOSNIFF + (opts.extraFields ?? "");
  if (res.headers !== undefined) head += fieldLines(res.headers);
  let body: string | Uint8Array | undefined;
  let bodyBytes = 0;
  if (statusAllowsBody(status)) {
    if (content !== undefined) {
      bodyBytes = typeof content === "string" ? Buffer.byteLength(content) : content.byteLength;
      if (!opts.omitBody && bodyBytes > 0) body = content;
    }
    const declared = res.length;
    if (declared !== undefined && declared !== bodyBytes) {
      // Only an answer to HEAD may announce content it does not carry (RFC 9110 §9.3.2).
      if (!(opts.omitBody && content === undefined && Number.isSafeInteger(declared) && declared >= 0)) {
        throw new RangeError(`The response declares ${declared} bytes of content and has ${bodyBytes}`);
      }
      bodyBytes = declared;
    }
    head += "Content-Length: " + bodyBytes + "\r\n";
  }
  if (opts.close) head += "Connection: close\r\n";
  else if (opts.confirmKeepAlive) head += "Connection: keep-alive\r\n";
  return { head: head + "\r\n", body, bodyBytes };
}

/**
 * A streamed body's head: chunked for HTTP/1.1 (RFC 9112 §7.1); for HTTP/1.0
 * no framing field at all, and the connection closes to end the body (RFC
 * 9112 §6.3, the connection must then close: `opts.close` is the caller's).
 */
function serializeStream(res: Response, stream: BodyStream, opts: WriteOptions): Serialized {
  let head = checkedStatusLine(res.status, res.reason) + "Date: " + httpDate() + "\r\n" + NOSNIFF + (opts.extraFields ?? "");
  if (res.headers !== undefined) head += fieldLines(res.headers);
  const withBody = statusAllowsBody(res.status);
  const declared = res.length;
  if (declared !== undefined && (!Number.isSafeInteger(declared) || declared < 0)) throw new RangeError(`A declared content length must be a whole number of bytes, not ${declared}`);
  if (withBody && declared !== undefined) head += "Content-Length: " + declared + "\r\n";
  else if (withBody && opts.chunked !== false) head += "Transfer-Encoding: chunked\r\n";
  if (opts.close) head += "Connection: close\r\n";
  else if (opts.confirmKeepAlive) head += "Connection: keep-alive\r\n";
  const send = withBody && !opts.omitBody;
  return send ? { head: head + "\r\n", body: undefined, bodyBytes: 0, stream } : { head: head + "\r\n", body: undefined, bodyBytes: 0 };
}

/** Checked field lines, "Name: value\r\n" each; also used once for fields sent on every response (HSTS). */
export function fieldLines(fields: Readonly<Record<string, FieldValue>>): string {
  let out = "";
  for (const name in fields) {
    const raw = fields[name]!;
    checkName(name);
    if (typeof raw === "object") {
      for (const value of raw) {
        checkValue(name, value);
        out += name + ": " + value + "\r\n";
      }
      continue;
    }
    const value = typeof raw === "string" ? raw : String(raw);
    checkValue(name, value);
    out += name + ": " + value + "\r\n";
  }
  return out;
}

/** The interim response of RFC 9110 §15.2.1, sent before reading a body the client held back. */
export const CONTINUE = "HTTP/1.1 100 Continue\r\n\r\n";
