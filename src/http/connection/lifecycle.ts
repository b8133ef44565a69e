// A connection's lifecycle: one state, and the table of its legal moves.
// Nothing else changes the state; an event the table does not allow in the
// current state is refused (the connection then does nothing), which is how
// late events are ignored: a handler that settles after the socket closed, a
// half-close after the closing response, a second shutdown.
//
// Flow control (paused, waiting for a turn) is not here: it says whether the
// connection reads now, not where it is in its life (steps.ts joins the two). Which
// response is next, whether it closes the connection and whether a 100
// Continue is owed are the protocol's (protocol.ts); a streamed body going
// out is a response in flight, so the connection is Busy (or Draining).

/**
 * Where a connection is. Idle, Head, Body and Busy also say what it waits
 * for, which decides its deadline (deadlines.ts); Draining does not, and is
 * timed by the Event that keeps it Draining (Head, Body, Busy).
 */
export const enum State {
  /** Open, nothing in flight: the keep-alive timeout runs. */
  Idle,
  /** Part of a request head has arrived: the headers timeout runs. */
  Head,
  /** A body is arriving: the body timeout runs, restarted by every chunk. */
  Body,
  /** Requests are with their handlers, or responses on their way out; nothing is being read from the client. */
  Busy,
  /**
   * No request will be begun any more (shutdown, or the client half-closed): finishing the one begun before a
   * shutdown, answering what was asked, then closing. What it waits for is the event that keeps it here: a head
   * or a body still arriving is timed as in Head or Body (408 when it runs out), the server's own work not at all.
   */
  Draining,
  /** The closing response (or nothing) is out and the FIN follows it: reading and dropping until the client closes or the linger ends. */
  Closing,
  /**
   * The connection switched protocols (RFC 9110 §7.8, 101 Switching Protocols): its socket, and the bytes read
   * past the head that asked for it, are the new protocol's handler's. Nothing is read, written or timed here any
   * more; only the socket's close is heard, to count the connection out.
   */
  HandedOver,
  /** The socket is gone. */
  Closed,
}

export const enum Event {
  /** What the connection waits for now, found after a read was parsed or a response left (Connection.update; deadlines.ts times each, in Draining too): */
  Idle,
  Head,
  Body,
  Busy,
  /** The server shuts down: finish what is in flight, then close. */
  Shutdown,
  /** The client half-closed: it will send nothing more (RFC 9112 §9.6). */
  HalfClose,
  /** The connection ends its side: a closing response was written, or it closes with nothing in flight. */
  Close,
  /** The socket closed (an orderly end, a reset, a destroy). */
  SocketClosed,
  /** The handler took the socket over after a head that switches protocols (a streamed service's upgrade). */
  HandOver,
}

export const STATES = 8;
export const EVENTS = 9;
const REFUSED = -1;

/** Names, for the table's test and for messages. */
export const STATE_NAMES = ["Idle", "Head", "Body", "Busy", "Draining", "Closing", "HandedOver", "Closed"] as const;
export const EVENT_NAMES = ["Idle", "Head", "Body", "Busy", "Shutdown", "HalfClose", "Close", "SocketClosed", "HandOver"] as const;

const I = State.Idle;
const H = State.Head;
const B = State.Body;
const U = State.Busy;
const D = State.Draining;
const C = State.Closing;
const O = State.HandedOver;
const X = State.Closed;
const _ = REFUSED;

/**
 * TABLE[state][event]: the next state, or refused. Rows are states, columns
 * events, in the order of the enums above.
 *
 * An open connection moves freely among Idle, Head, Body and Busy as the
 * parser and the queue say. Shutdown and half-close from Idle close at once
 * (nothing to finish); from the other open states they drain. Draining
 * stays Draining until nothing is left (Idle: then it closes); the event
 * that keeps it there says what it waits for, and so its deadline. Close ends
 * every open state into Closing; only the socket's close leaves Closing, and
 * nothing leaves Closed. A hand-over is an answer: any open state may hand
 * its socket over (a draining one too, answering the request begun before the
 * shutdown), and only the socket's close leaves HandedOver.
 */
// prettier-ignore
export const TABLE: readonly (readonly number[])[] = [
  //            Idle Head Body Busy Shutdown HalfClose Close SocketClosed HandOver
  /* Idle */       [I,   H,   B,   U,   C,       C,        C,    X,           O],
  /* Head */       [I,   H,   B,   U,   D,       D,        C,    X,           O],
  /* Body */       [I,   H,   B,   U,   D,       D,        C,    X,           O],
  /* Busy */       [I,   H,   B,   U,   D,       D,        C,    X,           O],
  /* Draining */   [C,   D,   D,   D,   _,       D,        C,    X,           O],
  /* Closing */    [_,   _,   _,   _,   _,       _,        _,    X,           _],
  /* HandedOver */ [_,   _,   _,   _,   _,       _,        _,    X,           _],
  /* Closed */     [_,   _,   _,   _,   _,       _,        _,    _,           _],
];

/** The same table, flat, for the connection's hot path: FLAT[state * EVENTS + event]. */
const FLAT = Int8Array.from(TABLE.flat());

/** The state `event` moves `state` to, or -1 when the table refuses it there. */
export function next(state: State, event: Event): State | -1 {
  return FLAT[state * EVENTS + event] as State | -1;
}

/** True while the connection may still answer: not closing, not closed. */
export function isOpen(state: State): boolean {
  return state < State.Closing;
}
