// What a connection keeps: the phase that decides its deadline, a slot per
// request in the queue of answers, which leave strictly in order, and a watch
// on the responses still leaving.

import type { Request, RequestHead } from "../message/request.js";
import type { Response } from "../message/response.js";

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

/** What the bytes a connection has not yet sent say, at one sweep of the timers. */
export const enum Sending {
  /** Nothing waits to be sent, and nothing did at the last sweep. */
  Idle,
  /** Bytes wait, and the client has read some since the last sweep (or the send is not yet timed out). */
  Moving,
  /** The same bytes have waited for the whole send timeout: the client stopped reading. */
  Stalled,
  /** Everything is out since the last sweep: the other timers start from now. */
  Done,
}

/**
 * While responses are on their way out, the client is reading (perhaps
 * slowly): no other timer may cut it off mid-response. Only a send that
 * makes no progress for the send timeout ends the connection.
 */
export class SendWatch {
  private unsentAtCheck = 0;
  private deadline = Infinity;

  check(unsent: number, now: number, timeoutMs: number): Sending {
    if (unsent > 0) {
      if (unsent === this.unsentAtCheck) return now >= this.deadline ? Sending.Stalled : Sending.Moving;
      this.unsentAtCheck = unsent;
      this.deadline = now + timeoutMs;
      return Sending.Moving;
    }
    if (this.unsentAtCheck === 0) return Sending.Idle;
    this.unsentAtCheck = 0;
    return Sending.Done;
  }
}
