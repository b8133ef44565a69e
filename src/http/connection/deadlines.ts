// A connection's deadlines, all from its state, in one place: what the
// connection waits for decides which timeout runs (lifecycle.ts), and a
// watch on the responses still leaving decides whether a client that reads
// nothing is cut. The server's one sweep calls check(); nothing here owns a
// timer.
//
// An open state says what the connection waits for. Draining does not: a
// shutdown lets the request the client had begun finish (Connection.drain),
// and that request is read as any other, so Draining is timed by what
// Connection.update() found it waits for (the Event that kept it Draining):
// a head or a body gets the same deadlines, and the same 408, as outside a
// shutdown; the server's own work (Busy) is untimed, as outside one.

import { Event, State } from "./lifecycle.js";
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
  /** An idle connection's keep-alive timeout passed. */
  KeepAlive,
  /** A head was not complete within the headers timeout (once per head, from its first byte). */
  Head,
  /** A body had no byte for the body timeout. */
  Body,
  /** A closing connection's linger ended. */
  Linger,
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
  /**
   * What `at` times: the state whose timeout runs (Idle, Head, Body,
   * Closing), or one that waits for the server only (Busy, Closed: never
   * runs out). The connection's state, but for Draining, which is timed as
   * what it waits for (Head, Body or Busy). Not a second state: what the
   * state and update()'s Event say, kept so that the sweep need not work it
   * out again.
   */
  private timed = State.Idle;
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
   * The connection is now in `to`, moved there by `event`, after bytes
   * arrived (`data`) or a response left, having seen `heads` request heads.
   * The headers deadline is set once per request head, so a client cannot
   * stretch it by trickling bytes; the body and keep-alive ones restart on
   * activity; the whole-request one starts once per request, with its first byte.
   */
  enter(to: State, event: Event, data: boolean, heads: number): void {
    let timed = to;
    if (to === State.Draining) {
      // The shutdown or half-close itself changes nothing: update() follows at once and says what is awaited.
      if (event === Event.Shutdown || event === Event.HalfClose) return;
      // A request begun before the shutdown is still read (Head, Body): timed as it would be without one.
      timed = event === Event.Head ? State.Head : event === Event.Body ? State.Body : State.Busy;
    }
    const options = this.options;
    if (timed === State.Head || timed === State.Body) {
      const request = timed === State.Head ? heads + 1 : heads;
      // Kept across the server's own pauses (Busy between two reads of one head): a pause must not erase it.
      if (request !== this.requestTimed) {
        this.requestTimed = request;
        this.requestDeadline = Date.now() + options.requestTimeoutMs;
      }
    }
    const before = this.timed;
    this.timed = timed;
    switch (timed) {
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
        if (data || before !== State.Body) this.at = Date.now() + options.bodyTimeoutMs;
        break;
      case State.Closing:
        this.at = Date.now() + options.lingerMs;
        break;
      default:
        // Busy waits for the server's own work (bounded by the send timeout, and in a shutdown by its grace); Closed for nothing.
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

  /** What has run out by `now`, with `unsent` bytes waiting to be sent. */
  check(now: number, unsent: number): Expired {
    const timed = this.timed;
    switch (this.sends.check(unsent, now, this.options.sendTimeoutMs)) {
      case Sending.Stalled:
        return Expired.SendStalled;
      case Sending.Moving:
        return Expired.Nothing;
      case Sending.Done:
        if (timed === State.Closing) {
          this.at = now + this.options.lingerMs;
          return Expired.Nothing;
        }
        return Expired.SendDone;
    }
    // Only while the request is being read: once it is whole, it is the server's to answer.
    if ((timed === State.Head || timed === State.Body) && now >= this.requestDeadline) return Expired.Request;
    if (now < this.at) return Expired.Nothing;
    switch (timed) {
      case State.Idle:
        return Expired.KeepAlive;
      case State.Head:
        return Expired.Head;
      case State.Body:
        return Expired.Body;
      case State.Closing:
        return Expired.Linger;
      default:
        return Expired.Nothing;
    }
  }
}
