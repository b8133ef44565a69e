// Whether a connection reads now. It stops while its client is not reading
// its responses (the socket's back-pressure), while too many of its requests
// wait for answers (a client cannot make the server buffer without bound by
// pipelining and never reading), while a body leaves in pieces (send-body.ts:
// an answer made behind it could only wait, whole, in memory, however large,
// until the client has read that body), and while it waits its turn of the event
// loop (turns.ts): after REQUESTS_PER_TURN requests of one read, and while
// new connections arrive. This is flow control, not the connection's
// lifecycle (lifecycle.ts): a paused connection is still Busy, or reading a
// head, as before.

import type { RequestParser } from "../parse/parser.js";
import type { Transport } from "./options.js";
import { REQUESTS_PER_TURN, type Turns } from "./turns.js";

export class Flow {
  private readonly socket: Transport;
  private readonly parser: RequestParser;
  private readonly turns: Turns;
  private readonly maxPipelined: number;
  /** Parse what the parser holds (called on resuming). */
  private readonly resumeParsing: () => void;
  /** The connection's own look at its flow: it calls update() while it is open (a closing one reads and drops). */
  private readonly refresh: () => void;
  paused = false;
  /** Parsing a read: its responses' flushes leave the state to be recomputed once, after it. */
  inRead = false;
  /** Requests taken since the read (or resumption) began; at REQUESTS_PER_TURN, the connection yields. */
  private turnRequests = 0;
  /** Waiting for a turn of the event loop, for the other connections' sake. */
  private yielded = false;

  constructor(socket: Transport, parser: RequestParser, turns: Turns, maxPipelined: number, resumeParsing: () => void, refresh: () => void) {
    this.socket = socket;
    this.parser = parser;
    this.turns = turns;
    this.maxPipelined = maxPipelined;
    this.resumeParsing = resumeParsing;
    this.refresh = refresh;
  }

  /** A read arrived: it starts a turn's count; while connections arrive, it waits for its turn (see turns.ts). */
  read(): void {
    this.turnRequests = 0;
    if (this.turns.queuing && !this.yielded) this.waitTurn();
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

  /** The turn came: read on; returns how many requests that served. */
  private readonly takeTurn = (): number => {
    this.yielded = false;
    this.turnRequests = 0;
    this.refresh();
    return this.turnRequests;
  };

  /** Pause or resume reading, given how many requests wait for their answers and whether a body leaves in pieces. */
  update(waiting: number, sendingBody: boolean): void {
    const stop = this.yielded || sendingBody || this.socket.writableNeedDrain || waiting >= this.maxPipelined;
    if (stop && !this.paused) {
      this.paused = true;
      this.parser.pause();
      this.socket.pause();
    } else if (!stop && this.paused) {
      this.paused = false;
      this.socket.resume();
      this.turnRequests = 0;
      this.resumeParsing();
    }
  }

  /** The connection closes: read (and drop) what the client still sends, whatever held the reading. */
  release(): void {
    if (this.paused) {
      this.paused = false;
      this.socket.resume();
    }
  }
}
