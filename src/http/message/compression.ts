// Content codings (RFC 9110 §8.4, §12.5.3): a response of more than about
// 1 KiB, of a type that compresses, goes out as br or gzip when the request's
// Accept-Encoding asks for it. The work runs on libuv's thread pool (zlib's
// async API), never on the event loop, and a frozen response (a page, a
// document built once) is compressed once and remembered. A body sent in
// pieces (stream-body.ts: a long list, a large echo) is compressed piece by
// piece as the client reads it, so that it is still never held whole.
//
// Each coding is its own representation, so it gets its own entity tag: the
// coding's name is added inside the quotes ("abc" -> "abc+gzip"), and
// conditional.ts takes it off again before comparing, so a tag a client got
// with a compressed body still validates the resource (RFC 9110 §8.8.3).

import type { Duplex, Writable } from "node:stream";
import { promisify } from "node:util";
import zlib from "node:zlib";
import type { Handler, Service } from "../connection/service.js";
import { fieldListElements, trimOws } from "./field-lists.js";
import { headerValue, type Request } from "./request.js";
import type { FieldValue, Response } from "./response.js";
import { isBodyStream, type BodyStream } from "./stream-body.js";

export type Coding = "br" | "gzip";

/** Below this, a coding's own overhead and the CPU are not worth it. */
export const MIN_COMPRESS_BYTES = 1024;

const gzip = promisify(zlib.gzip);
const brotli = promisify(zlib.brotliCompress);
/** Quality 5 of 11: most of brotli's gain at a fraction of its top setting's CPU, for bodies made per request. */
export const BROTLI_OPTIONS = { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } };

const COMPRESSIBLE = /^(?:text\/|application\/(?:json|yaml|javascript|xml|[a-z0-9.+-]*\+(?:json|xml|yaml))\b)/i;
const CODING_SUFFIX = /\+(?:br|gzip)"$/;

/**
 * Whether a response of this type may go out coded, so that its selection
 * depends on Accept-Encoding (RFC 9110 §12.5.5). The type decides, not the
 * size of one body: a cache must key every representation of the resource
 * alike, and a 304, which has no body, must say what its 200 would.
 */
export function mayBeCoded(type: string): boolean {
  return COMPRESSIBLE.test(type);
}

/** The tag without a coding added by this module: what the resource itself is tagged. */
export function withoutCoding(tag: string): string {
  return tag.replace(CODING_SUFFIX, '"');
}

/**
 * The coding the client prefers among those offered (RFC 9110 §12.5.3), br
 * winning ties; null for identity. "*" stands for any coding not named; q=0
 * refuses one.
 */
export function chooseCoding(acceptEncoding: string | undefined): Coding | null {
  if (acceptEncoding === undefined) return null;
  const q = new Map<string, number>();
  for (const element of fieldListElements(acceptEncoding)) {
    const [name, ...params] = element.split(";");
    let weight = 1;
    for (const p of params) {
      const [k, v] = p.split("=").map(trimOws);
      if (k?.toLowerCase() === "q" && v !== undefined && /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(v)) weight = Number(v);
    }
    q.set(trimOws(name!).toLowerCase(), weight);
  }
  const weight = (coding: Coding) => q.get(coding) ?? q.get("*") ?? 0;
  const br = weight("br");
  const gz = weight("gzip");
  if (br <= 0 && gz <= 0) return null;
  return br >= gz ? "br" : "gzip";
}

/** Vary with Accept-Encoding in it; as it was when it already names that field (conditional.ts's cacheFields puts it there). */
export function addVary(vary: FieldValue | undefined): string {
  if (vary === undefined || vary === "") return "Accept-Encoding";
  const text = String(vary);
  return fieldListElements(text).some((name) => name.toLowerCase() === "accept-encoding") ? text : `${text}, Accept-Encoding`;
}

function encode(body: string | Uint8Array, coding: Coding): Promise<Buffer> {
  return coding === "br" ? brotli(body, BROTLI_OPTIONS) : gzip(body);
}

/**
 * A stream's coder keeps its state for the whole body, per connection: brotli
 * with a 256 KiB window (lgwin 18) instead of its 4 MiB default, and gzip's
 * default (a 32 KiB window), so that a client reading slowly costs a few
 * hundred KiB at most.
 */
export const STREAM_BROTLI_OPTIONS = { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5, [zlib.constants.BROTLI_PARAM_LGWIN]: 18 } };

function codedPieces(source: BodyStream, coding: Coding): AsyncGenerator<Buffer, void, undefined> {
  return piecesThrough(source, coding === "br" ? zlib.createBrotliCompress(STREAM_BROTLI_OPTIONS) : zlib.createGzip());
}

/**
 * The pieces of `source`, through `coder` (a zlib stream). Pulled like any
 * body stream: a piece of `source` is handed to the coder, and the next one
 * asked for only once the coder has consumed it (its write callback: the
 * producer may then reuse the piece's memory, see stream-body.ts); the coder
 * takes more input only as the connection asks for output, so one piece is
 * in hand at a time. Closing this early (the client went away) closes
 * `source` too.
 */
export async function* piecesThrough(source: BodyStream, coder: Duplex): AsyncGenerator<Buffer, void, undefined> {
  const pieces = source[Symbol.asyncIterator]();
  // Its failure (the source's, or the coder's) also surfaces in the loop below, which reads from the coder.
  feed(pieces, coder).catch((error: unknown) => coder.destroy(error as Error));
  try {
    for await (const piece of coder) yield piece as Buffer;
  } finally {
    coder.destroy();
    await pieces.return?.();
  }
}

/** Hands the coder the pieces one at a time, each once it consumed the last, then ends it. */
async function feed(pieces: AsyncIterator<string | Uint8Array>, coder: Writable): Promise<void> {
  for (;;) {
    const next = await pieces.next();
    if (next.done === true) break;
    if (!(await consumed(coder, next.value))) return;
  }
  coder.end();
}

/** Writes `piece` to the coder: true once the coder has consumed it, false if the coder closes first. */
function consumed(coder: Writable, piece: string | Uint8Array): Promise<boolean> {
  return new Promise((resolve) => {
    const closed = () => resolve(false);
    coder.once("close", closed);
    coder.write(piece, (error) => {
      coder.off("close", closed);
      resolve(error === null || error === undefined);
    });
  });
}

/** Frozen responses, compressed once per coding. */
const remembered = new WeakMap<Response, Partial<Record<Coding, Response>>>();

/** The fields of `response` coded with `coding`: the coding named, Vary, and the coding's own entity tag. */
function codedHeaders(response: Response, coding: Coding): Record<string, FieldValue> {
  const headers = response.headers ?? {};
  const etag = headers.ETag;
  return {
    ...headers,
    "Content-Encoding": coding,
    Vary: addVary(headers.Vary ?? headers.vary),
    ...(etag === undefined ? {} : { ETag: String(etag).replace(/"$/, `+${coding}"`) }),
  };
}

function compressed(response: Response, body: string | Uint8Array, coding: Coding): Response | Promise<Response> {
  const frozen = Object.isFrozen(response);
  const known = frozen ? remembered.get(response)?.[coding] : undefined;
  if (known !== undefined) return known;
  return encode(body, coding).then((encoded) => {
    const result: Response = { ...response, headers: codedHeaders(response, coding), body: encoded };
    if (frozen) remembered.set(response, { ...remembered.get(response), [coding]: Object.freeze(result) });
    return result;
  });
}

/**
 * Whether `text` is under `bytes` once UTF-8 encoded, mostly without encoding
 * it: each UTF-16 code unit takes 1 to 3 bytes, so the length alone decides
 * unless it lies between a third of the limit and the limit.
 */
function textSmallerThan(text: string, bytes: number): boolean {
  if (text.length >= bytes) return false;
  if (text.length * 3 < bytes) return true;
  return Buffer.byteLength(text) < bytes;
}

/**
 * What `response` becomes for `request`: compressed when worth it and asked
 * for, as it is otherwise. Only actual compression is asynchronous, so the
 * common small response costs no promise.
 */
export function negotiateCoding(request: Request, response: Response): Response | Promise<Response> {
  const body = response.body;
  const headers = response.headers;
  if (response.status === 304) return notModified(request, response);
  if (headers === undefined || body === undefined) return response;
  const stream = isBodyStream(body);
  // A stream's size is not known ahead: one that is sent in pieces is taken to be worth it.
  // A Uint8Array's length is its size in bytes (and, unlike .byteLength, compiled inline).
  const small = stream ? false : typeof body === "string" ? textSmallerThan(body, MIN_COMPRESS_BYTES) : body.length < MIN_COMPRESS_BYTES;
  if (small || headers["Content-Encoding"] !== undefined) return response;
  const type = headers["Content-Type"];
  if (type === undefined || !COMPRESSIBLE.test(String(type))) return response;
  // Whether or not this client gets it compressed, a cache must know the answer depends on Accept-Encoding.
  const coding = chooseCoding(headerValue(request, "accept-encoding"));
  if (coding === null) return { ...response, headers: { ...headers, Vary: addVary(headers.Vary ?? headers.vary) } };
  if (stream) return { ...response, headers: codedHeaders(response, coding), body: codedPieces(body, coding) };
  return compressed(response, body, coding);
}

/**
 * A 304 names the representation the client holds (RFC 9110 §15.4.5): when
 * its If-None-Match matched through a coded tag, the 304 carries that tag.
 */
function notModified(request: Request, response: Response): Response {
  const etag = response.headers?.ETag;
  const sent = headerValue(request, "if-none-match");
  if (etag === undefined || sent === undefined) return response;
  const tag = String(etag);
  const coded = fieldListElements(sent).find((t) => t !== tag && withoutCoding(t) === tag);
  return coded === undefined ? response : { ...response, headers: { ...response.headers, ETag: coded } };
}

/** The service with content codings applied to what its handler returns. */
export function withCompression<S extends Service>(service: S): S {
  const inner: Handler = service.handle;
  const handle: Handler = (request) => {
    const response = inner(request);
    return response instanceof Promise ? response.then((r) => negotiateCoding(request, r)) : negotiateCoding(request, response);
  };
  return { ...service, handle };
}
