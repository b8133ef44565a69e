// Bodies: /api/lab/bytes/:n answers n random bytes (the same n bytes again
// for the same ?seed=), /api/lab/stream-bytes/:n the same bytes sent in
// chunks of chunk_size, as the client takes them, /api/lab/stream/:n n lines
// of JSON, one per piece, chunked. All are bounded (1 MiB, 1,000 lines).

import { randomBytes } from "node:crypto";
import type { Request } from "../../http/message/request.js";
import type { BodyStream, Response } from "../../http/message/response.js";
import type { Scheme } from "./origin.js";
import { requestDict } from "./request-dict.js";
import { queryOf, refuse, whole } from "./params.js";

export const MAX_BYTES = 1024 * 1024;
export const MAX_LINES = 1000;
const MAX_SEED = 4294967295;

/**
 * `n` bytes from a 32-bit seed: mulberry32, a small generator whose whole
 * state is one number, so the same seed gives the same bytes on every
 * server and every version of Node. Not for secrets; unseeded requests get
 * crypto's bytes.
 */
export function seededBytes(n: number, seed: number): Buffer {
  const out = Buffer.allocUnsafe(n);
  let state = seed >>> 0;
  for (let i = 0; i < n; i += 4) {
    state = (state + 0x6d2b79f5) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    z = (z ^ (z >>> 14)) >>> 0;
    for (let k = 0; k < 4 && i + k < n; k++) out[i + k] = (z >>> (8 * k)) & 0xff;
  }
  return out;
}

export function bytesAnswer(request: Request, text: string): Response {
  const n = whole(request, "n", text, 0, MAX_BYTES);
  const { seed } = queryOf(request, ["seed"]);
  const body = seed === undefined ? randomBytes(n) : seededBytes(n, whole(request, "seed", seed, 0, MAX_SEED));
  return { status: 200, headers: { "Content-Type": "application/octet-stream" }, body };
}

export const NDJSON = "application/x-ndjson";

/**
 * Line i (from 0): httpbin's account of the request without its body (url,
 * args, headers, origin) and the line's id, as httpbin's stream gives them (a
 * request body up to 1 MiB repeated on 1,000 lines would make a 1 GiB answer
 * of one request). Asked for one at a time, as the socket takes them.
 */
async function* lines(n: number, request: Request, scheme: Scheme): AsyncGenerator<string, void, undefined> {
  const shown = requestDict(request, scheme, ["url", "args", "headers", "origin"]);
  for (let id = 0; id < n; id++) yield JSON.stringify({ ...shown, id }) + "\n";
}

export function streamAnswer(request: Request, scheme: Scheme, text: string): Response {
  const n = whole(request, "n", text, 1, MAX_LINES);
  const body: BodyStream = lines(n, request, scheme);
  return { status: 200, headers: { "Content-Type": NDJSON }, body };
}

export const DEFAULT_CHUNK_BYTES = 10 * 1024;
export const MAX_CHUNK_BYTES = 64 * 1024;
/** Chunks one answer may take: a 1-byte chunk costs its framing and a turn of the sender, not just its byte. */
export const MAX_CHUNKS = 16 * 1024;

/** n random (or seeded) bytes, in chunks of chunk_size, each made when the socket has taken the last. */
export function streamBytesAnswer(request: Request, text: string): Response {
  const n = whole(request, "n", text, 0, MAX_BYTES);
  const q = queryOf(request, ["seed", "chunk_size"]);
  const size = q.chunk_size === undefined ? DEFAULT_CHUNK_BYTES : whole(request, "chunk_size", q.chunk_size, 1, MAX_CHUNK_BYTES);
  if (Math.ceil(n / size) > MAX_CHUNKS) refuse(request, "chunk_size", `at least n / ${MAX_CHUNKS} (here ${Math.ceil(n / MAX_CHUNKS)})`, `${n} bytes in chunks of ${size} would be ${Math.ceil(n / size)} chunks, over ${MAX_CHUNKS}`);
  const seeded = q.seed === undefined ? undefined : seededBytes(n, whole(request, "seed", q.seed, 0, MAX_SEED));
  async function* chunks(): AsyncGenerator<Uint8Array, void, undefined> {
    for (let at = 0; at < n; at += size) {
      const end = Math.min(n, at + size);
      yield seeded === undefined ? randomBytes(end - at) : seeded.subarray(at, end);
    }
  }
  return { status: 200, headers: { "Content-Type": "application/octet-stream" }, body: chunks() };
}
