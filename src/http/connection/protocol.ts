// What HTTP/1.1 says about a connection, with no socket, no timer and no
// clock: events in (a head arrived, a request is whole, a response is
// ready, the client half-closed, the server shuts down), decisions out
// (which response is written next, whether a 100 Continue is owed now,
// whether the connection closes after a response, how a response is
// written: its body framed, omitted for HEAD, keep-alive confirmed).
//
// Requests on a connection are answered strictly in order (RFC 9112 §9.3.2),
// even when a later handler finishes first, so every request gets an
// exchange in a queue the moment its head arrives, and responses leave from
// the front only. Which requests may be in their handlers' hands at once is
// decided here too (mayHandOn, holdsNext), beside the RFC's rule.

import type { Request, RequestHead } from "../message/request.js";
import type { Response, WriteOptions } from "../message/response.js";
import { isBodyStream } from "../message/stream-body.js";
import type { Streamed } from "./streamed.js";

export interface Exchange {
  /** Null for a request refused before its head was whole. */
  readonly head: RequestHead | null;
  request: Request | null;
  /** A 100 Continue is owed before the body (RFC 9110 §10.1.1). */
  continueOwed: boolean;
  /** Its handler says when the 100 Continue goes (node:http's 'checkContinue'): until then the body is not asked for. */
  continueHeld: boolean;
  response: Response | null;
  /** The connection closes after this response. */
  close: boolean;
  /** When the exchange began (performance.now()), for the access log; 0 when nobody logs. */
  readonly started: number;
  /** A streamed service's reader of this request's body (streamed.ts), until the body is whole or abandoned. */
  streamed: Streamed | null;
  /**
   * It may run beside other requests (sideBySide); false for a request refused before its head was whole. Null
   * until first asked (besides): with one request in flight at a time, as most connections have, it never is.
   */
  sideBySide: boolean | null;
  /** Its head is read, but its handler may not have it yet (mayHandOn): it waits for the answers before it to be out. */
  waiting: boolean;
}

/**
 * RFC 9112 §9.3.2: "A server MAY process a sequence of pipelined requests in
 * parallel if they all have safe methods (Section 9.2.1 of [HTTP]), but it
 * MUST send the corresponding responses in the same order that the requests
 * were received." The safe methods RFC 9110 §9.2.1 defines are GET, HEAD,
 * OPTIONS and TRACE (method tokens are case-sensitive: "get" is not GET).
 * A request that asks to switch protocols (an Upgrade field, RFC 9110 §7.8)
 * does not run beside others either, whatever its method: switched, the
 * connection is no longer HTTP/1.1 for anything after it, and its handler
 * may take the socket over only when no earlier answer is pending.
 */
const SAFE_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS", "TRACE"]);

function sideBySide(head: RequestHead): boolean {
  if (!SAFE_METHODS.has(head.method)) return false;
  const fields = head.fields;
  for (let i = 0; i < fields.length; i += 2) if (fields[i] === "upgrade") return false;
  return true;
}

/** Whether `exchange` may run beside others, found once, when first asked. */
function besides(exchange: Exchange): boolean {
  return (exchange.sideBySide ??= sideBySide(exchange.head!));
}

export class Protocol {
  /** How most answers are written (HTTP/1.1, not HEAD, the connection stays open): made once, not per response. */
  private readonly plain: WriteOptions;
  /** Field lines the server adds to every response (ConnectionOptions.responseFields). */
  private readonly extraFields: string | undefined;

  constructor(extraFields?: string) {
    this.extraFields = extraFields;
    this.plain = Object.freeze({ omitBody: false, close: false, confirmKeepAlive: false, extraFields, chunked: true });
  }

  /** Exchanges in order of arrival; the front one is answered next. */
  private readonly queue: Exchange[] = [];
  /** The exchange whose head has arrived and whose body is still being read. */
  reading: Exchange | null = null;
  /**
   * The exchange being read was answered already (a streamed service may
   * answer before the body is whole): its answer has left the queue, and its
   * body is still read, so that the next request can be told from it.
   */
  private readingAnswered = false;
  /** No request is read after those queued (shutdown, half-close): the last response closes. */
  private last = false;
  /** The front exchange's body is going out in pieces (send-body.ts): what follows waits for it. */
  sending = false;

  /** Requests handed on (or refused) whose answers have not left yet; the one still being read is not among them. */
  get unanswered(): number {
    return this.reading === null || this.readingAnswered ? this.queue.length : this.queue.length - 1;
  }

  /** Nothing in flight: no request waits for an answer and no body is going out. */
  get idle(): boolean {
    return this.queue.length === 0 && !this.sending;
  }

  /** A request head arrived: its exchange joins the queue. */
  head(head: RequestHead, started: number): Exchange {
    const exchange: Exchange = {
      head,
      request: null,
      // A head that announces no body has nothing to continue with.
      continueOwed: head.expectContinue && head.framing.kind !== "none",
      continueHeld: false,
      response: null,
      close: !head.keepAlive,
      started,
      streamed: null,
      sideBySide: null,
      waiting: false,
    };
    this.queue.push(exchange);
    this.reading = exchange;
    this.readingAnswered = false;
    return exchange;
  }

  /**
   * The request being read asked for a 100 Continue that has not gone out
   * (answers before it are still on their way): its client waits for the
   * server, as RFC 9110 §10.1.1 tells it to, and is not sending its body late.
   */
  get awaitingContinue(): boolean {
    return this.reading !== null && this.reading.continueOwed;
  }

  /** True when `exchange` is the only one in flight: nothing before it waits to be written (a hand-over may take the socket). */
  alone(exchange: Exchange): boolean {
    return this.queue.length === 1 && this.queue[0] === exchange && !this.sending;
  }

  /**
   * Whether the request whose head just arrived may go to its handler now
   * (see SAFE_METHODS): when every answer before it is out, or when it and
   * every request still in flight before it (answered or not) may run side
   * by side. Otherwise it waits (Exchange.waiting) until it is at the front.
   */
  mayHandOn(exchange: Exchange): boolean {
    const queue = this.queue;
    if (queue[0] === exchange && !this.sending) return true;
    if (!besides(exchange)) return false;
    for (let i = 0; queue[i] !== exchange; i++) if (!besides(queue[i]!)) return false;
    return true;
  }

  /**
   * No further request may be read while this holds, however many answers
   * may be in the making: a request that may not run beside others is in
   * its handler's hands (nothing after it starts before its answer is out;
   * its own body, still being read, is not a next request), or one waits
   * for its turn.
   */
  get holdsNext(): boolean {
    const queue = this.queue;
    for (let i = 0; i < queue.length; i++) {
      const exchange = queue[i]!;
      if (exchange.waiting || (exchange !== this.reading && !besides(exchange))) return true;
    }
    return false;
  }

  /** The 100 Continue is sent only when every earlier response is out, lest it be taken for theirs. */
  continueNow(exchange: Exchange): boolean {
    return exchange.continueOwed && !exchange.continueHeld && this.queue[0] === exchange && !this.sending;
  }

  /** The request being read is whole: it goes to the handler, and no 100 Continue is owed any more. */
  request(request: Request): Exchange {
    const exchange = this.reading!;
    this.reading = null;
    this.readingAnswered = false;
    exchange.request = request;
    exchange.continueOwed = false;
    return exchange;
  }

  /**
   * Answered from its head, its body never read: its bytes cannot be told
   * from a next request, so the connection closes after it (RFC 9112 §9.6),
   * and no 100 Continue is sent, so a client waiting for one never sends the body.
   */
  refuse(exchange: Exchange): void {
    this.reading = null;
    exchange.continueOwed = false;
    exchange.close = true;
  }

  /**
   * The request broke a rule (or ran out of time): its answer closes the
   * connection. Null when that request was answered already (its body was
   * still being read): nothing can answer the failure, and the connection
   * can only close once what is written is out.
   */
  failed(started: number): Exchange | null {
    let exchange = this.reading;
    this.reading = null;
    if (this.readingAnswered) {
      this.readingAnswered = false;
      this.last = true;
      return null;
    }
    if (exchange === null) {
      exchange = { head: null, request: null, continueOwed: false, continueHeld: false, response: null, close: true, started, streamed: null, sideBySide: false, waiting: false };
      this.queue.push(exchange);
    }
    exchange.continueOwed = false;
    exchange.close = true;
    return exchange;
  }

  /** The next exchange whose response may be written, or null: the front one, once no body is going out. */
  front(): Exchange | null {
    return this.sending || this.queue.length === 0 ? null : this.queue[0]!;
  }

  /** The front exchange's response is written now: it leaves the queue, closing the connection if it is the last. */
  take(): Exchange {
    const exchange = this.queue.shift()!;
    if (this.last && this.queue.length === 0) exchange.close = true;
    if (exchange === this.reading) this.readingAnswered = true;
    return exchange;
  }

  /**
   * How a body produced in pieces is framed: chunked for HTTP/1.1; HTTP/1.0
   * has no chunked coding, so the body ends when the connection closes
   * (RFC 9112 §6.3).
   */
  private chunked(exchange: Exchange, response: Response): boolean {
    const chunked = exchange.head?.minor !== 0;
    // `response` is the handler's, unchecked: the writer refuses what is not a response. A stream of a
    // declared length is framed by its Content-Length, in either version.
    const checked = response as Response | undefined;
    if (!chunked && isBodyStream(checked?.body) && checked?.length === undefined) exchange.close = true;
    return chunked;
  }

  /**
   * How `response` to `exchange` is written: a body produced in pieces is
   * chunked or, in HTTP/1.0, ends with the connection (chunked); a response
   * to HEAD has every field GET's would, and no body (RFC 9110 §9.3.2); a
   * closing response (the exchange's, or one its handler asked to close
   * after) says so (RFC 9112 §9.6); an HTTP/1.0 client that asked
   * to keep the connection is told it is kept (RFC 9112 §9.3, Appendix C.2.2).
   */
  writing(exchange: Exchange, response: Response): WriteOptions {
    // The handler may close the connection after its answer (node:http's "Connection: close"); `response` is the
    // handler's, unchecked.
    if ((response as Response | undefined)?.close === true) exchange.close = true;
    const chunked = this.chunked(exchange, response);
    const head = exchange.head;
    const omitBody = head?.method === "HEAD";
    const close = exchange.close;
    const confirmKeepAlive = head?.minor === 0 && !close;
    return chunked && !omitBody && !close && !confirmKeepAlive ? this.plain : { omitBody, close, confirmKeepAlive, extraFields: this.extraFields, chunked };
  }

  /** A body went out in pieces and is done: whether the connection closes now. */
  sent(exchange: Exchange): boolean {
    this.sending = false;
    return exchange.close || (this.last && this.queue.length === 0);
  }

  /**
   * The client half-closed: requests it completed are answered and the last
   * response closes; one it left unfinished can never complete and is
   * dropped (RFC 9112 §8).
   */
  halfClose(): void {
    if (this.reading !== null) {
      if (!this.readingAnswered) this.queue.splice(this.queue.indexOf(this.reading), 1);
      this.reading = null;
      this.readingAnswered = false;
    }
    this.last = true;
  }

  /** No request is read after those queued (shutdown, half-close). */
  get ending(): boolean {
    return this.last;
  }

  /** The server shuts down: what is queued is answered, the last response closes. */
  shutdown(): void {
    this.last = true;
  }

  /** The connection closed (or is closing): nothing queued will be answered. */
  closed(): void {
    this.queue.length = 0;
    this.reading = null;
    this.readingAnswered = false;
  }
}
