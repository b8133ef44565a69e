// The incremental HTTP/1.1 request parser (RFC 9112), sans I/O.
//
// It is given bytes (`receive`, in chunks of any size split anywhere) and
// the end of the input (`end`), and asked for what they mean (`next`): the
// head of a request, a piece of its body, the whole request, the 100
// Continue its client waits for, an error, the end of the input, or that
// more bytes are needed. It never calls out: whoever drives it (the
// connection, inject, the wire view, the tests) acts on each event and then
// asks for the next one, so nothing can reach into the parser while it
// reads, and it keeps no flag against that. Asking is how the reader holds
// back, too: bytes not asked for simply wait, received and unread (`held`).
// As h11's `receive_data` and `next_event`.
//
// Inside, a small state machine over lines and body bytes:
//
//   RequestLine -> HeaderLine* -> HeadTaken -> (FixedBody | (ChunkSize -> ChunkData -> ChunkDataEnd)* -> ChunkSize(0) -> TrailerLine*) -> RequestLine
//
// HeadTaken is the pause after a head is handed out: what its reader says
// about it (a lower body limit, a body streamed in pieces, the socket taken
// over, or refused: stop) applies before any of its body is read.
//
// Every line, whole or cut, is read by the one scanner (line-scan.ts), which
// runs the grammar's table (in the same file) over its bytes, finds its end, and
// asks the section's rules (section-rules.ts) what no line can judge alone.
// This class holds the state between lines and turns a scanned line into
// what it means: request-line.ts reads the request line's tokens, and
// head-framing.ts turns fields into framing and keep-alive; body-buffer.ts
// holds body bytes. A line is copied only when a read cuts it (into `carry`),
// where the scan goes on from where it stopped when its next bytes arrive,
// or as part of a head kept to be recalled (head-memory.ts).
// Strings are made once per token, never per byte.
//
// The parts of each line go to a span listener when there is one (the wire
// view, TRACE=1), as `next` reads them: on the very path every request
// takes, where a listener that is null costs one branch per line. A listener
// only watches: it is told byte ranges, and has no way back in.
//
// Strict by default: anything RFC 9112 lets a server reject, it rejects, since
// every leniency is a place where this server and a proxy in front of it could
// disagree about where a request ends (request smuggling).

import { BodyBuffer } from "./body-buffer.js";
import { protocolError, type ProtocolError, type ProtocolErrorCode } from "./errors.js";
import { headAgain, headOf, judgeHead, newHeadFields, readField, resetHeadFields } from "./head-framing.js";
import { HeadMemory } from "./head-memory.js";
import { latin1 } from "./latin1.js";
import { checkLimits, DEFAULT_LIMITS, MAX_BODY_LIMIT, type ParserLimits } from "./limits.js";
import { isLineError, NO_REQUEST_LINE, readRequestLine, type RequestLine } from "./request-line.js";
import type { Request, RequestHead } from "../message/request.js";
import { isEmptyLine, MAX_CHUNK_SIZE_DIGITS, MORE, newScan, scanLine, startChunkDataEnd, startChunkSizeLine, startFieldLine, startRequestLine, type LineError, type LineRules } from "./line-scan.js";
import { newSection, sectionRule, startSection, type Section } from "./section-rules.js";
import { chunkSizeSpans, fieldSpans, requestLineSpans, type SpanKind, type SpanListener } from "./spans.js";

export { DEFAULT_LIMITS, type ParserLimits } from "./limits.js";

/**
 * What `next` found in the bytes. An event holds until the next ask: the
 * parser fills the same object again for the next event of its kind, and
 * lets go of what it carried when asked again, so a driver takes what it
 * needs from it (the head, the request, the piece, the error) and keeps
 * that, never the event. Why: a fresh event for each head and each request
 * was 80 bytes of garbage per request (node 20, bench/alloc), a quarter of
 * what the engine allocates for a status request; every driver acts on an
 * event before it asks for the next one anyway.
 */
export type ParseEvent =
  /**
   * A head, complete and valid; its body (if any) follows. Before asking
   * again, its reader may lower this request's body limit (limitBody), ask
   * for the body in pieces (streamBody), take the bytes past it over
   * (handOver), or stop the parser to answer from the head alone.
   */
  | { readonly kind: "head"; readonly head: RequestHead }
  /**
   * After a head with `expectContinue` and a body: the body is now awaited,
   * within every limit, so the 100 Continue it asked for may be sent (RFC
   * 9110 §10.1.1). Never for a head refused after it was handed out.
   */
  | { readonly kind: "continue" }
  /** A piece of a body asked for in pieces (streamBody), as it arrived: a view into a received chunk, which nobody modifies afterwards. */
  | { readonly kind: "body"; readonly piece: Buffer }
  /** The whole request has arrived (for a streamed body: after its last piece, with its trailers). */
  | { readonly kind: "request"; readonly request: Request }
  /** The bytes broke a rule; the parser reads nothing more. */
  | { readonly kind: "error"; readonly error: ProtocolError }
  /** The input ended (`end`), and every byte before the end has been read: told once. */
  | { readonly kind: "input-end" }
  /** Nothing more can be said until more bytes are received (or the end). */
  | { readonly kind: "need-data" };

const NEED_DATA: ParseEvent = Object.freeze({ kind: "need-data" });
const CONTINUE: ParseEvent = Object.freeze({ kind: "continue" });
const INPUT_END: ParseEvent = Object.freeze({ kind: "input-end" });

// The parser's states: plain constants (an enum's members are inlined only by the build, tsconfig.build.json).
const S_REQUEST_LINE = 0;
const S_HEADER_LINE = 1;
const S_CHUNK_SIZE = 2;
/** The CR LF after a chunk's data: a line, with nothing before its end. */
const S_CHUNK_DATA_END = 3;
const S_TRAILER_LINE = 4;
// The states above read lines (the scanner); the two below count body bytes out.
const S_FIXED_BODY = 5;
const S_CHUNK_DATA = 6;
/** After an error, or after a request that closes the connection (RFC 9112 §9.6), or when told to stop. */
const S_CLOSED = 7;
// The two below read nothing: each is one step that waits for the next ask.
/** A head was handed out: its framing applies at the next ask, after its reader had its say. */
const S_HEAD_TAKEN = 8;
/** A streamed fixed-length body's last piece was handed out: the request follows at the next ask. */
const S_MESSAGE_END = 9;

// Where the end of the input stands.
const INPUT_OPEN = 0;
/** `end` was called; the event is owed once every byte before it is read. */
const INPUT_ENDED = 1;
const INPUT_TOLD = 2;

/** Empty lines tolerated before a request line (RFC 9112 §2.2 asks for at least one). */
const MAX_LEADING_EMPTY_LINES = 8;
/** The first piece of a read copied behind an unfinished line; it doubles while the line goes on. */
const CARRY_WINDOW = 256;
const NO_BYTES = Buffer.alloc(0);

/** What a parser is told of the stream it reads, besides its bytes. */
export interface ReadingOptions {
  /** Keep each field's name as sent beside its lower-cased form (RequestHead.rawNames). */
  readonly keepNames?: boolean;
  /** The client's address, for RequestHead.peer; "-" when not given. */
  readonly peer?: string;
}

export class RequestParser {
  private state: number = S_REQUEST_LINE;
  private input = INPUT_OPEN;
  private readonly limits: ParserLimits;
  /** Null unless someone asked to see the parts (spans.ts); then told of every one. */
  private readonly spans: SpanListener | null;
  /** Keep each field's name as sent beside its lower-cased form (RequestHead.rawNames): only when asked, off the hot path. */
  private readonly keepNames: boolean;
  /** Who the bytes come from, put on every request (RequestHead.peer). */
  private readonly peer: string;
  /** The names as sent of the head being read, when kept. */
  private names: string[] | null = null;

  /** The chunk being read, and where its unread bytes start; chunks received behind it wait in `queue`. */
  private buf: Buffer = NO_BYTES;
  private pos = 0;
  private readonly queue: Buffer[] = [];
  private queued = 0;
  /** Heads handed out so far. */
  private headsOut = 0;
  /** The event the step just taken found; null while none. */
  private found: ParseEvent | null = null;
  // The events that carry something, one of each kind, filled as found and emptied at the next ask (see ParseEvent).
  private readonly headEvent: { readonly kind: "head"; head: RequestHead | null } = { kind: "head", head: null };
  private readonly requestEvent: { readonly kind: "request"; request: Request | null } = { kind: "request", request: null };
  private readonly bodyEvent: { readonly kind: "body"; piece: Buffer | null } = { kind: "body", piece: null };

  /** Where the scan of the current line stands, and what its verdict depends on. */
  private readonly scan = newScan();
  private readonly rules: LineRules;
  private readonly section: Section;
  /** The bytes of an unfinished line: carry[0, carryLen). Null when no line is cut. */
  private carry: Buffer | null = null;
  private carryLen = 0;
  /** The head read last: a head that repeats it is not read again (head-memory.ts). */
  private readonly memory = new HeadMemory();
  /** Chunks read so far, and lines carried over from one chunk to the next: a head is kept only when its lines came in one. */
  private reads = 0;
  /** The read the current head came in, and where in it the head starts. */
  private headRead = -1;
  private headFrom = 0;
  /** A line is being scanned (its scan was started). */
  private inLine = false;

  /** Bytes of the stream taken so far (lines and body), for span offsets. */
  private consumed = 0;
  /** Bytes of the current message before the line being parsed (for error offsets). */
  private msgBytes = 0;
  private lineBase = 0;
  private lineStart = 0;
  private leadingEmptyLines = 0;

  // The head being assembled: its request line, then its fields.
  private start: RequestLine = NO_REQUEST_LINE;
  private readonly fields = newHeadFields();
  private head: Request | null = null;
  /** Where the handed-out head's empty line starts in the line last entered: a body too large is refused there. */
  private headEnd = 0;

  // The body being received.
  private remaining = 0;
  private readonly body = new BodyBuffer();
  /** This request's body limit: the server's, or less where its reader said so (limitBody). */
  private bodyLimit = 0;
  /** The body limit in force was lowered by the resource (limitBody), not the server's own. */
  private bodyLimitIsOwn = false;
  private chunkExtensionBytes = 0;
  /** This request's body is handed out in pieces as they arrive (streamBody), not gathered whole. */
  private streaming = false;
  /** A streamed body's trailer fields: name as sent, value, name, value... */
  private trailers: string[] | null = null;

  constructor(limits: ParserLimits = DEFAULT_LIMITS, spans: SpanListener | null = null, reading: ReadingOptions = {}) {
    this.limits = checkLimits(limits);
    this.spans = spans;
    this.keepNames = reading.keepNames ?? false;
    this.peer = reading.peer ?? "-";
    this.section = newSection(this.limits.maxHeaderCount, this.limits.maxHeaderBytes);
    this.rules = {
      allowBareLf: this.limits.allowBareLf,
      section: this.section,
      chunkRoom: 0,
      bodyLimit: 0,
      extensionRoom: 0,
      maxExtensions: this.limits.maxChunkExtensionBytes,
    };
  }

  // ---- Bytes in ----

  /**
   * The next bytes of the stream; nothing is read until asked (next). The
   * chunk must not be modified afterwards: body slices handed out may point
   * into it. Bytes after the parser stopped are dropped.
   */
  receive(chunk: Buffer): void {
    if (this.state === S_CLOSED || chunk.length === 0) return;
    if (this.pos === this.buf.length) this.take(chunk);
    else {
      this.queue.push(chunk);
      this.queued += chunk.length;
    }
  }

  /**
   * The client sends nothing more (a TCP FIN): like h11's end of data, it
   * comes after the bytes before it, so a client that pipelines and
   * half-closes gets every request it sent read first.
   */
  end(): void {
    if (this.input === INPUT_OPEN) this.input = INPUT_ENDED;
  }

  /** `chunk` is the one read from now. */
  private take(chunk: Buffer): void {
    this.buf = chunk;
    this.pos = 0;
    this.reads++;
  }

  // ---- Events out ----

  /** Read on until the next event (see ParseEvent). */
  next(): ParseEvent {
    // What the last event carried is the driver's now: the parser does not keep a request's body, or a piece, alive.
    this.headEvent.head = null;
    this.requestEvent.request = null;
    this.bodyEvent.piece = null;
    for (;;) {
      switch (this.state) {
        case S_HEAD_TAKEN:
          this.frame();
          break;
        case S_MESSAGE_END:
          this.complete();
          break;
        case S_CLOSED:
          return this.inputEvent();
        default: {
          if (this.pos === this.buf.length) {
            // The chunk is read: let go of it (body slices keep what they need), and read the next one if any.
            this.buf = NO_BYTES;
            this.pos = 0;
            // Nothing queued (receive keeps no empty chunk): the usual end of a read, without a call to shift().
            if (this.queued === 0) return this.inputEvent();
            const chunk = this.queue.shift()!;
            this.queued -= chunk.length;
            this.take(chunk);
          }
          if (this.carryLen > 0) this.goOn(this.buf);
          else if (this.state <= S_TRAILER_LINE) this.lineStep(this.buf, this.pos);
          else this.bodyStep(this.buf, this.pos);
        }
      }
      const found = this.found;
      if (found !== null) {
        this.found = null;
        return found;
      }
    }
  }

  /** With nothing left to read: the end of the input, once, or more bytes needed. */
  private inputEvent(): ParseEvent {
    if (this.input !== INPUT_ENDED) return NEED_DATA;
    this.input = INPUT_TOLD;
    return INPUT_END;
  }

  /** True when the next ask can only find the end of the input: it was ended, and nothing before it is left to read. */
  get endIsNext(): boolean {
    return this.input === INPUT_ENDED && this.held === 0 && this.state !== S_HEAD_TAKEN && this.state !== S_MESSAGE_END;
  }

  // ---- What the driver may ask and say ----

  /** Heads handed out so far (the connection's deadlines are per request). */
  get heads(): number {
    return this.headsOut;
  }

  /** Bytes received and not yet read. */
  get held(): number {
    return this.buf.length - this.pos + this.queued;
  }

  /** True between requests: no byte of a next request has arrived yet. */
  get idle(): boolean {
    return !this.begun && this.held === 0;
  }

  /** True once a request's first bytes are read (its line, head or body), until it is handed out whole; bytes received and not asked for are not. */
  get begun(): boolean {
    return this.state !== S_REQUEST_LINE || this.msgBytes !== 0 || this.carryLen !== 0;
  }

  /** True once the parser has stopped accepting bytes (error, a closing request done, or told to stop). */
  get closed(): boolean {
    return this.state === S_CLOSED;
  }

  /** Bytes of an unfinished line held (bounded by the limits). */
  get carried(): number {
    return this.carryLen;
  }

  /** The request line of the request being read; method and target "" before it is complete. */
  get current(): RequestLine {
    return this.start;
  }

  /** True while a request's body is being received (or its head waits to be framed). */
  get inBody(): boolean {
    return (this.state >= S_CHUNK_SIZE && this.state <= S_CHUNK_DATA) || this.state === S_MESSAGE_END;
  }

  /** Stop reading: every byte held and every later one is dropped (after an error, and when the connection closes or times out, answers from the head, or the client half-closes). */
  stop(): void {
    this.state = S_CLOSED;
    this.buf = NO_BYTES;
    this.pos = 0;
    this.queue.length = 0;
    this.queued = 0;
    this.carry = null;
    this.carryLen = 0;
    this.body.reset(0);
  }

  /**
   * Lower the body limit for the request whose head was just handed out (a
   * resource that takes small bodies says so before any body byte is read).
   * Only right after a head; the next request starts from the server's
   * limit again.
   */
  limitBody(bytes: number): void {
    if (this.state === S_HEAD_TAKEN && bytes < this.bodyLimit) {
      this.bodyLimit = bytes;
      this.bodyLimitIsOwn = true;
    }
  }

  /**
   * Hand out the body of the request whose head was just handed out in
   * pieces as they arrive ("body" events), never gathered whole; its
   * trailer fields come with the request (Request.trailers). The server's
   * body limit does not apply to it: whoever reads the pieces bounds what
   * it keeps, and stops asking while it cannot take more. Only right after
   * a head.
   */
  streamBody(): void {
    if (this.state !== S_HEAD_TAKEN) return;
    this.streaming = true;
    this.bodyLimit = MAX_BODY_LIMIT;
    this.bodyLimitIsOwn = false;
  }

  /**
   * The connection switches protocols after the head just handed out (RFC
   * 9110 §7.8): the parser stops, and returns the bytes received past that
   * head (h11's "trailing data"), which belong to the new protocol. Only
   * right after a head.
   */
  handOver(): Buffer {
    const rest = this.buf.subarray(this.pos);
    const out = this.queued === 0 ? rest : Buffer.concat([rest, ...this.queue]);
    this.stop();
    return out;
  }

  /** Whose the body limit in force is, for the 413: a client can ask an operator to raise the server's, not a resource's own. */
  private bodyLimitOwner(): string {
    if (this.bodyLimitIsOwn) return "; that limit is this resource's own, and no setting raises it";
    const raise = this.limits.raiseBodyLimit;
    return raise === undefined ? "; that limit is the server's" : `; that limit is the server's, and ${raise}`;
  }

  // ---- Steps: each reads a line or a piece of body, or frames a head, and may find an event ----

  /** Reads a line of buf from pos (or its start, when the chunk ends first). */
  private lineStep(buf: Buffer, pos: number): void {
    if (!this.inLine) {
      // A head the connection sent last time, byte for byte, is taken as it was then (head-memory.ts).
      // An empty line before a request line (CR or LF) is no head's start: it is read, not counted as a miss.
      if (this.state === S_REQUEST_LINE && buf[pos] !== 0x0d && buf[pos] !== 0x0a) {
        const n = this.memory.recall(buf, pos, this.reads);
        if (n !== 0) {
          this.pos = pos + n;
          this.recalled(pos, n);
          return;
        }
      }
      this.beginLine();
    }
    const len = buf.length;
    const lf = scanLine(buf, pos, len, this.scan, this.rules);
    if (lf >= 0) {
      this.inLine = false;
      this.pos = lf + 1;
      this.line(buf, pos, lf);
    } else {
      this.pos = len;
      if (lf === MORE) this.append(buf, pos, len);
      else this.refuseLine();
    }
  }

  /**
   * The next bytes of a line cut by the end of the last chunk: they are
   * copied behind it, a window at a time, and the scan goes on from where it
   * stopped.
   */
  private goOn(buf: Buffer): void {
    let from = this.pos;
    let window = Math.max(CARRY_WINDOW, this.carryLen);
    for (;;) {
      const to = Math.min(buf.length, from + window);
      this.append(buf, from, to);
      from = to;
      window *= 2;
      const line = this.carry!;
      const lf = scanLine(line, 0, this.carryLen, this.scan, this.rules);
      if (lf >= 0) {
        // The bytes copied after the LF are read again from buf, where they are.
        this.pos = from - (this.carryLen - (lf + 1));
        this.carry = null;
        this.carryLen = 0;
        this.inLine = false;
        // The carried line counts as a read of its own: a head with a line in it is not whole in any one chunk.
        this.reads++;
        this.line(line, 0, lf);
        this.reads++;
        return;
      }
      if (lf !== MORE) {
        this.pos = buf.length;
        this.refuseLine();
        return;
      }
      if (from === buf.length) {
        this.pos = from;
        return;
      }
    }
  }

  private append(src: Buffer, start: number, end: number): void {
    const need = this.carryLen + (end - start);
    if (this.carry === null || need > this.carry.length) {
      const grown = Buffer.allocUnsafe(Math.max(need, 2 * (this.carry?.length ?? 0), CARRY_WINDOW));
      if (this.carry !== null) this.carry.copy(grown, 0, 0, this.carryLen);
      this.carry = grown;
    }
    src.copy(this.carry, this.carryLen, start, end);
    this.carryLen = need;
  }

  /**
   * The head buf[pos, pos + n) is the one the memory holds: taken with what it
   * meant then, its parts reported as when it was read, and handed out as a
   * head read now would be.
   */
  private recalled(pos: number, n: number): void {
    const memory = this.memory;
    const line = memory.line;
    const blank = memory.blank;
    if (this.spans !== null) memory.replay(this.spans, this.consumed);
    memory.headTaken();
    this.start = line;
    this.section.minor = line.minor;
    this.count(blank);
    const lineAbs = this.enter(pos + blank, pos + n - 1);
    this.emit("blank-line", lineAbs, lineAbs + n - blank);
    const head = headAgain(memory.head);
    if (this.keepNames) (head as { rawNames?: readonly string[] }).rawNames = memory.head.rawNames;
    this.handOut(head, pos + blank);
  }

  /** Start the scan of the next line: its first phase and what it may hold. */
  private beginLine(): void {
    const limits = this.limits;
    const rules = this.rules;
    this.inLine = true;
    switch (this.state) {
      case S_REQUEST_LINE:
        startRequestLine(this.scan, limits.maxRequestLineBytes);
        return;
      case S_HEADER_LINE:
      case S_TRAILER_LINE:
        startFieldLine(this.scan, this.section.room);
        return;
      case S_CHUNK_DATA_END:
        startChunkDataEnd(this.scan);
        return;
      default: {
        const extensionRoom = limits.maxChunkExtensionBytes - this.chunkExtensionBytes;
        startChunkSizeLine(this.scan, MAX_CHUNK_SIZE_DIGITS + 2 + extensionRoom);
        rules.extensionRoom = extensionRoom;
        rules.chunkRoom = this.bodyLimit - this.body.length;
        rules.bodyLimit = this.bodyLimit;
      }
    }
  }

  /** The scan refused the line: report its verdict, placed in the message. */
  private refuseLine(): void {
    const scan = this.scan;
    // A chunked body that outgrows the limit: the scanner knows the number, the parser whose limit it is.
    const what = scan.code === "CONTENT_TOO_LARGE" && this.inBody ? scan.what + this.bodyLimitOwner() : scan.what;
    this.failAt(scan.code, what, this.msgBytes + scan.errorAt);
  }

  /**
   * Body bytes from buf[pos]: a fixed body, or one chunk's data. They are
   * counted out, not read: what they hold is the application's.
   */
  private bodyStep(buf: Buffer, pos: number): void {
    const n = Math.min(this.remaining, buf.length - pos);
    const fixed = this.state === S_FIXED_BODY;
    this.pos = pos + n;
    if (this.streaming) {
      this.bodyEvent.piece = buf.subarray(pos, pos + n);
      this.found = this.bodyEvent as ParseEvent;
    }
    else this.body.append(buf, pos, pos + n);
    this.emit(fixed ? "body" : "chunk-data", this.consumed, this.consumed + n);
    this.count(n);
    this.remaining -= n;
    if (this.remaining === 0) {
      if (!fixed) this.state = S_CHUNK_DATA_END;
      // A piece is out already: the request comes at the next ask.
      else if (this.streaming) this.state = S_MESSAGE_END;
      else this.complete();
    }
  }

  /** `n` bytes of the message were read. */
  private count(n: number): void {
    this.msgBytes += n;
    this.consumed += n;
  }

  private emit(kind: SpanKind, start: number, end: number): void {
    if (this.spans !== null) this.spans.span(kind, start, end);
  }

  /** One line, buf[start, lf] with lf at its LF, that the scan found sound. */
  private line(buf: Buffer, start: number, lf: number): void {
    const lineAbs = this.enter(start, lf);
    const scan = this.scan;
    const end = start + scan.end;
    const lineBytes = lf + 1 - start;
    switch (this.state) {
      case S_REQUEST_LINE:
        if (isEmptyLine(scan)) return this.emptyLine(start, lineAbs);
        return this.requestLine(buf, start, start + scan.split, start + scan.mark, end, lf, lineAbs);
      case S_HEADER_LINE:
        if (isEmptyLine(scan)) return this.endOfHead(buf, start, lf, lineAbs);
        sectionRule(this.section, "line-end", "", lineBytes);
        return this.headerLine(buf, start, start + scan.split, start + scan.mark, start + scan.valueEnd, lf, lineAbs);
      case S_CHUNK_SIZE:
        return this.chunkSizeLine(start, start + scan.split, end, lineAbs);
      case S_CHUNK_DATA_END:
        this.emit("chunk-end", lineAbs, lineAbs + lineBytes);
        this.state = S_CHUNK_SIZE;
        return;
      case S_TRAILER_LINE:
        if (isEmptyLine(scan)) {
          this.emit("trailer-end", lineAbs, lineAbs + lineBytes);
          return this.complete();
        }
        sectionRule(this.section, "line-end", "", lineBytes);
        // Trailers never reach the request's fields: a trailer cannot rewrite Content-Length or Host. A streamed
        // body's reader gets them apart, as sent (RFC 9110 §6.5: the recipient decides what to make of them).
        if (this.streaming) (this.trailers ??= []).push(latin1(buf, start, start + scan.split), latin1(buf, start + scan.mark, start + scan.valueEnd));
        if (this.spans !== null) fieldSpans(this.spans, true, start, start + scan.split, start + scan.mark, start + scan.valueEnd, lineAbs, lineBytes);
        return;
    }
  }

  /** The line buf[start, lf] is read: errors in it are placed from here. Returns where it began in the stream. */
  private enter(start: number, lf: number): number {
    const lineAbs = this.consumed;
    this.lineBase = this.msgBytes;
    this.lineStart = start;
    this.count(lf + 1 - start);
    return lineAbs;
  }

  // ---- Request line (RFC 9112 §3) ----

  /** RFC 9112 §2.2: empty lines received before the request line are ignored (a few of them). */
  private emptyLine(s: number, lineAbs: number): void {
    if (++this.leadingEmptyLines > MAX_LEADING_EMPTY_LINES) {
      return this.fail("INVALID_REQUEST_LINE", "Too many empty lines before the request line", s);
    }
    this.emit("empty-line", lineAbs, lineAbs + this.msgBytes - this.lineBase);
    this.msgBytes = 0;
  }

  /** What a request line buf[s, e) means, its syntax judged sound by the scan. */
  private requestLine(buf: Buffer, s: number, methodEnd: number, versionStart: number, e: number, lf: number, lineAbs: number): void {
    const query = this.scan.query;
    const read = readRequestLine(buf, s, e, methodEnd, versionStart, query === -1 ? -1 : s + query);
    if (isLineError(read)) return this.failWith(read);
    this.start = read;
    if (this.keepNames) this.names = [];
    this.memory.headTaken();
    this.headRead = this.reads;
    this.headFrom = s;
    this.section.minor = read.minor;
    if (this.spans !== null) {
      requestLineSpans(this.spans, s, methodEnd, versionStart, e, lineAbs, lf + 1 - s);
      this.memory.markRequestLine(methodEnd - s, versionStart - s, e - s, lf + 1 - s);
    }
    this.state = S_HEADER_LINE;
    startSection(this.section, false);
  }

  // ---- Header and trailer sections: field-name ":" OWS field-value OWS (RFC 9112 §5) ----

  /** What a header field line means, its syntax and its place in the section judged sound by the scan. */
  private headerLine(buf: Buffer, s: number, colon: number, vs: number, ve: number, lf: number, lineAbs: number): void {
    const fields = this.fields;
    const name = this.scan.name;
    const error = readField(fields, name, buf, vs, ve);
    if (error !== null) return this.failWith(error);
    if (this.names !== null) this.names.push(latin1(buf, s, colon));
    if (this.spans !== null) {
      fieldSpans(this.spans, false, s, colon, vs, ve, lineAbs, lf + 1 - s);
      const from = this.headFrom;
      this.memory.markField(s - from, colon - from, vs - from, ve - from, lf + 1 - s);
    }
  }

  /** The empty line buf[at, lf]: judge the head (RFC 9112 §3.2, §6.3) and hand it out. */
  private endOfHead(buf: Buffer, at: number, lf: number, lineAbs: number): void {
    // The line itself is sound: it is reported before the head it ends is judged, and refused, at its first byte.
    this.emit("blank-line", lineAbs, lineAbs + lf + 1 - at);
    const refused = sectionRule(this.section, "section-end", "", 0);
    if (refused !== null) return this.fail(refused.code, refused.what, at);
    const verdict = judgeHead(this.fields, this.start.minor);
    if ("code" in verdict) return this.fail(verdict.code, verdict.what, at);
    const head = headOf(this.start, this.fields, verdict, this.peer);
    if (this.names !== null) {
      (head as { rawNames?: readonly string[] }).rawNames = this.names;
      this.names = null;
    }
    // A head whose lines all came in this read lies whole in buf: the memory may keep it.
    if (this.headRead === this.reads) this.memory.keep(buf, this.headFrom, lf + 1 - this.headFrom, at - this.headFrom, this.start, head);
    this.handOut(head, at);
  }

  /** A sound head, read or recalled, whose empty line starts at `at`: out, and its framing applied at the next ask (frame). */
  private handOut(head: Request, at: number): void {
    this.head = head;
    this.headEnd = at;
    this.bodyLimit = this.limits.maxBodyBytes;
    this.bodyLimitIsOwn = false;
    this.state = S_HEAD_TAKEN;
    this.headsOut++;
    this.headEvent.head = head;
    this.found = this.headEvent as ParseEvent;
  }

  /**
   * The head handed out is followed by its body, framed as the head said,
   * within the limit its reader left (limitBody, streamBody). What is asked
   * here depends on more than the head's bytes, so it is asked for every
   * head, recalled ones too.
   */
  private frame(): void {
    const head = this.head!;
    const framing = head.framing;
    if (framing.kind === "none") return this.complete();
    if (framing.kind === "chunked") {
      this.state = S_CHUNK_SIZE;
      startSection(this.section, true);
      this.body.reset(this.bodyLimit);
    } else {
      // RFC 9110 §15.5.14: a body announced past the limit is refused before any of it is read.
      if (framing.length > this.bodyLimit) {
        return this.fail("CONTENT_TOO_LARGE", `Content-Length announces ${framing.length} bytes; ${head.path} takes at most ${this.bodyLimit}${this.bodyLimitOwner()}`, this.headEnd);
      }
      this.state = S_FIXED_BODY;
      this.remaining = framing.length;
      this.body.reset(framing.length);
    }
    // Only now, with every limit the head is judged by passed, may the client be told to send the body (RFC 9110 §10.1.1).
    if (head.expectContinue) this.found = CONTINUE;
  }

  // ---- Chunked body (RFC 9112 §7.1) ----

  /** A chunk-size line buf[s, e), its size read by the scan, its extensions [digitsEnd, e) sound and within their limit. */
  private chunkSizeLine(s: number, digitsEnd: number, e: number, lineAbs: number): void {
    const size = this.scan.size;
    this.chunkExtensionBytes += e - digitsEnd;
    if (this.spans !== null) chunkSizeSpans(this.spans, s, digitsEnd, e, size === 0, lineAbs, this.consumed - lineAbs);
    if (size === 0) {
      this.state = S_TRAILER_LINE;
    } else {
      this.state = S_CHUNK_DATA;
      this.remaining = size;
    }
  }

  // ---- Completion, errors ----

  private complete(): void {
    const head = this.head!;
    const trailers = this.trailers;
    const request: Request = trailers !== null ? { ...head, trailers } : this.body.length === 0 ? head : { ...head, body: this.body.take() };
    this.reset();
    // RFC 9112 §9.6: nothing after a request that closes the connection is read.
    if (head.keepAlive) this.state = S_REQUEST_LINE;
    else this.stop();
    this.requestEvent.request = request;
    this.found = this.requestEvent as ParseEvent;
  }

  private reset(): void {
    this.start = NO_REQUEST_LINE;
    this.msgBytes = 0;
    this.leadingEmptyLines = 0;
    resetHeadFields(this.fields);
    // The section starts with the next request line (requestLine).
    this.head = null;
    this.remaining = 0;
    this.body.reset(0);
    this.chunkExtensionBytes = 0;
    this.streaming = false;
    this.trailers = null;
  }

  private failWith(error: LineError): void {
    this.fail(error.code, error.what, error.at);
  }

  /** Report an error at index `at` of the line being parsed. */
  private fail(code: ProtocolErrorCode, what: string, at: number): void {
    this.failAt(code, what, this.lineBase + (at - this.lineStart));
  }

  /** `offset` counts from the start of the message; the error span, from the start of the stream. */
  private failAt(code: ProtocolErrorCode, what: string, offset: number): void {
    const absolute = this.consumed - this.msgBytes + offset;
    this.stop();
    this.emit("error", absolute, absolute);
    this.found = { kind: "error", error: protocolError(code, what, offset) };
  }
}
