// /api/lab/gzip, /api/lab/deflate, /api/lab/brotli: a body coded that way
// whatever the request's Accept-Encoding says, with the Content-Encoding
// that names it (RFC 9110 §8.4), so a client's decoding can be tried. The
// content is the echo of the request, so the decoded body is readable. As in
// the server's own compression (http/message/compression.ts), the work runs
// on libuv's thread pool, never on the event loop; a response that already
// has a Content-Encoding is left alone there.

import { promisify } from "node:util";
import zlib from "node:zlib";
import { BROTLI_OPTIONS, piecesThrough, STREAM_BROTLI_OPTIONS } from "../../http/message/compression.js";
import type { Request } from "../../http/message/request.js";
import type { Response } from "../../http/message/response.js";
import { echoJson } from "../echo.js";

const brotli = promisify(zlib.brotliCompress);

/**
 * The lab's name for each coding, the Content-Encoding token (RFC 9110 §18.6
 * registry) it is sent as, how a whole body is coded and the coder of a body
 * sent in pieces. Brotli's settings are the server's own: its default,
 * quality 11, cost 2 s of CPU per MiB of echo, in libuv's thread pool, which
 * every compressed answer of the server waits for.
 */
export const LAB_CODINGS = {
  gzip: { token: "gzip", encode: promisify(zlib.gzip), coder: () => zlib.createGzip() },
  // "deflate" is the zlib format (RFC 1950), not raw deflate
  deflate: { token: "deflate", encode: promisify(zlib.deflate), coder: () => zlib.createDeflate() },
  brotli: { token: "br", encode: (b: Buffer) => brotli(b, BROTLI_OPTIONS), coder: () => zlib.createBrotliCompress(STREAM_BROTLI_OPTIONS) },
} as const;

export type LabCoding = keyof typeof LAB_CODINGS;

export async function codedAnswer(request: Request, name: LabCoding): Promise<Response> {
  const coding = LAB_CODINGS[name];
  const headers = { "Content-Type": "application/json", "Content-Encoding": coding.token, "Cache-Control": "no-store" };
  const content = echoJson(request, (echo) => ({ coding: coding.token, request: echo }));
  // A large echo is made, and coded, piece by piece as the client reads it.
  if (typeof content !== "string") return { status: 200, headers, body: piecesThrough(content, coding.coder()) };
  return { status: 200, headers, body: await coding.encode(Buffer.from(content, "utf8")) };
}
