// The incremental HTTP/1.1 request parser (RFC 9112).
//
// Bytes go in through `feed`, in chunks of any size split anywhere; complete
// requests, or exactly one named error, come out through the sink. The parser
// is a small state machine over lines and body bytes:
//
//   RequestLine -> HeaderLine* -> (FixedBody | (ChunkSize -> ChunkData -> ChunkDataEnd)* -> ChunkSize(0) -> TrailerLine*) -> RequestLine
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
// view, TRACE=1): on the very path every request takes, where a listener
// that is null costs one branch per line.
//
// Strict by default: anything RFC 9112 lets a server reject, it rejects, since
// every leniency is a place where this server and a proxy in front of it could
// disagree about where a request ends (request smuggling).

import { BodyBuffer } from "./body-buffer.js";
import { protocolError, type ProtocolErrorCode } from "./errors.js";
import { headAgain, headOf, judgeHead, newHeadFields, readField, resetHeadFields } from "./head-framing.js";
import { HeadMemory } from "./head-memory.js";
import { latin1 } from "./latin1.js";
import { checkLimits, DEFAULT_LIMITS, MAX_BODY_LIMIT, type ParserLimits } from "./limits.js";
import { isLineError, NO_REQUEST_LINE, readRequestLine, type RequestLine } from "./request-line.js";
import type { ParserSink, Request } from "../message/request.js";
import { isEmptyLine, MAX_CHUNK_SIZE_DIGITS, MORE, newScan, scanLine, startChunkDataEnd, startChunkSizeLine, startFieldLine, startRequestLine, type LineError, type LineRules } from "./line-scan.js";
import { newSection, sectionRule, startSection, type Section } from "./section-rules.js";
import { chunkSizeSpans, fieldSpans, requestLineSpans, type SpanKind, type SpanListener } from "./spans.js";

export { DEFAULT_LIMITS, type ParserLimits } from "./limits.js";
export type { ParserSink } from "../message/request.js";

// The parser's states: plain constants (an enum's members are property loads under this project's settings).
const S_REQUEST_LINE = 0;
const S_HEADER_LINE = 1;
const S_CHUNK_SIZE = 2;
/** The CR LF after a chunk's data: a line, with nothing before its end. */
const S_CHUNK_DATA_END = 3;
const S_TRAILER_LINE = 4;
// The states above read lines (the scanner); the two below count body bytes out.
const S_FIXED_BODY = 5;
const S_CHUNK_DATA = 6;
/** After an error, or after a request that closes the connection (RFC 9112 §9.6). */
const S_CLOSED = 7;

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
  private readonly limits: ParserLimits;
  private readonly sink: ParserSink;
  /** Null unless someone asked to see the parts (spans.ts); then told of every one. */
  private readonly spans: SpanListener | null;
  /** Keep each field's name as sent beside its lower-cased form (RequestHead.rawNames): only when asked, off the hot path. */
  private readonly keepNames: boolean;
  /** Who the bytes come from, put on every request (RequestHead.peer). */
  private readonly peer: string;
  /** The names as sent of the head being read, when kept. */
  private names: string[] | null = null;

  /** Where the scan of the current line stands, and what its verdict depends on. */
  private readonly scan = newScan();
  private readonly rules: LineRules;
  private readonly section: Section;
  /** The bytes of an unfinished line: carry[0, carryLen). Null when no line is cut. */
  private carry: Buffer | null = null;
  private carryLen = 0;
  /** The head read last: a head that repeats it is not read again (head-memory.ts). */
  private readonly memory = new HeadMemory();
  /** Reads so far, and lines carried over from one read to the next: a head is kept only when its lines came in one. */
  private reads = 0;
  /** The read the current head came in, and where in it the head starts. */
  private headRead = -1;
  private headFrom = 0;
  /** A line is being scanned (its scan was started). */
  private inLine = false;

  private paused = false;
  /** A read is being parsed: what is fed meanwhile (by a handler) waits, and comes after the read's rest. */
  private running = false;
  /** Bytes not yet read: held while paused, or fed while a read was parsed. */
  private pending: Buffer | null = null;
  /** The client's end of input came while bytes were pending or a read was parsed: the sink hears of it after them. */
  private endPending = false;

  /** Bytes of the stream taken so far (lines and body), for span offsets. */
  private consumed = 0;
  /** The read being parsed, and where its first byte lies in the stream: what lies past a head handed over is found from them. */
  private buf: Buffer = NO_BYTES;
  private bufAt = 0;
  /** Bytes of the current message before the line being parsed (for error offsets). */
  private msgBytes = 0;
  private lineBase = 0;
  private lineStart = 0;
  private leadingEmptyLines = 0;

  // The head being assembled: its request line, then its fields.
  private start: RequestLine = NO_REQUEST_LINE;
  private readonly fields = newHeadFields();
  private head: Request | null = null;

  // The body being received.
  private remaining = 0;
  private readonly body = new BodyBuffer();
  /** This request's body limit: the server's, or less where the handler said so in onHead. */
  private bodyLimit = 0;
  /** The body limit in force was lowered by the resource (limitBody), not the server's own. */
  private bodyLimitIsOwn = false;
  private chunkExtensionBytes = 0;
  /** This request's body goes to the sink in pieces as they arrive (streamBody), not gathered whole. */
  private streaming = false;
  /** A streamed body's trailer fields: name as sent, value, name, value... */
  private trailers: string[] | null = null;

  constructor(sink: ParserSink, limits: ParserLimits = DEFAULT_LIMITS, spans: SpanListener | null = null, reading: ReadingOptions = {}) {
    this.sink = sink;
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

  /** Bytes fed and not yet read (held while paused). */
  get held(): number {
    return this.pending === null ? 0 : this.pending.length;
  }

  /** True between requests: no byte of a next request has arrived yet. */
  get idle(): boolean {
    return !this.begun && this.pending === null;
  }

  /** True once a request's first bytes are taken (its line, head or body), until it is handed on; bytes held while paused are not taken. */
  get begun(): boolean {
    return this.state !== S_REQUEST_LINE || this.msgBytes !== 0 || this.carryLen !== 0;
  }

  /** True once the parser has stopped accepting bytes (error, or a closing request done). */
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

  /** Stop reading: every later byte is ignored (after an error, and when the connection closes or times out, answers from the head, or the client half-closes). */
  stop(): void {
    this.state = S_CLOSED;
    this.pending = null;
    this.carry = null;
    this.carryLen = 0;
    this.body.reset(0);
  }

  /**
   * Lower the body limit for the request whose head was just handed to
   * onHead (a resource that takes small bodies says so before any body byte
   * is read). Only valid inside onHead; the next request starts from the
   * server's limit again.
   */
  limitBody(bytes: number): void {
    if (bytes < this.bodyLimit) {
      this.bodyLimit = bytes;
      this.bodyLimitIsOwn = true;
    }
  }

  /**
   * Hand the body of the request whose head was just handed to onHead to the
   * sink in pieces as they arrive (onBody), never gathered whole; its
   * trailer fields come with the request (Request.trailers). The server's
   * body limit does not apply to it: whoever reads the pieces bounds what
   * it keeps, and stops the reading (pause) while it cannot take more. Only
   * valid inside onHead.
   */
  streamBody(): void {
    this.streaming = true;
    this.bodyLimit = MAX_BODY_LIMIT;
    this.bodyLimitIsOwn = false;
  }

  /**
   * The connection switches protocols after the head just handed to onHead
   * (RFC 9110 §7.8): the parser stops, and returns the bytes read past that
   * head (h11's "trailing data"), which belong to the new protocol. Only
   * valid inside onHead.
   */
  handOver(): Buffer {
    const rest = this.buf.subarray(this.consumed - this.bufAt);
    const out = this.pending === null ? rest : Buffer.concat([rest, this.pending]);
    this.stop();
    return out;
  }

  /** Whose the body limit in force is, for the 413: a client can ask an operator to raise the server's, not a resource's own. */
  private bodyLimitOwner(): string {
    if (this.bodyLimitIsOwn) return "; that limit is this resource's own, and no setting raises it";
    const raise = this.limits.raiseBodyLimit;
    return raise === undefined ? "; that limit is the server's" : `; that limit is the server's, and ${raise}`;
  }

  /** True while a request's body is being received. */
  get inBody(): boolean {
    return this.state >= S_CHUNK_SIZE && this.state <= S_CHUNK_DATA;
  }

  /**
   * Parse the next bytes of the stream. The chunk must not be modified
   * afterwards: body slices handed to the sink may point into it. Bytes fed
   * from the sink (a handler) while a read is parsed come after that read's
   * rest, as if the client had sent them next: reads are parsed one at a
   * time, never one inside another.
   */
  feed(chunk: Buffer): void {
    if (this.state === S_CLOSED || chunk.length === 0) return;
    if (this.paused || this.running) {
      this.pending = this.pending === null ? chunk : Buffer.concat([this.pending, chunk]);
      return;
    }
    this.running = true;
    try {
      this.read(chunk);
    } finally {
      this.running = false;
      this.buf = NO_BYTES;
    }
    // What the sink fed or ended while the read was parsed, now that it is.
    if (!this.paused && (this.pending !== null || this.endPending)) this.resume();
  }

  /** Stop before the next line or piece of body (so, called from onRequest, right after that request); later bytes wait for resume(). */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    // Called from the sink while a read is parsed: the read goes on, and feed() takes what waits after it.
    if (this.running) return;
    if (this.pending !== null) {
      const pending = this.pending;
      this.pending = null;
      this.feed(pending);
    }
    if (this.endPending && this.pending === null) this.end();
  }

  /**
   * The client sends nothing more (a TCP FIN): like h11's end of data, it
   * comes after the bytes before it. A request they complete is handed on
   * before the sink hears onInputEnd, even one held while paused; so a
   * client that pipelines and half-closes gets every answer it asked for.
   */
  end(): void {
    if (this.pending !== null || this.running) {
      this.endPending = true;
      return;
    }
    this.endPending = false;
    this.sink.onInputEnd?.();
  }

  private read(buf: Buffer): void {
    let pos = 0;
    this.reads++;
    // buf[0] follows the bytes taken and those carried (a cut line, taken when it ends).
    this.buf = buf;
    this.bufAt = this.consumed + this.carryLen;
    if (this.carryLen > 0) {
      pos = this.goOn(buf);
      if (pos < 0) return;
    }
    const len = buf.length;
    while (pos < len) {
      if (this.state === S_CLOSED) return;
      if (this.paused) {
        // Before what the sink fed while this read was parsed.
        const rest = buf.subarray(pos);
        this.pending = this.pending === null ? rest : Buffer.concat([rest, this.pending]);
        return;
      }
      if (this.state <= S_TRAILER_LINE) {
        if (!this.inLine) {
          // A head the connection sent last time, byte for byte, is taken as it was then (head-memory.ts).
          // An empty line before a request line (CR or LF) is no head's start: it is read, not counted as a miss.
          if (this.state === S_REQUEST_LINE && buf[pos] !== 0x0d && buf[pos] !== 0x0a) {
            const n = this.memory.recall(buf, pos, this.reads);
            if (n !== 0) {
              if (!this.recalled(pos, n)) return;
              pos += n;
              continue;
            }
          }
          this.beginLine();
        }
        const lf = scanLine(buf, pos, len, this.scan, this.rules);
        if (lf >= 0) {
          this.inLine = false;
          if (!this.line(buf, pos, lf)) return;
          pos = lf + 1;
        } else {
          if (lf === MORE) this.keep(buf, pos, len);
          else this.refuseLine();
          return;
        }
      } else {
        pos += this.bytes(buf, pos);
      }
    }
  }

  /**
   * The next bytes of a line cut by the end of the last read: they are
   * copied behind it, a window at a time, and the scan goes on from where it
   * stopped. Returns where the rest of buf starts, or -1 when nothing more is
   * to be read from it now.
   */
  private goOn(buf: Buffer): number {
    let from = 0;
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
        const after = from - (this.carryLen - (lf + 1));
        this.carry = null;
        this.carryLen = 0;
        this.inLine = false;
        // The carried line counts as a read of its own: a head with a line in it is not whole in any one buffer.
        this.reads++;
        const ok = this.line(line, 0, lf);
        this.reads++;
        return ok ? after : -1;
      }
      if (lf !== MORE) {
        this.refuseLine();
        return -1;
      }
      if (from === buf.length) return -1;
    }
  }

  /** Keeps buf[pos, len), the start of a line the read cut: its scan goes on in the copy. */
  private keep(buf: Buffer, pos: number, len: number): void {
    this.append(buf, pos, len);
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
   * meant then, its parts reported as when it was read, and handed on (handOn)
   * as a head read now would be. Returns false when parsing must stop.
   */
  private recalled(pos: number, n: number): boolean {
    const memory = this.memory;
    const line = memory.line;
    const blank = memory.blank;
    if (this.spans !== null) memory.replay(this.spans, this.consumed);
    memory.headTaken();
    this.start = line;
    this.section.minor = line.minor;
    this.take(blank);
    const lineAbs = this.enter(pos + blank, pos + n - 1);
    this.emit("blank-line", lineAbs, lineAbs + n - blank);
    const head = headAgain(memory.head);
    if (this.keepNames) (head as { rawNames?: readonly string[] }).rawNames = memory.head.rawNames;
    return this.handOn(head, pos + blank);
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
   * Body bytes: a fixed body, or one chunk's data. They are counted out, not
   * read: what they hold is the application's. Returns how many were taken.
   */
  private bytes(buf: Buffer, pos: number): number {
    const n = Math.min(this.remaining, buf.length - pos);
    const fixed = this.state === S_FIXED_BODY;
    if (!this.streaming) this.body.append(buf, pos, pos + n);
    this.emit(fixed ? "body" : "chunk-data", this.consumed, this.consumed + n);
    this.take(n);
    this.remaining -= n;
    if (this.streaming) {
      // The reader may stop the parser (the connection closes) or pause it (it is full): the loop looks before the next piece.
      this.sink.onBody!(buf.subarray(pos, pos + n));
      if (this.state === S_CLOSED) return n;
    }
    if (this.remaining === 0) {
      if (fixed) this.complete();
      else this.state = S_CHUNK_DATA_END;
    }
    return n;
  }

  /** `n` bytes of the message were taken. */
  private take(n: number): void {
    this.msgBytes += n;
    this.consumed += n;
  }

  private emit(kind: SpanKind, start: number, end: number): void {
    if (this.spans !== null) this.spans.span(kind, start, end);
  }

  /** One line, buf[start, lf] with lf at its LF, that the scan found sound. Returns false when parsing must stop. */
  private line(buf: Buffer, start: number, lf: number): boolean {
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
        return true;
      case S_TRAILER_LINE:
        if (isEmptyLine(scan)) {
          this.emit("trailer-end", lineAbs, lineAbs + lineBytes);
          this.complete();
          return !this.closed;
        }
        sectionRule(this.section, "line-end", "", lineBytes);
        // Trailers never reach the request's fields: a trailer cannot rewrite Content-Length or Host. A streamed
        // body's reader gets them apart, as sent (RFC 9110 §6.5: the recipient decides what to make of them).
        if (this.streaming) (this.trailers ??= []).push(latin1(buf, start, start + scan.split), latin1(buf, start + scan.mark, start + scan.valueEnd));
        if (this.spans !== null) fieldSpans(this.spans, true, start, start + scan.split, start + scan.mark, start + scan.valueEnd, lineAbs, lineBytes);
        return true;
      default:
        return false;
    }
  }

  /** The line buf[start, lf] is taken: errors in it are placed from here. Returns where it began in the stream. */
  private enter(start: number, lf: number): number {
    const lineAbs = this.consumed;
    this.lineBase = this.msgBytes;
    this.lineStart = start;
    this.take(lf + 1 - start);
    return lineAbs;
  }

  // ---- Request line (RFC 9112 §3) ----

  /** RFC 9112 §2.2: empty lines received before the request line are ignored (a few of them). */
  private emptyLine(s: number, lineAbs: number): boolean {
    if (++this.leadingEmptyLines > MAX_LEADING_EMPTY_LINES) {
      return this.fail("INVALID_REQUEST_LINE", "Too many empty lines before the request line", s);
    }
    this.emit("empty-line", lineAbs, lineAbs + this.msgBytes - this.lineBase);
    this.msgBytes = 0;
    return true;
  }

  /** What a request line buf[s, e) means, its syntax judged sound by the scan. */
  private requestLine(buf: Buffer, s: number, methodEnd: number, versionStart: number, e: number, lf: number, lineAbs: number): boolean {
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
    return true;
  }

  // ---- Header and trailer sections: field-name ":" OWS field-value OWS (RFC 9112 §5) ----

  /** What a header field line means, its syntax and its place in the section judged sound by the scan. */
  private headerLine(buf: Buffer, s: number, colon: number, vs: number, ve: number, lf: number, lineAbs: number): boolean {
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
    return true;
  }

  /** The empty line buf[at, lf]: judge the head (RFC 9112 §3.2, §6.3) and hand it on. */
  private endOfHead(buf: Buffer, at: number, lf: number, lineAbs: number): boolean {
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
    return this.handOn(head, at);
  }

  /**
   * A sound head, read or recalled, whose empty line starts at `at`: to the
   * sink, then to its body. What is asked here depends on more than the
   * head's bytes (the handler's limit), so it is asked for every head.
   */
  private handOn(head: Request, at: number): boolean {
    const framing = head.framing;
    this.head = head;
    this.bodyLimit = this.limits.maxBodyBytes;
    this.bodyLimitIsOwn = false;
    // The handler learns of the head first: it may refuse it, or lower this request's body limit (limitBody).
    this.sink.onHead(head);
    if (this.closed) return false;
    if (framing.kind === "none") {
      this.complete();
      return !this.closed;
    }
    if (framing.kind === "chunked") {
      this.state = S_CHUNK_SIZE;
      startSection(this.section, true);
      this.body.reset(this.bodyLimit);
    } else {
      // RFC 9110 §15.5.14: a body announced past the limit is refused before any of it is read.
      if (framing.length > this.bodyLimit) {
        return this.fail("CONTENT_TOO_LARGE", `Content-Length announces ${framing.length} bytes; ${head.path} takes at most ${this.bodyLimit}${this.bodyLimitOwner()}`, at);
      }
      this.state = S_FIXED_BODY;
      this.remaining = framing.length;
      this.body.reset(framing.length);
    }
    // Only now, with every limit the head is judged by passed, may the client be told to send the body (RFC 9110 §10.1.1).
    if (head.expectContinue) this.sink.onContinue?.();
    return true;
  }

  // ---- Chunked body (RFC 9112 §7.1) ----

  /** A chunk-size line buf[s, e), its size read by the scan, its extensions [digitsEnd, e) sound and within their limit. */
  private chunkSizeLine(s: number, digitsEnd: number, e: number, lineAbs: number): boolean {
    const size = this.scan.size;
    this.chunkExtensionBytes += e - digitsEnd;
    if (this.spans !== null) chunkSizeSpans(this.spans, s, digitsEnd, e, size === 0, lineAbs, this.consumed - lineAbs);
    if (size === 0) {
      this.state = S_TRAILER_LINE;
    } else {
      this.state = S_CHUNK_DATA;
      this.remaining = size;
    }
    return true;
  }

  // ---- Completion, errors ----

  private complete(): void {
    const head = this.head!;
    const trailers = this.trailers;
    const request: Request = trailers !== null ? { ...head, trailers } : this.body.length === 0 ? head : { ...head, body: this.body.take() };
    this.reset();
    // RFC 9112 §9.6: nothing after a request that closes the connection is read.
    this.state = head.keepAlive ? S_REQUEST_LINE : S_CLOSED;
    this.sink.onRequest(request);
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

  private failWith(error: LineError): false {
    return this.fail(error.code, error.what, error.at);
  }

  /** Report an error at index `at` of the line being parsed. Always returns false. */
  private fail(code: ProtocolErrorCode, what: string, at: number): false {
    return this.failAt(code, what, this.lineBase + (at - this.lineStart));
  }

  /** `offset` counts from the start of the message; the error span, from the start of the stream. */
  private failAt(code: ProtocolErrorCode, what: string, offset: number): false {
    const absolute = this.consumed - this.msgBytes + offset;
    this.stop();
    this.emit("error", absolute, absolute);
    this.sink.onError(protocolError(code, what, offset));
    return false;
  }
}
