// Whether a connection reads now. It stops while its client is not reading
// its responses (the socket's back-pressure), while maxUnanswered answers are
// in the making (options.ts says why), while a request in flight may not run
// beside a next one (protocol.ts, holdsNext), while a body leaves in pieces
// (send-body.ts: an answer made behind it could only wait, whole, in memory,
// until the client has read that body), and while it waits its turn of the
// event loop (turns.ts): after REQUESTS_PER_TURN requests of one read, and
// while new connections arrive. This is flow control, not the connection's
// lifecycle (lifecycle.ts): a paused connection is still Busy, or reading a
// head, as before.
//
// Stopping is in two steps. The parser is no longer asked first (the
// connection's pump looks at `paused`): it reads no further, and what the
// socket brings meanwhile waits in it, received and unread. Only when bytes
// do arrive behind it does the socket pause, so that the client's next bytes
// wait in the kernel (TCP's own back-pressure); and it reads again only once
// the parser has read all it held. A client that waits for each answer
// before it sends the next request, as most do, never has its socket paused
// and resumed for a request whose answer comes later.

import type { RequestParser } from "../parse/parser.js";
import type { Transport } from "./options.js";
import { REQUESTS_PER_TURN, type Turns } from "./turns.js";

/** How far the connection has stopped reading. */
const enum Hold {
  /** Reading and parsing. */
  None,
  /** The parser is not asked; what the socket brings waits in it. */
  Parser,
  /** Bytes came while the parser was held: the socket is paused too. */
  Socket,
}

export class Flow {
  private readonly socket: Transport;
  private readonly parser: RequestParser;
  private readonly turns: Turns;
  private readonly maxUnanswered: number;
  /** Ask the parser again, for what it holds (called on resuming). */
  private readonly resumeParsing: () => void;
  /** The connection's own look at its flow: it calls update() while it is open (a closing one reads and drops). */
  private readonly refresh: () => void;
  private hold = Hold.None;
  /** Parsing a read: its responses' flushes leave the state to be recomputed once, after it. */
  inRead = false;
  /** Requests taken since the read (or resumption) began; at REQUESTS_PER_TURN, the connection yields. */
  private turnRequests = 0;
  /** Waiting for a turn of the event loop, for the other connections' sake. */
  private yielded = false;

  constructor(socket: Transport, parser: RequestParser, turns: Turns, maxUnanswered: number, resumeParsing: () => void, refresh: () => void) {
    this.socket = socket;
    this.parser = parser;
    this.turns = turns;
    this.maxUnanswered = maxUnanswered;
    this.resumeParsing = resumeParsing;
    this.refresh = refresh;
  }

  /** True while the connection has stopped reading (the parser is not asked, at least). */
  get paused(): boolean {
    return this.hold !== Hold.None;
  }

  /**
   * A read of `bytes` arrived: it starts a turn's count; while connections
   * arrive, or once the turn's bytes are read (see turns.ts), it waits for
   * its turn.
   */
  read(bytes: number): void {
    if (this.hold === Hold.Parser) {
      // The parser keeps this read; the next ones wait in the kernel.
      this.hold = Hold.Socket;
      this.socket.pause();
    }
    this.turnRequests = 0;
    const spent = this.turns.read(bytes);
    if ((spent || this.turns.queuing) && !this.yielded) this.waitTurn();
    if (spent && (this.hold as Hold) === Hold.Parser) {
      // Past the turn's bytes the socket stops now, not at its next read: libuv would read it up to 32 times over.
      this.hold = Hold.Socket;
      this.socket.pause();
    }
  }

  /** A request was taken from the read: after REQUESTS_PER_TURN of them, the connection yields. */
  request(): void {
    if (++this.turnRequests === REQUESTS_PER_TURN) this.waitTurn();
  }

  private waitTurn(): void {
    this.yielded = true;
    this.refresh();
    this.turns.wait(this.takeTurn);
  }

  /** The turn came: read on, the bytes held counted toward the turn's; returns how many requests that served. */
  private readonly takeTurn = (): number => {
    this.yielded = false;
    this.turnRequests = 0;
    this.turns.read(this.parser.held);
    this.refresh();
    return this.turnRequests;
  };

  /**
   * Stop or go on reading, given how many requests handed on have no answer
   * out yet, whether a body leaves in pieces, and whether a request in
   * flight holds the next one back (Protocol.holdsNext).
   */
  update(unanswered: number, sendingBody: boolean, holdsNext: boolean): void {
    this.apply(this.yielded || sendingBody || this.socket.writableNeedDrain || unanswered >= this.maxUnanswered || holdsNext);
  }

  /**
   * While a body streams to its reader (streamed.ts), only that reader (full)
   * and the turns stop the reading: the body is the request's, not a next
   * request, and its handler may be answering it meanwhile, in pieces the
   * client reads only once it has sent the body. Whatever follows the body
   * is judged by update() again once it is whole.
   */
  updateBody(full: boolean): void {
    this.apply(this.yielded || full);
  }

  private apply(stop: boolean): void {
    if (stop && this.hold === Hold.None) {
      this.hold = Hold.Parser;
    } else if (!stop && this.hold !== Hold.None) {
      const socketPaused = this.hold === Hold.Socket;
      this.hold = Hold.None;
      this.turnRequests = 0;
      this.resumeParsing();
      // The socket reads again only once the parser has read all it held: stopped again on those bytes (the
      // next answer in the making), it would otherwise take one more read at every answer, and in time all
      // the client sends. A release() meanwhile (closing) left the hold at None: the socket reads, and drops.
      if (socketPaused) {
        if (this.hold === Hold.None) this.socket.resume();
        else this.hold = Hold.Socket;
      }
    }
  }

  /** The connection closes: read (and drop) what the client still sends, whatever held the reading. */
  release(): void {
    if (this.hold === Hold.Socket) this.socket.resume();
    this.hold = Hold.None;
  }
}
