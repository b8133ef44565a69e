// One client connection: the wiring of its parts. Socket bytes go to the
// parser, which is asked for what they mean while the flow lets it read
// (pump); what the parser finds goes to the protocol (protocol.ts: the
// queue of exchanges, 100-continue, keep-alive and close), to the handler,
// and back as responses through the writer and the outbox (outbox.ts);
// bodies too large to hand over at once leave as the client reads them
// (send-body.ts). The connection's own state is one record, changed only
// by the step function (steps.ts: its life in the lifecycle's table,
// whether it reads, what it times), to which this file tells what happened
// and whose effects it carries out. This file decides nothing of its own:
// it passes events and carries out decisions. A streamed
// service (streamed.ts) gets each request at its head and its body in
// pieces, and may take the socket over.

import { protocolError, type ProtocolError } from "../parse/errors.js";
import { RequestParser } from "../parse/parser.js";
import { protocolProblem } from "../message/problem.js";
import type { Request, RequestHead } from "../message/request.js";
import { CONTINUE, serialize, type Response, type Serialized } from "../message/response.js";
import { Deadlines } from "./deadlines.js";
import { answerFailure } from "./handler-failure.js";
import { isOpen, State } from "./lifecycle.js";
import type { ConnectionHooks, ConnectionOptions, LiveConnection, Transport } from "./options.js";
import { Outbox } from "./outbox.js";
import { Protocol, type Exchange } from "./protocol.js";
import { isLargeBody, sendStream, sendWhole } from "./send-body.js";
import { admitHead, asService, type Admission, type Handler, type Service } from "./service.js";
import { isStreamedService, type Link, type Streamed, type StreamedService } from "./streamed.js";
import {
  ASK,
  AWAITING_CONTINUE,
  BEGUN,
  BODY_TIMEOUT,
  BUSY,
  CUT,
  DATA,
  DESTROY,
  END_OUTPUT,
  FULL,
  HAND_OVER,
  HEAD_TIMEOUT,
  HOLDS_NEXT,
  IN_BODY,
  Input,
  NEED_DRAIN,
  newConnectionState,
  PAUSE_SOCKET,
  QUEUING,
  Reading,
  REFUSED,
  RESUME_SOCKET,
  SENDING,
  SPENT,
  step,
  STREAMED_BODY,
  THEN_ASKED,
  TIMED_OUT,
  WAIT_TURN,
  type ConnectionState,
} from "./steps.js";
import type { ConnectionTrace } from "./trace-hook.js";
import { LONE_TURNS, type Turns, type Waiter } from "./turns.js";

function isPromise(value: unknown): value is Promise<Response> {
  return typeof (value as Promise<Response> | null)?.then === "function";
}

export class Connection implements LiveConnection {
  private readonly socket: Transport;
  /** Everything written to the socket goes through it (see outbox.ts), but bodies sent in pieces. */
  private readonly out: Outbox;
  private readonly handler: Handler;
  private readonly admit: ((head: RequestHead) => Admission) | undefined;
  /** A streamed service's handler (streamed.ts), and what it sees of this connection; null for a plain one. */
  private readonly streamed: StreamedService["streamed"] | null;
  private readonly clientError: StreamedService["clientError"] | null = null;
  /** The service abandons what is in flight when the client half-closes (StreamedService.abortOnHalfClose). */
  private readonly abortOnHalfClose: boolean = false;
  private readonly link: Link | null;
  /** The exchange whose head a streamed handler is being given now: only then may it take the socket over. */
  private atHead: Exchange | null = null;
  /** Takes the connection's listeners off the socket, when a streamed handler takes it over. */
  private readonly detach: (() => void) | null;
  private readonly options: ConnectionOptions;
  private readonly hooks: ConnectionHooks;
  private readonly parser: RequestParser;
  private readonly trace: ConnectionTrace | null;
  private readonly protocol: Protocol;
  /** The server's turns of the event loop (turns.ts): reads and bodies sent in pieces take them. */
  private readonly turns: Turns;
  /** The connection's own state, whole: changed only by step() (steps.ts), through this.step(). */
  private readonly s: ConnectionState;
  private readonly maxUnanswered: number;
  private readonly client: string; // read once, up front: a destroyed socket forgets its peer
  /** A flush of answers that came outside a read waits for the microtask queue to drain (settle). */
  private flushQueued = false;
  /**
   * A read is being parsed (parse): asked to parse again from inside it (a handler's answer lets the reading go
   * on), the loop running asks on; its responses' flushes leave the state to be recomputed once, after it.
   */
  private pumping = false;

  constructor(socket: Transport, service: Handler | Service | StreamedService, options: ConnectionOptions, hooks: ConnectionHooks) {
    this.socket = socket;
    this.out = new Outbox(socket);
    this.client = socket.remoteAddress ?? "-";
    if (isStreamedService(service)) {
      this.streamed = service.streamed;
      this.clientError = service.clientError ?? null;
      this.abortOnHalfClose = service.abortOnHalfClose === true;
      this.handler = () => {
        throw new Error("A streamed service's requests go to its reader");
      };
      this.admit = undefined;
      this.link = this.makeLink(socket.remotePort ?? 0);
    } else {
      const { handle, admit } = asService(service);
      this.handler = handle;
      this.admit = admit;
      this.streamed = null;
      this.link = null;
    }
    this.options = options;
    this.hooks = hooks;
    this.trace = options.trace?.(socket) ?? null;
    // A streamed service is given each field's name as sent too (node:http's rawHeaders).
    this.parser = new RequestParser(options.limits, this.trace, { keepNames: this.streamed !== null, peer: this.client });
    this.turns = options.turns ?? LONE_TURNS;
    this.maxUnanswered = options.maxUnanswered;
    this.s = newConnectionState(new Deadlines(options));
    this.protocol = new Protocol(options.responseFields);
    // Responses are written whole; waiting for more (Nagle) would only add latency.
    socket.setNoDelay?.(true);
    const onData = (chunk: Buffer) => this.onData(chunk);
    // The client finished sending (half-close): it is told after what the parser still holds is read (pump).
    const onEnd = () => {
      this.parser.end();
      if (!this.pumping) this.pump();
    };
    const onDrain = () => this.updateFlow();
    socket.on("data", onData);
    socket.on("end", onEnd);
    socket.on("drain", onDrain);
    this.detach =
      this.streamed === null
        ? null
        : () => {
            socket.off("data", onData);
            socket.off("end", onEnd);
            socket.off("drain", onDrain);
          };
    // Resets and broken pipes end in "close"; there is nobody left to answer.
    socket.on("error", () => {});
    socket.on("close", () => {
      const handedOver = this.s.life === State.HandedOver;
      this.abortBody(true);
      if (this.step(Input.SocketClosed) & REFUSED) return;
      this.protocol.closed();
      if (!handedOver) this.trace?.closed();
      hooks.onClose(this);
    });
  }

  /** What a streamed handler sees of this connection (streamed.ts). */
  private makeLink(remotePort: number): Link {
    return {
      socket: this.socket,
      remoteAddress: this.client,
      remotePort,
      holdBody: (full: boolean) => {
        this.step(Input.BodyRoom, this.flowFacts(), full ? 1 : 0);
      },
      handOver: () => this.handOver(),
      holdContinue: () => {
        const exchange = this.atHead;
        if (exchange !== null && exchange.continueOwed) exchange.continueHeld = true;
      },
      sendContinue: () => {
        const exchange = this.protocol.reading;
        if (exchange === null || !exchange.continueHeld) return;
        exchange.continueHeld = false;
        if (this.protocol.continueNow(exchange)) this.sendContinue(exchange);
        // Awaited now: the body's deadline runs from here.
        if (!this.pumping) this.update(false);
      },
    };
  }

  /**
   * The streamed handler takes the socket over after the head it is being
   * given (RFC 9110 §7.8): what earlier answers left pending goes out first,
   * then the connection lets go of the socket, reading nothing more from it
   * (its bytes wait, unread, for the new protocol's reader, as node:http
   * leaves them) and timing nothing; the bytes read past the head are the
   * new protocol's.
   */
  private handOver(): Buffer | null {
    const exchange = this.atHead;
    if (exchange === null || !isOpen(this.s.life) || !this.protocol.alone(exchange)) return null;
    const rest = this.parser.handOver();
    this.letGo();
    return rest;
  }

  /** The socket is the streamed handler's from now: what is pending goes out first, and nothing more is read, written or timed. */
  private letGo(): void {
    this.out.flush();
    this.protocol.closed();
    this.step(Input.HandOver);
  }

  /** A streamed service that answers protocol errors itself takes the socket, when nothing before the error waits to be written. */
  private errorTaken(error: ProtocolError): boolean {
    if (this.clientError === null || !isOpen(this.s.life)) return false;
    const reading = this.protocol.reading;
    if (reading === null ? !this.protocol.idle : !this.protocol.alone(reading) || reading.response !== null) return false;
    this.parser.stop();
    this.abortBody(false);
    this.out.flush();
    if (!this.clientError!(error, this.link!)) return false;
    this.letGo();
    return true;
  }

  /** The streamed body being read will never be whole: its reader hears so, once, and whether it is because the client went. */
  private abortBody(clientGone: boolean): void {
    const exchange = this.protocol.reading;
    if (exchange === null || exchange.streamed === null) return;
    const streamed = exchange.streamed;
    exchange.streamed = null;
    streamed.abort(clientGone);
  }

  /**
   * The one way the connection's state changes: step() (steps.ts) moves the
   * record on for `input`, judged by `facts` and `arg`, and what it says to
   * do is done here. Returns those effects (REFUSED: the input came too late,
   * and nothing was done).
   */
  private step(input: Input, facts = 0, arg = 0, now = 0): number {
    const effects = step(this.s, input, facts, arg, now);
    if (effects !== 0) this.carryOut(effects);
    return effects;
  }

  /** What step() said to do, in its order: the socket's reading, the turn, the end of the output, the hand-over, asking the parser again, a timeout. */
  private carryOut(effects: number): void {
    const socket = this.socket;
    if (effects & PAUSE_SOCKET) socket.pause();
    if (effects & WAIT_TURN) this.turns.wait(this.waiter);
    if (effects & END_OUTPUT) {
      this.abortBody(false);
      this.parser.stop();
      this.protocol.closed();
    }
    if (effects & RESUME_SOCKET) socket.resume();
    // Close after what is written: end() sends FIN once the writes are out; the socket keeps reading (and dropping)
    // what the client still sends.
    if (effects & END_OUTPUT) this.out.end();
    if (effects & HAND_OVER) {
      this.detach!();
      // Neither flowing nor paused, as node:http leaves an upgraded socket: its bytes wait until its new reader
      // listens for them (or resumes it), so none is lost between the hand-over and that reader.
      (socket as { readableFlowing: boolean | null }).readableFlowing = null;
    }
    if (effects & ASK) {
      this.parse(null);
      if (effects & THEN_ASKED) this.step(Input.Asked);
    }
    if (effects & TIMED_OUT) {
      const options = this.options;
      this.timedOut(
        effects & HEAD_TIMEOUT
          ? `The request head was not complete ${options.headersTimeoutMs} ms after its first byte`
          : effects & BODY_TIMEOUT
            ? `The request body stalled for ${options.bodyTimeoutMs} ms`
            : `The request was not complete ${options.requestTimeoutMs} ms after its first byte`,
      );
    }
    if (effects & CUT) this.cutStalled();
    if (effects & DESTROY) socket.destroy();
  }

  /**
   * What the parser, the queue and the socket say now, as the facts step()
   * judges by (steps.ts): what the connection waits for, then whether
   * anything holds its reading. Each is looked for only where step() reads
   * it (the first of IN_BODY, BEGUN, BUSY; of the holding facts, the first
   * found), since this runs after every read and every answer.
   */
  private facts(): number {
    const parser = this.parser;
    const protocol = this.protocol;
    let facts: number;
    if (parser.inBody) facts = protocol.awaitingContinue ? IN_BODY | AWAITING_CONTINUE : IN_BODY;
    else if (!parser.idle && !parser.closed) facts = BEGUN;
    else facts = protocol.idle ? 0 : BUSY;
    return facts | this.flowFacts();
  }

  /** Whether anything holds the reading: a streamed body (whose reader's room alone decides), else the first fact found that holds it. */
  private flowFacts(): number {
    const protocol = this.protocol;
    if (protocol.reading?.streamed != null) return STREAMED_BODY;
    if (protocol.unanswered >= this.maxUnanswered) return FULL;
    if (protocol.sending) return SENDING;
    if (protocol.holdsNext) return HOLDS_NEXT;
    return this.socket.writableNeedDrain ? NEED_DRAIN : 0;
  }

  /** This connection as it waits for its turn (turns.ts): light or heavy by what its parser holds. */
  private readonly waiter: Waiter = {
    held: () => this.unread,
    take: () => this.takeTurn(),
  };

  /** What the parser holds that will still be read: nothing once the connection closed (its client went while it waited). */
  private get unread(): number {
    return isOpen(this.s.life) ? this.parser.held : 0;
  }

  /** The turn this connection waited for came: it reads on, the bytes it holds counted toward the turn's; returns how many requests that served. */
  private takeTurn(): number {
    this.turns.read(this.unread);
    this.step(Input.TurnCame, this.flowFacts());
    return this.s.turnRequests;
  }

  /** True when nothing is in flight: shutting the connection down now loses nothing. */
  get idle(): boolean {
    return this.protocol.idle && (this.parser.idle || this.parser.closed);
  }

  get handedOver(): boolean {
    return this.s.life === State.HandedOver;
  }

  /** When the current state runs out (ms since the epoch). */
  get deadline(): number {
    return this.s.timing.at;
  }

  private onData(chunk: Buffer): void {
    if (this.parser.closed) return; // lingering after a closing response: read and drop
    this.trace?.received(chunk);
    const turns = this.turns;
    this.step(Input.Read, (turns.read(chunk.length) ? SPENT : 0) | (turns.queuing ? QUEUING : 0));
    this.parse(chunk);
  }

  /**
   * Parse a read, or (null) the bytes held while the reading was stopped. Its responses leave in one write
   * (pipelining); the state is recomputed once, after it: a head or body it leaves unfinished is timed from now.
   * Asked again from inside (a handler's answer lets the reading go on), it leaves the asking to the loop running.
   */
  private parse(chunk: Buffer | null): void {
    if (chunk !== null) this.parser.receive(chunk);
    if (this.pumping) return;
    this.out.hold();
    this.pumping = true;
    this.pump();
    this.pumping = false;
    this.out.release();
    this.update(true);
  }

  /**
   * Ask the parser for what the bytes mean, one event at a time, for as
   * long as the connection reads (steps.ts): what is not asked
   * for waits in the parser, unread. The end of the input is told even
   * while the reading is stopped, once nothing before it is left to read:
   * a client that leaves is heard at once.
   */
  private pump(): void {
    const parser = this.parser;
    for (;;) {
      if (this.s.reading !== Reading.Asking && !parser.endIsNext) return;
      const event = parser.next();
      // The common events first: a switch on strings tries its cases in order.
      switch (event.kind) {
        case "head":
          this.onHead(event.head);
          break;
        case "request":
          this.onRequest(event.request);
          break;
        case "need-data":
          return;
        case "body":
          this.onBody(event.piece);
          break;
        case "continue":
          this.onContinue();
          break;
        case "error":
          this.onError(event.error);
          break;
        case "input-end":
          this.onInputEnd();
          return;
      }
    }
  }

  // ---- What the parser found ----

  /**
   * A head: its exchange joins the queue, and before any of its body is read
   * its service has its say (its body limit, its body in pieces, or a refusal
   * from the head alone).
   */
  private onHead(head: RequestHead): void {
    const exchange = this.protocol.head(head, this.hooks.onExchange === undefined ? 0 : performance.now());
    this.trace?.head(head);
    if (this.streamed !== null) {
      this.parser.streamBody();
      if (this.protocol.mayHandOn(exchange)) return this.streamHead(exchange, head);
    } else {
      const admission = admitHead(this.admit, head);
      if (admission !== undefined) {
        if ("refuse" in admission) return this.refuseFromHead(exchange, admission.refuse);
        this.parser.limitBody(admission.maxBodyBytes);
      }
      if (this.protocol.mayHandOn(exchange)) return;
    }
    // Its handler gets it once the answers before it are out (writeReady); nothing of its body, and nothing
    // after it, is read meanwhile: the parser is not asked (holdsNext), so even a request without a body is
    // whole only once its turn has come.
    exchange.waiting = true;
    this.updateFlow();
  }

  /**
   * A request that waited for the answers before it is at the front now: a
   * streamed handler gets its head; its body and its end, as a plain
   * handler its whole request, come as the parser is asked again.
   */
  private handOnWaiting(exchange: Exchange): void {
    exchange.waiting = false;
    if (this.streamed !== null) this.streamHead(exchange, exchange.head!);
  }

  /** A streamed service takes the request at its head; its body follows in pieces (onBody), its end with onRequest. */
  private streamHead(exchange: Exchange, head: RequestHead): void {
    this.step(Input.BodyReader);
    let streamed: Streamed;
    this.atHead = exchange;
    try {
      streamed = this.streamed!(head, this.link!);
    } catch (error) {
      // Nobody reads the body: answered from the head, and the connection closes after it.
      return this.refuseFromHead(exchange, this.internalError(error, null));
    } finally {
      this.atHead = null;
    }
    if (this.s.life === State.HandedOver) return;
    exchange.streamed = streamed;
    const response = streamed.response;
    if (isPromise(response)) {
      response.then(
        (answer) => this.settle(exchange, answer),
        (error: unknown) => this.settle(exchange, this.internalError(error, exchange.request)),
      );
    } else this.settle(exchange, response);
  }

  private onBody(piece: Buffer): void {
    this.protocol.reading?.streamed?.body(piece);
  }

  /** The parser awaits the body of the head just taken, within every limit: the 100 Continue it asked for is owed now. */
  private onContinue(): void {
    const exchange = this.protocol.reading;
    if (exchange !== null && this.protocol.continueNow(exchange)) this.sendContinue(exchange);
  }

  private onRequest(request: Request): void {
    // Shutting down: the request begun before it is answered, and is the last one read.
    if (this.protocol.ending) this.parser.stop();
    this.step(Input.Request);
    const exchange = this.protocol.request(request);
    this.trace?.request(request);
    const streamed = exchange.streamed;
    if (streamed !== null) {
      // Its handler has it since its head: it hears that the body is whole, and what follows is a next request.
      exchange.streamed = null;
      this.step(Input.BodyReader);
      streamed.end(request);
      this.updateFlow();
      return;
    }
    this.handle(exchange, request);
  }

  /** The whole request to a plain service's handler; its answer is settled when it comes. */
  private handle(exchange: Exchange, request: Request): void {
    let result: Response;
    try {
      const returned = this.handler(request);
      if (isPromise(returned)) {
        returned.then(
          (response) => this.settle(exchange, response),
          (error: unknown) => this.settle(exchange, this.internalError(error, request)),
        );
        // An answer still in the making: no request after it is read until it is out (maxUnanswered).
        this.updateFlow();
        return;
      }
      result = returned;
    } catch (error) {
      result = this.internalError(error, request);
    }
    this.settle(exchange, result);
  }

  /** Answer from the head and close, the body never read (see Protocol.refuse). */
  private refuseFromHead(exchange: Exchange, response: Response): void {
    this.parser.stop();
    this.trace?.refusedFromHead?.();
    this.protocol.refuse(exchange);
    this.settle(exchange, response);
  }

  private onError(error: ProtocolError): void {
    this.trace?.error(error);
    if (this.errorTaken(error)) return;
    this.abortBody(false);
    const exchange = this.protocol.failed(this.hooks.onExchange === undefined ? 0 : performance.now());
    if (exchange === null) {
      // The request was answered before its body broke the rule: nothing can answer it now, and its bytes
      // cannot be told from a next request's. The connection closes once what is written is out.
      if (!this.protocol.sending && isOpen(this.s.life)) this.step(Input.Close);
      return;
    }
    this.settle(exchange, protocolProblem(error, exchange.head?.target ?? this.parser.current.target));
  }

  // ---- Responses ----

  private settle(exchange: Exchange, response: Response): void {
    if (!isOpen(this.s.life)) return;
    exchange.response = response;
    // An answer that comes outside a read (a later microtask) while other handlers of this connection are at work
    // side by side: theirs typically come in the same run of the microtask queue, and all leave in one write once it
    // is drained (a tick scheduled from a microtask runs after the queue is empty), not a write each.
    if (!this.pumping && this.protocol.unanswered > 1) {
      if (!this.flushQueued) {
        this.flushQueued = true;
        process.nextTick(this.queuedFlush);
      }
      return;
    }
    this.flush();
  }

  /** Answers gathered since settle() queued it: written now, those that can be. */
  private readonly queuedFlush = (): void => {
    this.flushQueued = false;
    if (isOpen(this.s.life)) this.flush();
  };

  private flush(): void {
    // The responses ready now leave together.
    this.out.hold();
    const closed = this.writeReady();
    this.out.release();
    if (closed) return;
    if (this.pumping) this.updateFlow(); // whether to read on; the state follows once the read is parsed
    else this.update(false);
  }

  /** Writes the responses at the front of the queue that are ready; true when the last one closed the connection. */
  private writeReady(): boolean {
    const protocol = this.protocol;
    for (let exchange = protocol.front(); exchange !== null; exchange = protocol.front()) {
      // Its handler learns of it first: it may hold the 100 Continue, or answer at once.
      if (exchange.waiting) this.handOnWaiting(exchange);
      if (!isOpen(this.s.life) || protocol.front() !== exchange) return !isOpen(this.s.life);
      if (exchange.continueOwed) {
        if (!exchange.continueHeld) this.sendContinue(exchange);
        else if (exchange.response !== null) this.answeredWithoutContinue(exchange);
      }
      if (exchange.response === null) break;
      protocol.take();
      this.write(exchange, exchange.response);
      // A body sent in pieces finishes later; what follows it waits (see sent).
      if (protocol.sending) break;
      if (exchange.close) return (this.step(Input.Close) & REFUSED) === 0;
    }
    return false;
  }

  private write(exchange: Exchange, response: Response): void {
    const writing = this.protocol.writing(exchange, response);
    let out: Serialized;
    try {
      out = serialize(response, writing);
    } catch (error) {
      // The handler produced a response that cannot be written safely (bad field, bad status).
      response = this.internalError(error, exchange.request);
      out = serialize(response, this.protocol.writing(exchange, response));
    }
    const body = out.body;
    this.trace?.response(out.head, body, out.stream !== undefined);
    if (out.stream !== undefined) {
      const stream = out.stream;
      // Trailers are asked of the response itself (a method may need its `this`).
      const framing = { chunked: writing.chunked === true, length: response.length ?? -1, trailers: response.trailers === undefined ? undefined : () => response.trailers!() };
      this.sendInPieces(exchange, response.status, out.head, () => sendStream(this.socket, stream, framing, this.turns));
      return;
    }
    const whole = out.bytes ?? body;
    if (whole !== undefined && isLargeBody(whole)) {
      // Handed to the socket a piece at a time as the client reads (send-body.ts), never all at once.
      const bodyBytes = out.bodyBytes;
      this.sendInPieces(exchange, response.status, out.bytes === undefined ? out.head : null, () =>
        sendWhole(this.socket, whole, this.turns).then((done) => (done ? bodyBytes : -1)),
      );
      return;
    }
    if (out.bytes !== undefined) this.out.send(out.bytes);
    else if (body === undefined) this.out.send(out.head);
    else if (typeof body === "string") this.out.send(out.head + body);
    else {
      this.out.send(out.head);
      this.out.send(body);
    }
    if (this.hooks.onExchange !== undefined) this.logExchange(exchange, response.status, out.bodyBytes);
    if (response.onSent !== undefined) response.onSent();
  }

  /**
   * A body that leaves as the client reads it, after `head`: later responses
   * wait for it (RFC 9112 §9.3.2 order), and what `send` returns settles
   * with the body's length, or -1 when the client went away.
   */
  private sendInPieces(exchange: Exchange, status: number, head: string | null, send: () => Promise<number>): void {
    // The body writes to the socket itself: nothing may stay pending before it.
    if (head !== null) this.out.send(head);
    this.out.flush();
    this.protocol.sending = true;
    send().then(
      (bytes) => this.sent(exchange, status, bytes),
      (error: unknown) => {
        // The status line is out: the only honest end is to cut the connection.
        this.protocol.sending = false;
        this.internalError(error, exchange.request);
        this.socket.destroy();
      },
    );
  }

  /** A body sent in pieces is out (`bytes`), or its client went away (-1): go on with the queue. */
  private sent(exchange: Exchange, status: number, bytes: number): void {
    const close = this.protocol.sent(exchange);
    if (bytes >= 0 && this.hooks.onExchange !== undefined) this.logExchange(exchange, status, bytes);
    if (bytes >= 0) exchange.response?.onSent?.();
    if (!isOpen(this.s.life) || bytes < 0) return;
    if (close) this.step(Input.Close);
    else this.flush();
  }

  /**
   * A final answer to a request whose handler held its 100 Continue and never
   * sent it: its client may never send the body, and its bytes, should they
   * come, cannot be told from a next request's: nothing more is read, and the
   * connection closes after the answer (as a refusal from the head does).
   */
  private answeredWithoutContinue(exchange: Exchange): void {
    exchange.continueOwed = false;
    exchange.continueHeld = false;
    exchange.close = true;
    this.parser.stop();
  }

  /** The interim answer an Expect: 100-continue asked for (RFC 9110 §10.1.1). */
  private sendContinue(exchange: Exchange): void {
    exchange.continueOwed = false;
    // The client sends its body from now: the whole request is timed again from here.
    this.step(Input.Continued);
    this.out.send(CONTINUE);
    this.trace?.response(CONTINUE, undefined, false);
  }

  private logExchange(exchange: Exchange, status: number, bodyBytes: number): void {
    const current = exchange.head ?? this.parser.current;
    this.hooks.onExchange?.({
      client: this.client,
      method: current.method || "-",
      target: current.target || "-",
      // A head refused after its request line still has the line's version.
      version: current.method === "" ? "-" : current.minor === 0 ? "HTTP/1.0" : "HTTP/1.1",
      status,
      bodyBytes,
      ms: performance.now() - exchange.started,
    });
  }

  private internalError(error: unknown, request: Request | null): Response {
    return answerFailure(error, request, this.hooks.onHandlerError);
  }

  // ---- State and flow ----

  /** After bytes arrived (`data`) or a response left: what the connection waits for now, and whether it reads on. */
  private update(data: boolean): void {
    this.step(Input.Settled, this.facts() | (data ? DATA : 0), this.parser.heads);
  }

  /** Whether it reads on. */
  private updateFlow(): void {
    this.step(Input.Flow, this.flowFacts());
  }

  /** Called by the server's sweep; acts when what the connection waits for has run out (Draining included: deadlines.ts). */
  checkDeadline(now: number): void {
    this.step(Input.Sweep, this.facts(), this.socket.writableLength, now);
  }

  /** A request being read ran out of time: a 408, and the connection closes (protocolProblem). */
  private timedOut(detail: string): void {
    this.parser.stop();
    this.onError(protocolError("REQUEST_TIMEOUT", detail, 0));
  }

  /** Server shutdown: finish what is in flight (bounded by the timeouts and the grace), then close. */
  drain(): void {
    if (!isOpen(this.s.life)) return;
    this.protocol.shutdown();
    // No request is read after those begun: with answers in the making, each one out would otherwise
    // let the parser take the next, and a client that keeps pipelining would hold the shutdown for good.
    if (!this.parser.begun) this.parser.stop();
    // Idle closes at once; otherwise the last response closes (Protocol.take), or the state finds nothing left.
    this.step(Input.Shutdown, this.facts(), this.parser.heads);
  }

  /**
   * The client half-closed: it will send nothing more, and the parser has
   * read all it sent before (pump). Requests it completed are
   * answered, the last response closes; one it left unfinished is dropped.
   */
  private onInputEnd(): void {
    if (!isOpen(this.s.life)) return;
    this.parser.stop();
    this.abortBody(true);
    // The service's choice (streamed.ts): what is still in flight is not answered; the connection ends its side now.
    if (this.abortOnHalfClose && !this.protocol.idle) {
      this.step(Input.Close);
      return;
    }
    this.protocol.halfClose();
    this.step(Input.HalfClose, this.facts(), this.parser.heads);
  }

  /**
   * A client that stopped reading is cut with a reset: the kernel drops what
   * it still holds for it. Closed gracefully, the socket would sit in
   * FIN-WAIT-1 with megabytes queued towards a client that does not read.
   * Only plain TCP sockets can be reset; a TLS socket is destroyed.
   */
  private cutStalled(): void {
    const socket = this.socket;
    try {
      if (typeof socket.resetAndDestroy === "function") {
        socket.resetAndDestroy();
        return;
      }
    } catch {
      // Not a TCP handle (TLS, an in-memory stream): destroyed below.
    }
    socket.destroy();
  }

  /** Forced close at the end of a shutdown's grace period. */
  destroy(): void {
    this.socket.destroy();
  }
}
