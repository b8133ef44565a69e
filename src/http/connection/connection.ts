// One client connection: socket bytes in, parser, handler, writer, socket bytes out.
//
// Requests on a connection are answered strictly in order (RFC 9112 §9.3.2),
// even when a later handler finishes first, so every request gets a slot in a
// queue the moment its head arrives and responses leave from the front only.
// Reading pauses while the client is not reading its responses, or while too
// many requests wait for answers: a client cannot make the server buffer
// without bound by pipelining and never reading. It also waits its turn
// (turns.ts) after REQUESTS_PER_TURN requests of one read, and while new connections arrive.

import { protocolError, type ProtocolError } from "../errors.js";
import { RequestParser, type ParserSink } from "../parser.js";
import { protocolProblem } from "../message/problem.js";
import { answerFailure } from "./handler-failure.js";
import { isPromise, Phase, SendWatch, Sending, type Slot } from "./state.js";
import type { Request, RequestHead } from "../message/request.js";
import { CONTINUE, serialize, type Response, type Serialized } from "../message/response.js";
import { admitHead, asService, type Admission, type Handler, type Service } from "./service.js";
import { Outbox } from "./outbox.js";
import { isBodyStream } from "../message/stream-body.js";
import { isLargeBody, sendStream, sendWhole } from "./send-body.js";
import type { ConnectionHooks, ConnectionOptions, LiveConnection, Transport } from "./options.js";
import type { ConnectionTrace } from "./trace-hook.js";
import { LONE_TURNS, REQUESTS_PER_TURN, type Turns } from "./turns.js";


export class Connection implements ParserSink, LiveConnection {
  private readonly socket: Transport;
  /** Everything written to the socket goes through it (see outbox.ts). */
  private readonly out: Outbox;
  private readonly handler: Handler;
  private readonly admit: ((head: RequestHead) => Admission) | undefined;
  private readonly options: ConnectionOptions;
  private readonly hooks: ConnectionHooks;
  private readonly parser: RequestParser;
  private readonly trace: ConnectionTrace | null;
  private readonly turns: Turns;
  private readonly queue: Slot[] = [];
  /** The slot whose head has arrived and whose body is still being read. */
  private reading: Slot | null = null;
  private phase = Phase.Idle;
  /** When the current phase runs out (ms since the epoch). */
  deadline: number;
  private paused = false;
  /** Parsing a read: its responses' flushes leave the phase to be recomputed once, after it. */
  private inRead = false;
  /** Requests taken since the read (or resumption) began; at REQUESTS_PER_TURN, the connection yields. */
  private turnRequests = 0;
  /** Waiting for a turn of the event loop (turns.ts), for the other connections' sake. */
  private yielded = false;
  private draining = false;
  /** Heads seen so far; how many had been seen when the headers deadline was set, and that deadline. */
  private headsSeen = 0;
  private headsAtDeadline = -1;
  private headDeadline = Infinity;
  /** Which request the whole-request deadline belongs to (see requestNumber), and when it runs out. */
  private requestTimed = -1;
  private requestDeadline = Infinity;
  private readonly sends = new SendWatch();
  private ended = false;
  /** A streamed body is going out: later responses wait for it (RFC 9112 §9.3.2 order). */
  private streaming = false;
  private readonly client: string; // read once, up front: a destroyed socket forgets its peer

  constructor(socket: Transport, service: Handler | Service, options: ConnectionOptions, hooks: ConnectionHooks) {
    const { handle, admit } = asService(service);
    this.socket = socket;
    this.out = new Outbox(socket);
    this.client = socket.remoteAddress ?? "-";
    this.handler = handle;
    this.admit = admit;
    this.options = options;
    this.hooks = hooks;
    this.trace = options.trace?.(socket) ?? null;
    this.turns = options.turns ?? LONE_TURNS;
    this.parser = new RequestParser(this, options.limits, this.trace);
    this.deadline = Date.now() + options.keepAliveTimeoutMs;
    // Responses are written whole; waiting for more (Nagle) would only add latency.
    socket.setNoDelay?.(true);
    socket.on("data", (chunk: Buffer) => this.onData(chunk));
    // The client finished sending (half-close): answer what it asked, then close.
    socket.on("end", () => this.onEnd());
    socket.on("drain", () => this.updateFlow());
    // Resets and broken pipes end in "close"; there is nobody left to answer.
    socket.on("error", () => {});
    socket.on("close", () => {
      this.ended = true;
      this.queue.length = 0;
      this.trace?.closed();
      hooks.onClose(this);
    });
  }

  /** True when nothing is in flight: shutting the connection down now loses nothing. */
  get idle(): boolean {
    return this.queue.length === 0 && !this.streaming && this.parser.idle;
  }

  private onData(chunk: Buffer): void {
    if (this.parser.closed) return; // lingering after a closing response: read and drop
    this.turnRequests = 0;
    this.trace?.received(chunk);
    // Connections are arriving: this read waits its turn, so that the loop's turns stay short (see turns.ts).
    if (this.turns.queuing && !this.yielded) this.waitTurn();
    this.parse(chunk);
  }

  /**
   * Parse a read, or (null) the bytes held while paused. Its responses leave in one write (pipelining);
   * the phase is recomputed once, after it: a head or body it leaves unfinished is timed from now.
   */
  private parse(chunk: Buffer | null): void {
    this.out.hold();
    const outer = this.inRead;
    this.inRead = true;
    if (chunk === null) this.parser.resume();
    else this.parser.feed(chunk);
    this.inRead = outer;
    this.out.release();
    this.updatePhase(true);
  }

  // ---- ParserSink ----

  onHead(head: RequestHead): void {
    const slot: Slot = {
      head,
      request: null,
      sendContinue: head.expectContinue && head.framing.kind !== "none",
      response: null,
      close: !head.keepAlive,
      started: this.hooks.onExchange === undefined ? 0 : performance.now(),
    };
    this.queue.push(slot);
    this.reading = slot;
    this.headsSeen++;
    this.trace?.head(head);
    const admission = admitHead(this.admit, head);
    if (admission !== undefined) {
      if ("refuse" in admission) return this.refuseFromHead(slot, admission.refuse);
      this.parser.limitBody(admission.maxBodyBytes);
    }
    if (slot.sendContinue && this.queue.length === 1) this.sendContinue(slot);
  }

  onRequest(request: Request): void {
    if (++this.turnRequests === REQUESTS_PER_TURN) this.waitTurn();
    const slot = this.reading!;
    this.reading = null;
    slot.request = request;
    slot.sendContinue = false;
    this.trace?.request(request);
    let result: Response;
    try {
      const returned = this.handler(request);
      if (isPromise(returned)) {
        returned.then(
          (response) => this.settle(slot, response),
          (error: unknown) => this.settle(slot, this.internalError(error, request)),
        );
        // Between two requests of one read: stop parsing here if too many now wait for answers.
        this.updateFlow();
        return;
      }
      result = returned;
    } catch (error) {
      result = this.internalError(error, request);
    }
    this.settle(slot, result);
  }

  /**
   * Answer from the head and close: the body is never read, so its bytes
   * cannot be told from a next request (RFC 9112 §9.6). No 100 Continue is
   * sent, so a client that waits for one never sends the body at all.
   */
  private refuseFromHead(slot: Slot, response: Response): void {
    this.parser.stop();
    this.reading = null;
    slot.sendContinue = false;
    slot.close = true;
    this.settle(slot, response);
  }

  onError(error: ProtocolError): void {
    this.trace?.error(error);
    let slot = this.reading;
    this.reading = null;
    if (slot === null) {
      slot = { head: null, request: null, sendContinue: false, response: null, close: true, started: this.hooks.onExchange === undefined ? 0 : performance.now() };
      this.queue.push(slot);
    }
    slot.sendContinue = false;
    slot.close = true;
    this.settle(slot, protocolProblem(error, slot.head?.target ?? this.parser.current.target));
  }

  // ---- Responses ----

  private settle(slot: Slot, response: Response): void {
    if (this.ended) return;
    slot.response = response;
    this.flush();
  }

  private flush(): void {
    // The responses ready now leave together.
    this.out.hold();
    const closed = this.writeReady();
    this.out.release();
    if (closed) return;
    if (this.inRead) this.updateFlow(); // whether to read on; the phase follows once the read is parsed
    else this.updatePhase(false);
  }

  /** Writes the responses at the front of the queue that are ready; true when the last one closed the connection. */
  private writeReady(): boolean {
    const queue = this.queue;
    while (queue.length > 0 && !this.streaming) {
      const slot = queue[0]!;
      if (slot.sendContinue) this.sendContinue(slot);
      if (slot.response === null) break;
      queue.shift();
      if (this.draining && queue.length === 0) slot.close = true;
      this.write(slot, slot.response);
      // A streamed body finishes later; what follows it waits (see finishStream).
      if (this.streaming) break;
      if (slot.close) {
        this.closeAfterResponse();
        return true;
      }
    }
    return false;
  }

  private write(slot: Slot, response: Response): void {
    const head = slot.head;
    // HTTP/1.0 has no chunked coding: a streamed body ends when the connection closes (RFC 9112 §6.3).
    const chunked = head?.minor !== 0;
    if (!chunked && isBodyStream(response.body)) slot.close = true;
    let out: Serialized;
    try {
      out = serialize(response, {
        omitBody: head?.method === "HEAD",
        close: slot.close,
        confirmKeepAlive: head?.minor === 0 && !slot.close,
        extraFields: this.options.responseFields,
        chunked,
      });
    } catch (error) {
      // The handler produced a response that cannot be written safely (bad field, bad status).
      response = this.internalError(error, slot.request);
      out = serialize(response, { omitBody: head?.method === "HEAD", close: slot.close, confirmKeepAlive: false, extraFields: this.options.responseFields });
    }
    const body = out.body;
    this.trace?.response(out.head, body, out.stream !== undefined);
    if (out.stream !== undefined) {
      const stream = out.stream;
      this.sendLater(slot, response.status, out.head, () => sendStream(this.socket, stream, chunked));
      return;
    }
    const whole = out.bytes ?? body;
    if (whole !== undefined && isLargeBody(whole)) {
      // Handed to the socket a piece at a time as the client reads (send-body.ts), never all at once.
      const bodyBytes = out.bodyBytes;
      this.sendLater(slot, response.status, out.bytes === undefined ? out.head : null, () => sendWhole(this.socket, whole).then((done) => (done ? bodyBytes : -1)));
      return;
    }
    if (out.bytes !== undefined) this.out.send(out.bytes);
    else if (body === undefined) this.out.send(out.head);
    else if (typeof body === "string") this.out.send(out.head + body);
    else {
      this.out.send(out.head);
      this.out.send(body);
    }
    if (this.hooks.onExchange !== undefined) this.logExchange(slot, response.status, out.bodyBytes);
  }

  /**
   * A body that leaves as the client reads it, after `head`: later responses
   * wait for it (RFC 9112 §9.3.2 order), and what `send` returns settles with the
   * body's length, or -1 when the client went away.
   */
  private sendLater(slot: Slot, status: number, head: string | null, send: () => Promise<number>): void {
    // The body writes to the socket itself: nothing may stay pending before it.
    if (head !== null) this.out.send(head);
    this.out.flush();
    this.streaming = true;
    send().then(
      (bytes) => this.finishStream(slot, status, bytes),
      (error: unknown) => {
        // The status line is out: the only honest end is to cut the connection.
        this.streaming = false;
        this.internalError(error, slot.request);
        this.socket.destroy();
      },
    );
  }

  /** The interim answer an Expect: 100-continue asked for (RFC 9110 §10.1.1). */
  private sendContinue(slot: Slot): void {
    slot.sendContinue = false;
    this.out.send(CONTINUE);
    this.trace?.response(CONTINUE, undefined, false);
  }

  private logExchange(slot: Slot, status: number, bodyBytes: number): void {
    const current = slot.head ?? this.parser.current;
    this.hooks.onExchange?.({
      client: this.client,
      method: current.method || "-",
      target: current.target || "-",
      // A head refused after its request line still has the line's version.
      version: current.method === "" ? "-" : current.minor === 0 ? "HTTP/1.0" : "HTTP/1.1",
      status,
      bodyBytes,
      ms: performance.now() - slot.started,
    });
  }

  /** A streamed body was sent (`bytes`), or its client went away (-1): go on with the queue. */
  private finishStream(slot: Slot, status: number, bytes: number): void {
    this.streaming = false;
    if (bytes >= 0 && this.hooks.onExchange !== undefined) this.logExchange(slot, status, bytes);
    if (this.ended || bytes < 0) return;
    if (slot.close || (this.draining && this.queue.length === 0)) {
      this.closeAfterResponse();
      return;
    }
    this.flush();
  }

  private internalError(error: unknown, request: Request | null): Response {
    return answerFailure(error, request, this.hooks.onHandlerError);
  }

  /**
   * Close after the response is flushed: end() sends FIN once the writes are
   * out, and the socket keeps reading (and dropping) what the client still
   * sends, so the kernel does not answer those bytes with a reset that could
   * destroy the response before the client has read it.
   */
  private closeAfterResponse(): void {
    this.parser.stop();
    this.queue.length = 0;
    this.reading = null;
    this.phase = Phase.Closing;
    this.deadline = Date.now() + this.options.lingerMs;
    if (this.paused) {
      this.paused = false;
      this.socket.resume();
    }
    this.out.end();
  }

  // ---- Timing and flow ----

  /**
   * Recompute what the connection waits for, after bytes arrived (`data`) or a
   * response left. The headers deadline is set once per request head, so a
   * client cannot stretch it by trickling bytes; the others restart on activity.
   */
  private updatePhase(data: boolean): void {
    if (this.phase === Phase.Closing || this.ended) return;
    const parser = this.parser;
    let phase: Phase;
    if (parser.inBody) phase = Phase.Body;
    // Bytes the server itself stopped parsing (back-pressure) are not a client that is slow to send.
    else if (!parser.idle && !this.paused) phase = Phase.Head;
    else if (this.queue.length > 0 || this.streaming) phase = Phase.Busy;
    else phase = Phase.Idle;

    // The whole-request deadline starts once per request, with its first byte.
    if (phase === Phase.Head || phase === Phase.Body) {
      const request = phase === Phase.Head ? this.headsSeen + 1 : this.headsSeen;
      if (request !== this.requestTimed) {
        this.requestTimed = request;
        this.requestDeadline = Date.now() + this.options.requestTimeoutMs;
      }
    } else {
      this.requestDeadline = Infinity;
    }

    switch (phase) {
      case Phase.Idle:
        if (this.draining) {
          this.closeQuietly();
          return;
        }
        this.deadline = Date.now() + this.options.keepAliveTimeoutMs;
        break;
      case Phase.Head:
        // Once per head: a pause of the server's own (a turn, back-pressure) must not restart it.
        if (this.headsSeen !== this.headsAtDeadline) {
          this.headsAtDeadline = this.headsSeen;
          this.headDeadline = Date.now() + this.options.headersTimeoutMs;
        }
        this.deadline = this.headDeadline;
        break;
      case Phase.Body:
        if (data || this.phase !== Phase.Body) this.deadline = Date.now() + this.options.bodyTimeoutMs;
        break;
      case Phase.Busy:
        this.deadline = Infinity;
        break;
    }
    this.phase = phase;
    this.updateFlow();
  }

  /** Stop reading until the connection's turn comes (turns.ts): after REQUESTS_PER_TURN of one read, or while connections arrive. */
  private waitTurn(): void {
    this.yielded = true;
    this.updateFlow();
    this.turns.wait(this.takeTurn);
  }

  /** The turn came: read on; returns how many requests that served. */
  private readonly takeTurn = (): number => {
    this.yielded = false;
    this.turnRequests = 0;
    this.updateFlow();
    return this.turnRequests;
  };

  private updateFlow(): void {
    if (this.phase === Phase.Closing || this.ended) return;
    const stop = this.yielded || this.socket.writableNeedDrain || this.queue.length >= this.options.maxPipelined;
    if (stop && !this.paused) {
      this.paused = true;
      this.parser.pause();
      this.socket.pause();
    } else if (!stop && this.paused) {
      this.paused = false;
      this.socket.resume();
      this.turnRequests = 0;
      this.parse(null);
    }
  }

  /** Called by the server's sweep; acts when the current phase has run out. */
  checkDeadline(now: number): void {
    if (this.ended) return;
    switch (this.sends.check(this.socket.writableLength, now, this.options.sendTimeoutMs)) {
      case Sending.Stalled:
        this.cutStalled();
        return;
      case Sending.Moving:
        return;
      case Sending.Done:
        if (this.phase === Phase.Closing) this.deadline = now + this.options.lingerMs;
        else this.updatePhase(false);
        return;
    }
    if ((this.phase === Phase.Head || this.phase === Phase.Body) && now >= this.requestDeadline) {
      this.parser.stop();
      this.onError(protocolError("REQUEST_TIMEOUT", `The request was not complete ${this.options.requestTimeoutMs} ms after its first byte`, 0));
      return;
    }
    if (now < this.deadline) return;
    switch (this.phase) {
      case Phase.Idle:
        this.closeQuietly();
        return;
      case Phase.Head:
      case Phase.Body: {
        const waited = this.phase === Phase.Head ? this.options.headersTimeoutMs : this.options.bodyTimeoutMs;
        const what = this.phase === Phase.Head ? "The request head was not complete" : "The request body stalled for";
        this.parser.stop();
        this.onError(protocolError("REQUEST_TIMEOUT", `${what} ${waited} ms`, 0));
        return;
      }
      case Phase.Closing:
        this.socket.destroy();
        return;
      case Phase.Busy:
        return;
    }
  }

  /** Server shutdown: finish what is in flight (bounded by the timeouts), then close. */
  drain(): void {
    if (this.draining || this.phase === Phase.Closing || this.ended) return;
    this.draining = true;
    if (this.idle) this.closeQuietly();
  }

  /**
   * The client half-closed: it will send nothing more. Requests it completed
   * are answered, the last response closes; one it left unfinished can never
   * complete and is dropped (RFC 9112 §8).
   */
  private onEnd(): void {
    if (this.phase === Phase.Closing || this.ended) return;
    this.parser.stop();
    if (this.reading !== null) {
      this.queue.splice(this.queue.indexOf(this.reading), 1);
      this.reading = null;
    }
    this.draining = true;
    if (this.queue.length === 0 && !this.streaming) this.closeQuietly();
  }

  private closeQuietly(): void {
    this.parser.stop();
    this.phase = Phase.Closing;
    this.deadline = Date.now() + this.options.lingerMs;
    this.out.end();
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
