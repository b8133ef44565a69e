// A connection as one record and one step function: its whole state
// (ConnectionState) is changed only by step(state, input), which says what
// to carry out (effects: pause or resume the socket, ask the parser, wait
// for a turn, end the output, cut the socket, time out a request). The
// connection (connection.ts) turns socket and parser events into inputs,
// computes the facts an input is judged by (what the parser is in the
// middle of, what the queue of exchanges holds), and carries the effects
// out; it decides nothing here itself. What HTTP decides (which response
// is next, whether it closes, a 100 Continue owed, how a body is framed)
// is the protocol's (protocol.ts); where the connection is in its life is
// the lifecycle's table (lifecycle.ts); what is timed is deadlines.ts's.
// This file joins them: each input moves the record through those rules,
// and nothing else moves it.
//
// Reading (the flow). A connection stops reading while its client is not
// reading its responses (the socket's back-pressure), while maxUnanswered
// answers are in the making (options.ts says why), while a request in
// flight may not run beside a next one (protocol.ts, holdsNext), while a
// body leaves in pieces (send-body.ts: an answer made behind it could only
// wait, whole, in memory, until the client has read that body), and while
// it waits its turn of the event loop (turns.ts): after REQUESTS_PER_TURN
// requests of one read, past the turn's bytes, and while new connections
// arrive. This is flow control, not the connection's lifecycle: a held
// connection is still Busy, or reading a head, as before.
//
// Stopping is in two steps. The parser is no longer asked first: it reads
// no further, and what the socket brings meanwhile waits in it, received
// and unread. Only when bytes do arrive behind it does the socket pause, so
// that the client's next bytes wait in the kernel (TCP's own back-pressure);
// and it reads again only once the parser has read all it held. A client
// that waits for each answer before it sends the next request, as most do,
// never has its socket paused and resumed for a request whose answer comes
// later.

import { Expired, type Deadlines } from "./deadlines.js";
import { Event, isOpen, next, State } from "./lifecycle.js";
import { REQUESTS_PER_TURN } from "./turns.js";

/** How far the connection has stopped reading. */
export const enum Reading {
  /** The parser is asked for what the socket brings. */
  Asking,
  /** The parser is not asked; what the socket brings waits in it. */
  Held,
  /** Bytes came while it was held: the socket is paused too. */
  Paused,
}

/**
 * Everything a connection is, but its socket, its parser, its queue of
 * exchanges (protocol.ts), what it writes (outbox.ts), and whether its loop
 * that asks the parser is running (connection.ts, pump: a fact of the code
 * that drives it, not of the connection).
 */
export interface ConnectionState {
  /** Where it is in its life: changed only through the lifecycle's table. */
  life: State;
  reading: Reading;
  /** Waiting for a turn of the event loop, for the other connections' sake. */
  yielded: boolean;
  /** Requests taken since the read (or resumption) began; at REQUESTS_PER_TURN, the connection yields. */
  turnRequests: number;
  /** The streamed body's reader is full: the body is not read until it has room. */
  bodyFull: boolean;
  /** Heads seen so far: the headers and whole-request deadlines are per request. */
  heads: number;
  /** What runs out when (deadlines.ts). */
  readonly timing: Deadlines;
}

export function newConnectionState(timing: Deadlines): ConnectionState {
  return { life: State.Idle, reading: Reading.Asking, yielded: false, turnRequests: 0, bodyFull: false, heads: 0, timing };
}

/** What happened, as the connection tells it. */
export const enum Input {
  /** A read of `arg` bytes arrived from the socket (facts: the turns' word on it, SPENT and QUEUING). */
  Read,
  /** After a parse (DATA: bytes arrived) or a response out: what the connection waits for now, then whether it reads on. */
  Settled,
  /** Whether it reads on: an answer was made, a request queued or handed on, the client drained what was written. */
  Flow,
  /** The parser handed a head out. */
  HeadRead,
  /** A whole request was taken from the read. */
  Request,
  /** The turn it waited for came (the turns were told of the bytes it holds); then as Flow. */
  TurnCame,
  /** The streamed body's reader is full (`arg` 1) or has room (0); then as Flow. */
  BodyRoom,
  /** A streamed body has a new reader, with room. */
  BodyReader,
  /** The parser was asked after the reading resumed while the socket was paused: whether the socket reads again. */
  Asked,
  /** A 100 Continue went out: the whole request is timed again from when its body is next awaited. */
  Continued,
  /** The server shuts down: finish what is in flight (then as Settled). */
  Shutdown,
  /** The client half-closed (then as Settled). */
  HalfClose,
  /** The connection ends its side: a closing response was written, or it closes with nothing in flight. */
  Close,
  SocketClosed,
  /** The socket is another protocol's from now (RFC 9110 §7.8). */
  HandOver,
  /** The server's sweep of the timers at `now`, with `arg` bytes still unsent. */
  Sweep,
}

// Facts an input is judged by, as bits: computed by the connection from its parser, its queue and its socket.
// What the connection waits for is read from the first of IN_BODY, BEGUN and BUSY that is set; the reading is held
// when any of FULL, SENDING, NEED_DRAIN and HOLDS_NEXT is (so the connection may stop looking at the first it finds),
// unless STREAMED_BODY says that only the body's reader decides.
/** A request's body is being received (or its head waits to be framed). */
export const IN_BODY = 1;
/** The request being read asked for a 100 Continue that has not gone out. */
export const AWAITING_CONTINUE = 2;
/** Part of a request has been read, and the parser reads on. */
export const BEGUN = 4;
/** Requests wait for answers, or a body is going out. */
export const BUSY = 8;
/** The body being read streams to a reader (streamed.ts): only its room says whether to read on. */
export const STREAMED_BODY = 16;
/** maxUnanswered answers are in the making. */
export const FULL = 32;
/** A body leaves in pieces. */
export const SENDING = 64;
/** The client does not take what is written (the socket's writableNeedDrain). */
export const NEED_DRAIN = 128;
/** A request in flight may not run beside a next one (Protocol.holdsNext). */
export const HOLDS_NEXT = 256;
/** Bytes arrived: the body's timer restarts. */
export const DATA = 512;
/** The turn's budget of bytes read is spent (Turns.read). */
export const SPENT = 1024;
/** Connections are arriving: reads wait in the turns' queue. */
export const QUEUING = 2048;

// Effects, as bits, carried out by the connection (connection.ts, carryOut).
/** Pause the socket: the client's next bytes wait in the kernel. */
export const PAUSE_SOCKET = 1;
/** Wait for a turn of the event loop (Turns.wait); TurnCame follows. */
export const WAIT_TURN = 2;
/** Entered Closing: stop reading, drop the queue, and end the output after what is written (FIN). */
export const END_OUTPUT = 4;
/** Entered HandedOver: the socket is the new protocol's. */
export const HAND_OVER = 8;
/** Resume the socket. */
export const RESUME_SOCKET = 16;
/** Ask the parser for what it holds (the reading resumed). */
export const ASK = 32;
/** After asking: Asked says whether the socket reads again. */
export const THEN_ASKED = 64;
/** A request being read ran out of time (which one: HEAD_TIMEOUT, BODY_TIMEOUT, else the whole request's): a 408, and the connection closes. */
export const TIMED_OUT = 128;
export const HEAD_TIMEOUT = 256;
export const BODY_TIMEOUT = 512;
/** A client that reads nothing of what is written is cut (a reset). */
export const CUT = 1024;
/** The linger after the closing response ended: the socket goes. */
export const DESTROY = 2048;
/** The table refused the input here (a late event): nothing was done. */
export const REFUSED = 4096;

/**
 * The one way a connection's state changes: `input`, judged by `facts`
 * (bits above) and `arg` (bytes, unsent bytes, a reader's fullness), moves
 * `s` on; the result is the effects to carry out. `now` is the sweep's
 * clock (deadlines.ts reads its own where a state is entered).
 */
export function step(s: ConnectionState, input: Input, facts = 0, arg = 0, now = 0): number {
  switch (input) {
    case Input.Read:
      return read(s, facts);
    case Input.Settled:
      return settled(s, facts);
    case Input.Flow:
      return flow(s, facts);
    case Input.HeadRead:
      s.heads++;
      return 0;
    case Input.Request:
      return ++s.turnRequests === REQUESTS_PER_TURN ? waitTurn(s) : 0;
    case Input.TurnCame:
      s.yielded = false;
      s.turnRequests = 0;
      return flow(s, facts);
    case Input.BodyRoom: {
      const full = arg === 1;
      if (full === s.bodyFull) return 0;
      s.bodyFull = full;
      return flow(s, facts);
    }
    case Input.BodyReader:
      s.bodyFull = false;
      return 0;
    case Input.Asked:
      // Stopped again while it asked (the next answer in the making): the socket stays paused, or it would take one
      // more read at every answer, and in time all the client sends.
      if (s.reading === Reading.Asking) return RESUME_SOCKET;
      s.reading = Reading.Paused;
      return 0;
    case Input.Continued:
      s.timing.continued();
      return 0;
    case Input.Shutdown:
    case Input.HalfClose: {
      const moved = move(s, input === Input.Shutdown ? Event.Shutdown : Event.HalfClose, false);
      // Idle closes at once; otherwise what is awaited now says whether anything is left.
      return moved !== REFUSED && s.life === State.Draining ? moved | settled(s, facts & ~DATA) : moved;
    }
    case Input.Close:
      return move(s, Event.Close, false);
    case Input.SocketClosed:
      return move(s, Event.SocketClosed, false);
    case Input.HandOver:
      return move(s, Event.HandOver, false);
    case Input.Sweep:
      return sweep(s, facts, arg, now);
  }
}

/** The table's move for `event`, and what entering the new state takes (its deadline; for Closing and HandedOver, letting the socket read). */
function move(s: ConnectionState, event: Event, data: boolean): number {
  const to = next(s.life, event);
  if (to === -1) return REFUSED;
  s.life = to;
  s.timing.enter(to, event, data, s.heads);
  switch (to) {
    case State.Closing:
      // Close after what is written, and read (and drop) what the client still sends meanwhile, whatever held the
      // reading: the kernel must not answer those bytes with a reset that could destroy the response unread.
      return END_OUTPUT | release(s);
    case State.HandedOver:
      return HAND_OVER | release(s);
    default:
      return 0;
  }
}

/** The socket reads again, whatever held it: it is closing, or another protocol's. */
function release(s: ConnectionState): number {
  const paused = s.reading === Reading.Paused;
  s.reading = Reading.Asking;
  return paused ? RESUME_SOCKET : 0;
}

/**
 * What the connection waits for now, after a read was parsed or a response
 * left: a body, a head, its own work, or nothing; then whether it reads on.
 */
function settled(s: ConnectionState, facts: number): number {
  if (!isOpen(s.life)) return 0;
  const held = s.reading !== Reading.Asking;
  let event: Event;
  // A body the server has not yet asked for (its 100 Continue waits behind earlier answers), or has stopped
  // reading (back-pressure, answers in the making, a turn), is not late.
  if (facts & IN_BODY) event = facts & AWAITING_CONTINUE || held ? Event.Busy : Event.Body;
  // Bytes the server itself stopped parsing (back-pressure, a turn) are not a client that is slow to send.
  else if (facts & BEGUN) event = held ? Event.Busy : Event.Head;
  else if (facts & BUSY) event = Event.Busy;
  else event = Event.Idle;
  const moved = move(s, event, (facts & DATA) !== 0);
  return moved | flow(s, facts);
}

/** Stop or go on reading, given what holds the reading (see the top of this file). */
function flow(s: ConnectionState, facts: number): number {
  if (!isOpen(s.life)) return 0;
  // A streamed body being read: only its reader's room (and the turns) stop the reading. The body is the request's,
  // not a next request, and its handler may be answering it meanwhile, in pieces the client reads only once it has
  // sent the body. Whatever follows the body is judged by the other rule again once it is whole.
  const stop = facts & STREAMED_BODY ? s.yielded || s.bodyFull : s.yielded || (facts & (SENDING | NEED_DRAIN | FULL | HOLDS_NEXT)) !== 0;
  if (stop) {
    if (s.reading === Reading.Asking) s.reading = Reading.Held;
    return 0;
  }
  if (s.reading === Reading.Asking) return 0;
  const paused = s.reading === Reading.Paused;
  s.reading = Reading.Asking;
  s.turnRequests = 0;
  // The socket reads again only once the parser has read all it held (Asked).
  return paused ? ASK | THEN_ASKED : ASK;
}

/**
 * A read arrived: it starts a turn's count; while connections arrive, or
 * once the turn's bytes are read (turns.ts), it waits for its turn.
 */
function read(s: ConnectionState, facts: number): number {
  let effects = 0;
  if (s.reading === Reading.Held) {
    // The parser keeps this read; the next ones wait in the kernel.
    s.reading = Reading.Paused;
    effects = PAUSE_SOCKET;
  }
  s.turnRequests = 0;
  const spent = (facts & SPENT) !== 0;
  if ((spent || facts & QUEUING) && !s.yielded) effects |= waitTurn(s);
  if (spent && (s.reading as Reading) === Reading.Held) {
    // Past the turn's bytes the socket stops now, not at its next read: libuv would read it up to 32 times over.
    s.reading = Reading.Paused;
    effects |= PAUSE_SOCKET;
  }
  return effects;
}

/** Yield: hold the reading until a coming turn (TurnCame). */
function waitTurn(s: ConnectionState): number {
  s.yielded = true;
  if (isOpen(s.life) && s.reading === Reading.Asking) s.reading = Reading.Held;
  return WAIT_TURN;
}

/** The sweep: what has run out, and what it takes. */
function sweep(s: ConnectionState, facts: number, unsent: number, now: number): number {
  // A socket handed over is the new protocol's to time.
  if (s.life >= State.HandedOver) return 0;
  switch (s.timing.check(now, unsent)) {
    case Expired.Nothing:
      return 0;
    case Expired.SendStalled:
      return CUT;
    case Expired.SendDone:
      return settled(s, facts & ~DATA);
    case Expired.Request:
      return TIMED_OUT;
    case Expired.Head:
      return TIMED_OUT | HEAD_TIMEOUT;
    case Expired.Body:
      return TIMED_OUT | BODY_TIMEOUT;
    case Expired.KeepAlive:
      return move(s, Event.Close, false);
    case Expired.Linger:
      return DESTROY;
  }
}
