// Sending a body that is produced in pieces (an async iterable, e.g. rows
// from a store cursor) without holding it whole: each piece goes out as it
// comes, as a chunk of the chunked transfer coding (RFC 9112 §7.1), or bare
// for an HTTP/1.0 client, whose response then ends when the connection does.
//
// The next piece is asked for only once the socket has taken the last one
// (back-pressure), and the event loop is given back regularly, so a body
// whose pieces are ready at once still cannot starve other clients. If the
// client goes away, the iterable is closed (its `return()` runs: a cursor is
// released). If the iterable fails after the status line has gone out, the
// error is thrown from here and the connection must be cut: the client then
// sees a body without its last chunk, never a half document presented as
// complete.

import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { Writable } from "node:stream";

export type BodyStream = AsyncIterable<string | Uint8Array>;

/** Bytes sent between two turns given back to the event loop. */
const YIELD_EVERY_BYTES = 64 * 1024;
const LAST_CHUNK = "0\r\n\r\n";

export function isBodyStream(body: unknown): body is BodyStream {
  return typeof body === "object" && body !== null && Symbol.asyncIterator in body;
}

/** Thrown inside the loop when the socket is gone, so that `for await` closes the iterable. */
class ClientGone extends Error {}

/** Resolves when the socket wants more, or is closed. */
function writable(socket: Writable): Promise<void> {
  if (!socket.writableNeedDrain || socket.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      socket.off("drain", done);
      socket.off("close", done);
      resolve();
    };
    socket.on("drain", done);
    socket.on("close", done);
  });
}

/**
 * Writes every piece of `stream` to `socket`, chunked or bare. Resolves with
 * the body's length once the last piece is written, or with -1 when the
 * client went away first; rejects when the iterable fails.
 */
export async function sendStream(socket: Writable, stream: BodyStream, chunked: boolean): Promise<number> {
  let bytes = 0;
  let sinceYield = 0;
  try {
    for await (const piece of stream) {
      if (socket.destroyed || socket.writableEnded) throw new ClientGone();
      const data = typeof piece === "string" ? Buffer.from(piece, "utf8") : piece;
      // An empty chunk would read as the last one (RFC 9112 §7.1): skip it.
      if (data.byteLength === 0) continue;
      bytes += data.byteLength;
      if (chunked) {
        socket.cork();
        socket.write(`${data.byteLength.toString(16)}\r\n`, "latin1");
        socket.write(data);
        socket.write("\r\n", "latin1");
        socket.uncork();
      } else {
        socket.write(data);
      }
      await writable(socket);
      sinceYield += data.byteLength;
      if (sinceYield >= YIELD_EVERY_BYTES) {
        sinceYield = 0;
        await yieldToEventLoop();
      }
    }
  } catch (error) {
    if (error instanceof ClientGone) return -1;
    throw error;
  }
  if (socket.destroyed || socket.writableEnded) return -1;
  if (chunked) socket.write(LAST_CHUNK, "latin1");
  return bytes;
}
