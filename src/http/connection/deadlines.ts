// A connection's deadlines, all from its state, in one place: what the
// connection waits for decides which timeout runs (lifecycle.ts), and a
// watch on the responses still leaving decides whether a client that reads
// nothing is cut. The server's one sweep calls check(); nothing here owns a
// timer.

import { State } from "./lifecycle.js";
import type { ConnectionOptions } from "./options.js";

/** What has run out at one sweep of the timers. */
export const enum Expired {
  Nothing,
  /** Responses wait to be sent and the client has read none of them for the send timeout. */
  SendStalled,
  /** Everything is out since the last sweep: the other timers start from now (recompute them). */
  SendDone,
  /** The whole request took longer than the request timeout. */
  Request,
  /** The current state's deadline passed (keep-alive, headers, body, linger). */
  State,
}

/** What the bytes a connection has not yet sent say, at one sweep of the timers. */
const enum Sending {
  Idle,
  Moving,
  Stalled,
  Done,
}

/**
 * While responses are on their way out, the client is reading (perhaps
 * slowly): no other timer may cut it off mid-response. Only a send that
 * makes no progress for the send timeout ends the connection.
 */
class SendWatch {
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

type Timeouts = Pick<ConnectionOptions, "headersTimeoutMs" | "bodyTimeoutMs" | "requestTimeoutMs" | "keepAliveTimeoutMs" | "lingerMs" | "sendTimeoutMs">;

export class Deadlines {
  private readonly options: Timeouts;
  /**
   * When the current state runs out (ms since the epoch). Declared with a
   * number: a field that starts undefined (a class field without a value)
   * holds any value after, so every time stored here got a new heap box and
   * a write barrier; one that starts as a number is updated in place.
   */
  at = Infinity;
  /** How many heads had been seen when the headers deadline was set, and that deadline. */
  private headsAtDeadline = -1;
  private headDeadline = Infinity;
  /** Which request the whole-request deadline belongs to (1 for the first head), and when it runs out. */
  private requestTimed = -1;
  private requestDeadline = Infinity;
  private readonly sends = new SendWatch();

  constructor(options: Timeouts) {
    this.options = options;
    this.at = Date.now() + options.keepAliveTimeoutMs;
  }

  /**
   * The connection is now in `to` (from `from`), after bytes arrived
   * (`data`) or a response left, having seen `heads` request heads. The
   * headers deadline is set once per request head, so a client cannot
   * stretch it by trickling bytes; the body and keep-alive ones restart on
   * activity; the whole-request one starts once per request, with its first byte.
   */
  enter(from: State, to: State, data: boolean, heads: number): void {
    const options = this.options;
    if (to === State.Head || to === State.Body) {
      const request = to === State.Head ? heads + 1 : heads;
      // Kept across the server's own pauses (Busy between two reads of one head): a pause must not erase it.
      if (request !== this.requestTimed) {
        this.requestTimed = request;
        this.requestDeadline = Date.now() + options.requestTimeoutMs;
      }
    }
    switch (to) {
      case State.Idle:
        this.at = Date.now() + options.keepAliveTimeoutMs;
        break;
      case State.Head:
        // Once per head: a pause of the server's own (a turn, back-pressure) must not restart it.
        if (heads !== this.headsAtDeadline) {
          this.headsAtDeadline = heads;
          this.headDeadline = Date.now() + options.headersTimeoutMs;
        }
        this.at = this.headDeadline;
        break;
      case State.Body:
        if (data || from !== State.Body) this.at = Date.now() + options.bodyTimeoutMs;
        break;
      case State.Closing:
        this.at = Date.now() + options.lingerMs;
        break;
      default:
        // Busy and Draining wait for the server's own work (bounded by the send timeout and the shutdown's grace); Closed for nothing.
        this.at = Infinity;
    }
  }

  /**
   * A 100 Continue went out: a client that waited for it sends its body from
   * now, so the whole-request deadline starts again when the body is next
   * awaited, rather than counting the time the server made it wait.
   */
  continued(): void {
    this.requestTimed = -1;
  }

  /** What has run out by `now` in `state`, with `unsent` bytes waiting to be sent. */
  check(state: State, now: number, unsent: number): Expired {
    switch (this.sends.check(unsent, now, this.options.sendTimeoutMs)) {
      case Sending.Stalled:
        return Expired.SendStalled;
      case Sending.Moving:
        return Expired.Nothing;
      case Sending.Done:
        if (state === State.Closing) {
          this.at = now + this.options.lingerMs;
          return Expired.Nothing;
        }
        return Expired.SendDone;
    }
    // Only while the request is being read: once it is whole, it is the server's to answer.
    if ((state === State.Head || state === State.Body) && now >= this.requestDeadline) return Expired.Request;
    return now >= this.at ? Expired.State : Expired.Nothing;
  }
}
