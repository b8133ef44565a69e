// Everything a connection sends, gathered so that the responses one read of
// the socket produces leave in one write (pipelining), and a lone response in
// one write, without the stream's cork buffer in between.
//
// Corking the socket for every read, as the connection once did, sent even a
// lone response through the stream's buffer: an entry per write, then a
// writev with its arrays and callbacks. Here a read's pieces wait in an array
// and leave as one string (all text), one Buffer (all bytes: a remembered
// response's encoded bytes, see response.ts) or, when the two are mixed (a
// head and a body given as bytes, as Express gives it), one Buffer they are
// copied into while they are small, one corked burst past that. Everything
// the connection writes goes through here, so nothing can overtake a piece
// still waiting.
//
// Pending pieces are written as soon as they reach the socket's high-water
// mark: the socket's own back-pressure (writableNeedDrain, which the
// connection looks at between two requests of a read) must see them, or one
// read of many small pipelined requests could pile up responses here.

import type { Writable } from "node:stream";

/**
 * Mixed pieces that count less than this in all (a string by its length, as
 * `size` counts it) are copied into one Buffer and written as one: below half
 * of Buffer.poolSize (4 KiB), allocUnsafe mostly takes a slice of node's
 * shared pool, and copying that much costs less than the corked burst it
 * replaces (an entry and a callback per piece in the stream's buffer, then
 * writev's array of pieces and encodings, about 700 bytes of garbage for a
 * head and a small body). Larger bursts stay corked: a body of bytes is then
 * handed down as it is, not copied.
 */
const COPY_LIMIT = Buffer.poolSize >>> 1;

export class Outbox {
  private readonly socket: Writable;
  /** The socket's high-water mark, read once: a stream's is fixed when it is made, and its getter is shared by every kind of stream. */
  private readonly highWaterMark: number;
  /** The first piece waiting: most reads answer one request, and one piece needs no array. */
  private first: string | Uint8Array | null = null;
  /** The pieces after the first, when a read answers several. */
  private rest: (string | Uint8Array)[] = [];
  /** Bytes pending; a string counts its length, which is at most its UTF-8 size. */
  private size = 0;
  private texts = 0;
  private holds = 0;

  constructor(socket: Writable) {
    this.socket = socket;
    this.highWaterMark = socket.writableHighWaterMark;
  }

  /** Gather what is sent until the matching release(). Holds nest. */
  hold(): void {
    this.holds++;
  }

  release(): void {
    if (--this.holds === 0) this.flush();
  }

  /** Text to send (written as UTF-8; heads are ASCII), or bytes. */
  send(data: string | Uint8Array): void {
    if (this.first === null) {
      if (this.holds === 0) {
        this.socket.write(data);
        return;
      }
      this.first = data;
    } else this.rest.push(data);
    if (typeof data === "string") {
      this.texts++;
      this.size += data.length;
    } else this.size += data.length; // its bytes: see isLargeBody (send-body.ts) on .length
    if (this.holds === 0 || this.size >= this.highWaterMark) this.flush();
  }

  /** Write what is pending now: before someone else writes to the socket (a streamed body), or at the end of a hold. */
  flush(): void {
    const first = this.first;
    if (first === null) return;
    const texts = this.texts;
    const size = this.size;
    this.first = null;
    this.size = 0;
    this.texts = 0;
    const socket = this.socket;
    if (this.rest.length === 0) {
      socket.write(first);
      return;
    }
    const pieces = this.rest;
    this.rest = [];
    pieces.unshift(first);
    if (texts === pieces.length) socket.write(pieces.join(""));
    else if (texts === 0) socket.write(Buffer.concat(pieces as Uint8Array[]));
    else if (size < COPY_LIMIT) socket.write(joined(pieces));
    else {
      socket.cork();
      for (const piece of pieces) socket.write(piece);
      socket.uncork();
    }
  }

  /** What is pending goes out, then FIN once everything is written. */
  end(): void {
    this.flush();
    this.socket.end();
  }
}

/** Text (as UTF-8) and bytes, in order, in one Buffer of their exact size. */
function joined(pieces: (string | Uint8Array)[]): Buffer {
  let bytes = 0;
  for (const piece of pieces) bytes += typeof piece === "string" ? Buffer.byteLength(piece) : piece.length;
  const out = Buffer.allocUnsafe(bytes);
  let at = 0;
  for (const piece of pieces) {
    if (typeof piece === "string") at += out.write(piece, at);
    else {
      out.set(piece, at);
      at += piece.length;
    }
  }
  return out;
}
