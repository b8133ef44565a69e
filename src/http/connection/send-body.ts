// Sending a body under back-pressure: a piece goes to the socket only while
// the socket holds less than its high-water mark, so a client that stops
// reading stops the sending, and what a connection holds for it stays
// bounded whatever the body's size (OUTPUT_BUDGET).
//
// Two kinds of body come here: a stream (an async iterable, whose next piece
// is asked for only when the socket wants more, and which is closed if the
// client goes away), and a whole body larger than one piece, which is
// handed to the socket a piece at a time: a string is encoded a piece at a
// time (never copied whole into a Buffer), bytes are sliced without copying.
// Every piece also waits for the server's turn budget (turns.ts): all the
// bodies being sent share a few pieces per turn of the event loop, so that
// however many clients take large bodies at once, nobody else waits long. If a stream fails after the status
// line went out, the error is thrown from here and the connection must be
// cut: the client then sees a body without its last chunk, never a half
// document presented as complete.

import type { Writable } from "node:stream";
import { fieldLines, type FieldValue } from "../message/response.js";
import type { BodyStream } from "../message/stream-body.js";
import type { Turns } from "./turns.js";

/** The part of the server's turns (turns.ts) that paces bodies. */
export type Pacer = Pick<Turns, "beforePiece">;

/** The most one write hands the socket: a stream's larger pieces are cut to it, and whole bodies larger than it are sent in pieces. */
export const PIECE_BYTES = 64 * 1024;
/**
 * What a connection queues for its client at most, above what the kernel's
 * socket buffer holds: the socket's high-water mark (16 KiB for net sockets
 * on Node 20) that a piece waits below, the piece itself, the chunk framing
 * and the heads of the responses one read answers. A test holds it
 * (test/http/bounded-output.test.ts).
 */
export const OUTPUT_BUDGET = 128 * 1024;
/** Characters of a string per piece: a UTF-16 code unit is at most 3 bytes of UTF-8. */
const PIECE_CHARS = Math.floor(PIECE_BYTES / 3);
const LAST_CHUNK = "0\r\n\r\n";

/** A whole body is sent in pieces when it may be larger than one. */
export function isLargeBody(body: string | Uint8Array): boolean {
  // A Uint8Array's length is its size in bytes; V8 compiles .length inline, .byteLength as a call.
  return typeof body === "string" ? body.length > PIECE_CHARS : body.length > PIECE_BYTES;
}

/** Resolves when the socket holds less than its high-water mark, or is closed. */
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

const gone = (socket: Writable) => socket.destroyed || socket.writableEnded;

/** Resolves when the next piece may go: the socket wants more and the turn's budget has room. */
async function nextPiece(socket: Writable, pacer: Pacer): Promise<void> {
  await writable(socket);
  const turn = pacer.beforePiece();
  if (turn !== null) await turn;
}

/** Where a string may be cut near `end`: not between the two halves of a surrogate pair. */
function cutAt(text: string, end: number): number {
  if (end >= text.length) return text.length;
  const c = text.charCodeAt(end - 1);
  return c >= 0xd800 && c <= 0xdbff ? end - 1 : end;
}

/**
 * Hands `data` to the socket in pieces of at most PIECE_BYTES, each once the
 * socket wants more, with `last` as the last write's callback; false when the
 * client went away first.
 */
async function writePieces(socket: Writable, data: string | Uint8Array, pacer: Pacer, last?: () => void): Promise<boolean> {
  const length = typeof data === "string" ? data.length : data.byteLength;
  const step = typeof data === "string" ? PIECE_CHARS : PIECE_BYTES;
  for (let at = 0; at < length; ) {
    await nextPiece(socket, pacer);
    if (gone(socket)) return false;
    const end = typeof data === "string" ? cutAt(data, at + step) : Math.min(length, at + step);
    const piece = typeof data === "string" ? (at === 0 && end === length ? data : data.slice(at, end)) : data.subarray(at, end);
    at = end;
    socket.write(piece, at === length ? last : undefined);
  }
  return true;
}

/** Thrown inside the loop when the socket is gone, so that `for await` closes the iterable. */
class ClientGone extends Error {}

/**
 * Writes `data` with `write`, resolving once the socket has taken it (the
 * write's callback: its bytes are in the kernel, or the write failed), or
 * once the socket is closed.
 */
function written(socket: Writable, write: (done: () => void) => void): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      socket.off("close", done);
      resolve();
    };
    socket.on("close", done);
    write(done);
  });
}

/**
 * Writes a whole body (already framed by its head's Content-Length) in
 * pieces. Resolves with true once the last piece is handed to the socket,
 * false when the client went away first.
 */
export function sendWhole(socket: Writable, body: string | Uint8Array, pacer: Pacer): Promise<boolean> {
  return writePieces(socket, body, pacer);
}

/** How a stream is framed: chunked (with trailers, if any), or bare; `length` >= 0 when its head announced it. */
export interface StreamFraming {
  readonly chunked: boolean;
  readonly length: number;
  readonly trailers?: (() => Readonly<Record<string, FieldValue>> | undefined) | undefined;
}

/** Thrown when a stream of a declared length turns out longer or shorter: the connection is cut, never misframed. */
class LengthMismatch extends Error {}

/**
 * Writes every piece of `stream` to `socket`, chunked or bare (or bare and
 * counted against its declared length). Resolves with the body's length once
 * the last piece is written, or with -1 when the client went away first;
 * rejects when the iterable fails or breaks its declared length.
 */
export async function sendStream(socket: Writable, stream: BodyStream, framing: StreamFraming, pacer: Pacer): Promise<number> {
  const declared = framing.length;
  // A declared length frames the body: no chunks.
  const chunked = framing.chunked && declared < 0;
  let bytes = 0;
  try {
    // A piece is asked for only when it may go: producing it (rendering JSON, say) is the work the budget paces.
    await nextPiece(socket, pacer);
    for await (const piece of stream) {
      if (gone(socket)) throw new ClientGone();
      const size = typeof piece === "string" ? Buffer.byteLength(piece) : piece.byteLength;
      // An empty chunk would read as the last one (RFC 9112 §7.1): skip it.
      if (size === 0) continue;
      bytes += size;
      if (declared >= 0 && bytes > declared) throw new LengthMismatch(`The body is longer than the ${declared} bytes its Content-Length announced`);
      let taken: Promise<void>;
      if (size <= PIECE_BYTES) {
        // One write to the socket, framing included (the loop below waited for the socket to want it).
        taken = written(socket, (done) => {
          socket.cork();
          if (chunked) socket.write(`${size.toString(16)}\r\n`, "latin1");
          socket.write(piece, chunked ? undefined : done);
          if (chunked) socket.write("\r\n", "latin1", done);
          socket.uncork();
        });
      } else {
        if (chunked) socket.write(`${size.toString(16)}\r\n`, "latin1");
        let last: () => void = () => {};
        taken = written(socket, (done) => (last = done));
        if (!(await writePieces(socket, piece, pacer, chunked ? undefined : last))) throw new ClientGone();
        if (chunked) socket.write("\r\n", "latin1", last);
      }
      // The next piece is asked for only once the socket has taken this one (so its producer may reuse its memory,
      // see stream-body.ts), wants more, and the turn has room.
      await taken;
      await nextPiece(socket, pacer);
    }
  } catch (error) {
    if (error instanceof ClientGone) return -1;
    throw error;
  }
  if (gone(socket)) return -1;
  if (declared >= 0 && bytes !== declared) throw new LengthMismatch(`The body ended after ${bytes} of the ${declared} bytes its Content-Length announced`);
  if (chunked) {
    const trailers = framing.trailers?.();
    // RFC 9112 §7.1.2: the last chunk, then the trailer section, then the empty line.
    socket.write(trailers === undefined ? LAST_CHUNK : "0\r\n" + fieldLines(trailers) + "\r\n", "latin1");
  }
  return bytes;
}
