// /api/lab/gzip, /api/lab/deflate, /api/lab/brotli: a body coded that way
// whatever the request's Accept-Encoding says, with the Content-Encoding
// that names it (RFC 9110 §8.4), so a client's decoding can be tried. The
// content is httpbin's: `gzipped` (`deflated`, `brotli`) true, and the
// request's headers, method and origin, so the decoded body is readable. As in
// the server's own compression (http/message/compression.ts), the work runs
// on libuv's thread pool, never on the event loop; a response that already
// has a Content-Encoding is left alone there.

import { promisify } from "node:util";
import zlib from "node:zlib";
import { BROTLI_OPTIONS } from "../../http/message/compression.js";
import type { Request } from "../../http/message/request.js";
import type { Response } from "../../http/message/response.js";
import { requestDict } from "./request-dict.js";

const brotli = promisify(zlib.brotliCompress);

/**
 * The lab's name for each coding, the Content-Encoding token (RFC 9110 §18.6
 * registry) it is sent as, the member httpbin's answer flags it with, and
 * how the body is coded. Brotli's settings are the server's own: its
 * default, quality 11, cost 2 s of CPU per MiB, in libuv's thread pool, which
 * every compressed answer of the server waits for.
 */
export const LAB_CODINGS = {
  gzip: { token: "gzip", flag: "gzipped", encode: promisify(zlib.gzip) },
  // "deflate" is the zlib format (RFC 1950), not raw deflate
  deflate: { token: "deflate", flag: "deflated", encode: promisify(zlib.deflate) },
  brotli: { token: "br", flag: "brotli", encode: (b: Buffer) => brotli(b, BROTLI_OPTIONS) },
} as const;

export type LabCoding = keyof typeof LAB_CODINGS;

/** httpbin's account, {"gzipped": true, "headers": ..., "method": ..., "origin": ...}, coded as named; it holds no body, so it stays small. */
export async function codedAnswer(request: Request, name: LabCoding): Promise<Response> {
  const coding = LAB_CODINGS[name];
  const headers = { "Content-Type": "application/json", "Content-Encoding": coding.token };
  const content = JSON.stringify({ [coding.flag]: true, ...requestDict(request, "http", ["headers", "method", "origin"]) }) + "\n";
  return { status: 200, headers, body: await coding.encode(Buffer.from(content, "utf8")) };
}
