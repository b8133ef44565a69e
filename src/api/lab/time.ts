// Time: /api/lab/delay/:seconds answers after a wait; /api/lab/drip sends a
// body in pieces spread over a duration, so a client's timeouts and its
// handling of a slow, chunked body can be watched.
//
// At shutdown, a delay or a drip in flight is cut at the end of the grace
// like any other response (docs/lab.md): its connection is closed, and the
// process exits (serve.ts) without waiting for the timer. A drip is an async iterable whose next piece is asked for
// only when the socket has taken the last (connection/send-body.ts), so it
// holds one piece at a time: its cost per connection is the connection's
// output budget, whatever the size asked.

import type { Request } from "../../http/message/request.js";
import type { BodyStream, Response } from "../../http/message/response.js";
import type { Scheme } from "./origin.js";
import { dictJson } from "./request-dict.js";
import { queryOf, refuse, seconds, whole } from "./params.js";

export const MAX_DELAY_SECONDS = 10;
export const MAX_DRIP_BYTES = 1024 * 1024;
export const MAX_DRIP_SECONDS = 30;
/** Pieces of a drip are at least this far apart: one byte every few microseconds would be a timer per byte, not a drip. */
export const DRIP_TICK_MS = 10;
/** A drip's largest piece, well under the output budget: a fast drip of 1 MiB is still sent in pieces under back-pressure. */
export const DRIP_PIECE_BYTES = 16 * 1024;
/** What every piece is cut from: the same bytes each time, never allocated per piece. */
const STARS = Buffer.alloc(DRIP_PIECE_BYTES, "*");

/** How often a drip between two pieces lets the sender look at its socket (see dripBody). */
export const HEARTBEAT_MS = 100;
const NOTHING = new Uint8Array(0);

/** Resolves after `ms`. */
function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** After the wait, httpbin's account of the request (its members for /delay: args, data, files, form, headers, origin, url). */
export async function delayAnswer(request: Request, scheme: Scheme, text: string): Promise<Response> {
  const s = seconds(request, "seconds", text, MAX_DELAY_SECONDS);
  await sleep(s * 1000);
  return { status: 200, headers: { "Content-Type": "application/json" }, body: dictJson(request, scheme, DELAY_KEYS) };
}

const DELAY_KEYS = ["args", "data", "files", "form", "headers", "origin", "url"] as const;

export interface Drip {
  readonly numbytes: number;
  readonly durationMs: number;
  readonly delayMs: number;
  readonly code: number;
}

export function dripOf(request: Request): Drip {
  const q = queryOf(request, ["numbytes", "duration", "delay", "code"]);
  const numbytes = q.numbytes === undefined ? 10 : whole(request, "numbytes", q.numbytes, 1, MAX_DRIP_BYTES);
  const duration = q.duration === undefined ? 2 : seconds(request, "duration", q.duration, MAX_DRIP_SECONDS);
  const delay = q.delay === undefined ? 0 : seconds(request, "delay", q.delay, MAX_DRIP_SECONDS);
  if (duration + delay > MAX_DRIP_SECONDS) refuse(request, "delay", `at most ${MAX_DRIP_SECONDS} seconds together with duration`, `delay ${delay} and duration ${duration} add up to more than ${MAX_DRIP_SECONDS} seconds`);
  const code = q.code === undefined ? 200 : whole(request, "code", q.code, 200, 599);
  if (code === 204 || code === 205 || code === 304) refuse(request, "code", "a status from 200 to 599 that carries a body (not 204, 205 or 304)", `a ${code} carries no body to drip`);
  return { numbytes, durationMs: duration * 1000, delayMs: delay * 1000, code };
}

/**
 * `numbytes` asterisks in pieces of at most DRIP_PIECE_BYTES, the last one
 * due `durationMs` after the body starts, evenly spread. Between two pieces
 * the iterable yields an empty one at least every HEARTBEAT_MS: the sender
 * skips it (an empty chunk would end the body) but checks the socket first,
 * so a connection cut meanwhile (at the end of a shutdown's grace, by the
 * send timeout, by a reset from the client) ends the drip within
 * HEARTBEAT_MS rather than at its next piece, which may be 30 s away. (A
 * client that only closes its side may still be reading, RFC 9112 §9.6: the
 * drip goes on for it; the first piece written after it is gone ends it.)
 */
export function dripBody(d: Drip): BodyStream {
  const pieces = Math.max(Math.ceil(d.numbytes / DRIP_PIECE_BYTES), Math.min(d.numbytes, Math.floor(d.durationMs / DRIP_TICK_MS)));
  const interval = d.durationMs / pieces;
  const base = Math.floor(d.numbytes / pieces);
  const extra = d.numbytes % pieces;
  let started: number | undefined;
  let sent = 0;
  return {
    [Symbol.asyncIterator]() {
      return {
        async next(): Promise<IteratorResult<Uint8Array>> {
          if (sent === pieces) return { done: true, value: undefined };
          started ??= Date.now();
          // Piece i is due at (i + 1) intervals from the start, so late timers do not add up.
          const wait = started + (sent + 1) * interval - Date.now();
          if (wait > HEARTBEAT_MS) {
            await sleep(HEARTBEAT_MS);
            return { done: false, value: NOTHING };
          }
          if (wait > 0) await sleep(wait);
          const size = base + (sent < extra ? 1 : 0);
          sent++;
          return { done: false, value: STARS.subarray(0, size) };
        },
        async return(): Promise<IteratorResult<Uint8Array>> {
          sent = pieces;
          return { done: true, value: undefined };
        },
      };
    },
  };
}

export async function dripAnswer(request: Request): Promise<Response> {
  const d = dripOf(request);
  // The delay comes before the status line, as httpbin's does: the client waits for the head itself.
  if (d.delayMs > 0) await sleep(d.delayMs);
  return {
    status: d.code,
    headers: { "Content-Type": "application/octet-stream" },
    body: dripBody(d),
  };
}
