// What a connection keeps: the phase that decides its deadline, and a slot
// per request in the queue of answers, which leave strictly in order.

import type { Request, RequestHead } from "./request.js";
import type { Response } from "./response.js";

/** What the connection is waiting for, which decides its deadline. */
export enum Phase {
  /** No request in flight: the keep-alive timeout runs. */
  Idle,
  /** Part of a request head has arrived: the headers timeout runs. */
  Head,
  /** A body is arriving: the body timeout runs, restarted by every chunk. */
  Body,
  /** Requests are with their handlers; nothing to time. */
  Busy,
  /** The closing response is out: draining the client until it closes or the linger ends. */
  Closing,
}

export interface Slot {
  readonly head: RequestHead | null;
  request: Request | null;
  /** A 100 Continue is owed before the body (RFC 9110 §10.1.1). */
  sendContinue: boolean;
  response: Response | null;
  /** The connection closes after this response. */
  close: boolean;
  readonly started: number;
}

export function isPromise(value: unknown): value is Promise<Response> {
  return typeof (value as Promise<Response> | null)?.then === "function";
}
