// The incremental HTTP/1.1 request parser (RFC 9112).
//
// Bytes go in through `feed`, in chunks of any size split anywhere; complete
// requests, or exactly one named error, come out through the sink. The parser
// is a small state machine over lines and body bytes:
//
//   RequestLine -> HeaderLine* -> (FixedBody | ChunkSize -> ChunkData -> ... -> TrailerLine*) -> RequestLine
//
// Each part of the work lives in its own module, and this one holds the
// state: line-reader.ts finds lines in the stream (copying only an unfinished
// one); clean-line.ts reads the common case, a whole line that breaks no
// rule, in one pass, and line-memory.ts recalls one the last head repeated;
// line-scan.ts and line-judge.ts judge any other line's bytes as they arrive,
// so a request is refused at the byte that breaks a rule, whatever the cuts;
// request-line.ts reads the request line's tokens; head.ts turns fields into
// framing and keep-alive; chunked.ts reads chunk-size lines; body-buffer.ts
// holds body bytes. Strings are made once per token, never per byte.
//
// Strict by default: anything RFC 9112 lets a server reject, it rejects, since
// every leniency is a place where this server and a proxy in front of it could
// disagree about where a request ends (request smuggling).

import { BodyBuffer } from "./body-buffer.js";
import { CR, LF } from "./byte-classes.js";
import { cleanFieldLine, cleanRequestLine, isPlainLength, type RequestLineBounds } from "./clean-line.js";
import { MAX_CHUNK_SIZE_DIGITS, readChunkSizeLine } from "./chunk-size-line.js";
import { protocolError, type ProtocolErrorCode } from "./errors.js";
import { headOf, judgeHead, lastValue, newHeadFields, noteField, readField, resetHeadFields } from "./head-framing.js";
import { checkLimits, DEFAULT_LIMITS, type ParserLimits } from "./limits.js";
import { LineJudge, type LineKind, type LinePiece } from "./line-judge.js";
import { LineMemory } from "./line-memory.js";
import { LineReader, type LineConsumer } from "./line-reader.js";
import { describe, endRequestLine, type FieldBounds, type ScanError } from "./line-scan.js";
import { fieldName } from "./interned-names.js";
import { isScanError, NO_REQUEST_LINE, readRequestLine, type RequestLine } from "./request-line.js";
import type { ParserSink, Request } from "../message/request.js";
import { chunkSizeSpans, fieldSpans, requestLineSpans, type SpanKind, type SpanListener } from "./spans.js";

export { DEFAULT_LIMITS, type ParserLimits } from "./limits.js";
export type { ParserSink } from "../message/request.js";

const enum State {
  RequestLine,
  HeaderLine,
  FixedBody,
  ChunkSize,
  ChunkData,
  ChunkDataCr,
  ChunkDataLf,
  TrailerLine,
  /** After an error, or after a request that closes the connection (RFC 9112 §9.6). */
  Closed,
}

/** Empty lines tolerated before a request line (RFC 9112 §2.2 asks for at least one). */
const MAX_LEADING_EMPTY_LINES = 8;

export class RequestParser implements LineConsumer {
  private state = State.RequestLine;
  private readonly limits: ParserLimits;
  private readonly sink: ParserSink;
  /** Null unless someone asked to see the parts (spans.ts); then told of every one. */
  private readonly spans: SpanListener | null;

  /** Finds the lines; this class says what they mean. */
  private readonly reader: LineReader = new LineReader(this);
  /** Judges each line, whole or in pieces, before it is read. */
  private readonly judge: LineJudge;
  /** Scratch, refilled for each line (nothing keeps them): no object is made per line. */
  private readonly bounds: FieldBounds = { nameEnd: 0, vs: 0, ve: 0 };
  private readonly lineBounds: RequestLineBounds = { methodEnd: 0, versionStart: 0 };
  /** Where (in the stream) lines() last stopped at a line it does not take: it is not scanned twice. */
  private uncleanAt = -1;
  /** The lines of the heads read before, by place: a line that repeats is not read again. */
  private readonly memory = new LineMemory();

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
  /** Field lines and their bytes in the section being read (header or trailer). */
  private fieldCount = 0;
  private sectionBytes = 0;
  private head: Request | null = null;

  // The body being received.
  private remaining = 0;
  private readonly body = new BodyBuffer();
  /** This request's body limit: the server's, or less where the handler said so in onHead. */
  private bodyLimit = 0;
  private chunkExtensionBytes = 0;
  /** Where the CR LF after a chunk's data began (spans only). */
  private chunkEndStart = 0;

  constructor(sink: ParserSink, limits: ParserLimits = DEFAULT_LIMITS, spans: SpanListener | null = null) {
    this.sink = sink;
    this.limits = checkLimits(limits);
    this.spans = spans;
    this.judge = new LineJudge(limits);
  }

  /** True between requests: no byte of a next request has arrived yet. */
  get idle(): boolean {
    return this.state === State.RequestLine && this.msgBytes === 0 && this.reader.idle;
  }

  /** True once the parser has stopped accepting bytes (error, or a closing request done). */
  get closed(): boolean {
    return this.state === State.Closed;
  }

  /** The request line of the request being read; method and target "" before it is complete. */
  get current(): RequestLine {
    return this.start;
  }

  /** Stop reading: every later byte is ignored (used on timeouts and shutdown). */
  stop(): void {
    this.state = State.Closed;
    this.reader.stop();
    this.body.reset(0);
  }

  /**
   * Lower the body limit for the request whose head was just handed to
   * onHead (a resource that takes small bodies says so before any body byte
   * is read). Only valid inside onHead; the next request starts from the
   * server's limit again.
   */
  limitBody(bytes: number): void {
    this.bodyLimit = Math.min(this.bodyLimit, bytes);
  }

  /** True while a request's body is being received. */
  get inBody(): boolean {
    return this.state >= State.FixedBody && this.state <= State.TrailerLine;
  }

  /**
   * Parse the next bytes of the stream. The chunk must not be modified
   * afterwards: body slices handed to the sink may point into it.
   */
  feed(chunk: Buffer): void {
    this.reader.feed(chunk);
  }

  /** Stop after the request being completed; later bytes wait for resume(). */
  pause(): void {
    this.reader.pause();
  }

  resume(): void {
    this.reader.resume();
  }

  // ---- LineConsumer: what the line reader asks ----

  get wantsLine(): boolean {
    return this.state === State.RequestLine || this.state === State.HeaderLine || this.state === State.ChunkSize || this.state === State.TrailerLine;
  }

  get done(): boolean {
    return this.state === State.Closed;
  }

  /** Limits apply to unfinished lines too, so a line that never ends cannot grow without bound. */
  partial(carry: Buffer, length: number, fresh: boolean): void {
    this.lineBase = this.msgBytes;
    this.lineStart = 0;
    this.checkLineSoFar(carry, 0, length, fresh ? "first" : "more");
  }

  /** Body bytes, in the body's states: data, then (chunked) the CR LF after each chunk's data. */
  bytes(buf: Buffer, pos: number): number {
    switch (this.state) {
      case State.FixedBody:
      case State.ChunkData: {
        const n = Math.min(this.remaining, buf.length - pos);
        this.body.append(buf, pos, pos + n);
        this.emit(this.state === State.FixedBody ? "body" : "chunk-data", this.consumed, this.consumed + n);
        this.take(n);
        this.remaining -= n;
        if (this.remaining === 0) {
          if (this.state === State.FixedBody) this.complete();
          else {
            this.state = State.ChunkDataCr;
            this.chunkEndStart = this.consumed;
          }
        }
        return n;
      }
      case State.ChunkDataCr:
      case State.ChunkDataLf: {
        // RFC 9112 §7.1: chunk-data is followed by CRLF, exactly.
        const b = buf[pos]!;
        const first = this.state === State.ChunkDataCr;
        if (first && b === CR) this.state = State.ChunkDataLf;
        else if (b === LF && (!first || this.limits.allowBareLf)) {
          this.state = State.ChunkSize;
          this.emit("chunk-end", this.chunkEndStart, this.consumed + 1);
        } else {
          if (first) this.failAt("INVALID_CHUNK_END", `Expected CR LF after the chunk data, found ${describe(b)}`, this.msgBytes);
          else this.failAt("BARE_CR", "A CR after the chunk data was not followed by LF", this.msgBytes);
          return -1;
        }
        this.take(1);
        return 1;
      }
      default:
        return -1;
    }
  }

  /** `n` bytes of the message were taken. */
  private take(n: number): void {
    this.msgBytes += n;
    this.consumed += n;
  }

  private emit(kind: SpanKind, start: number, end: number): void {
    if (this.spans !== null) this.spans.span(kind, start, end);
  }

  /** One line, buf[start, lf) with lf at the LF. Returns false when parsing must stop. */
  line(buf: Buffer, start: number, lf: number): boolean {
    const lineAbs = this.enter(start, lf);
    // The checks an unfinished line gets come first, so that a line's verdict
    // does not depend on whether it arrived whole or in pieces.
    if (!this.checkLineSoFar(buf, start, lf, "whole")) return false;
    let end = lf;
    if (lf > start && buf[lf - 1] === CR) end = lf - 1;
    else if (!this.limits.allowBareLf) return this.fail("BARE_LF", "A line of the request head ended with LF alone", lf);
    switch (this.state) {
      case State.RequestLine:
        return this.requestLine(buf, start, end, lineAbs);
      case State.HeaderLine:
        return this.headerLine(buf, start, end, lf + 1 - start, lineAbs);
      case State.ChunkSize:
        return this.chunkSizeLine(buf, start, end, lineAbs);
      case State.TrailerLine:
        return this.trailerLine(buf, start, end, lf + 1 - start, lineAbs);
      default:
        return false;
    }
  }

  /**
   * The whole, clean lines of a head from buf[pos], read in one pass (clean-line.ts) or recalled
   * (line-memory.ts), up to its empty line, which hands the head on. Stops at the first line that is
   * neither, which the line-by-line path then reads (it is not tried again here). Returns where it
   * stopped, or -1 when parsing must stop.
   */
  lines(buf: Buffer, pos: number): number {
    // The span listener wants every part named: that is the line-by-line path's work.
    if (this.spans !== null) return pos;
    const limits = this.limits;
    const memory = this.memory;
    if (this.state === State.RequestLine) {
      let lf = memory.recall(buf, pos, 0, limits.maxRequestLineBytes + 2);
      if (lf !== -1) {
        this.start = memory.line;
        this.state = State.HeaderLine;
        this.enter(pos, lf);
      } else {
        const line = this.lineBounds;
        lf = cleanRequestLine(buf, pos, limits.maxRequestLineBytes, line);
        if (lf === -1) return pos;
        if (!this.takeRequestLine(buf, pos, lf - 1, line.methodEnd, line.versionStart, this.enter(pos, lf))) return -1;
        memory.keepRequestLine(buf, pos, lf, this.start);
      }
      pos = lf + 1;
    }
    while (this.state === State.HeaderLine && this.consumed !== this.uncleanAt) {
      if (buf[pos] === CR && buf[pos + 1] === LF) return this.endOfHead(pos, this.enter(pos, pos + 1), 2) ? pos + 2 : -1;
      const room = this.fieldCount < limits.maxHeaderCount ? limits.maxHeaderBytes - this.sectionBytes : 0;
      const slot = this.fieldCount + 1;
      const v = this.bounds;
      let lf = memory.recall(buf, pos, slot, room);
      const recalled = lf !== -1;
      if (!recalled) lf = cleanFieldLine(buf, pos, room, v);
      const name = recalled ? memory.name(slot) : lf === -1 ? "" : fieldName(buf, pos, v.nameEnd);
      // RFC 9110 §8.6: a second Content-Length, or one that is not plain digits, is refused the full way.
      if (lf === -1 || (name === "content-length" && (this.fields.contentLength !== -1 || (!recalled && !isPlainLength(buf, v.vs, v.ve))))) {
        this.uncleanAt = this.consumed;
        return pos;
      }
      const lineAbs = this.enter(pos, lf);
      if (!this.countField(pos, lf + 1 - pos, "header")) return -1;
      // A recalled line's bytes were judged when it was kept: what it means is all that is left.
      if (recalled) noteField(this.fields, name, memory.value(slot));
      else if (this.takeField(buf, pos, name, v, lf + 1 - pos, lineAbs)) memory.keepField(buf, pos, lf, slot, name, lastValue(this.fields));
      else return -1;
      pos = lf + 1;
    }
    return pos;
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

  private requestLine(buf: Buffer, s: number, e: number, lineAbs: number): boolean {
    if (s === e) {
      // RFC 9112 §2.2: ignore empty lines received before the request line.
      if (++this.leadingEmptyLines > MAX_LEADING_EMPTY_LINES) {
        return this.fail("INVALID_REQUEST_LINE", "Too many empty lines before the request line", s);
      }
      this.emit("empty-line", lineAbs, lineAbs + this.msgBytes - this.lineBase);
      this.msgBytes = 0;
      return true;
    }
    const scan = this.judge.whole;
    const ended = endRequestLine(buf, e, scan);
    if (ended !== null) return this.failWith(ended);
    return this.takeRequestLine(buf, s, e, scan.split, scan.mark, lineAbs);
  }

  /** What a request line buf[s, e) means, its syntax already judged sound. */
  private takeRequestLine(buf: Buffer, s: number, e: number, methodEnd: number, versionStart: number, lineAbs: number): boolean {
    const read = readRequestLine(buf, s, e, methodEnd, versionStart);
    if (isScanError(read)) return this.failWith(read);
    this.start = read;
    if (this.spans !== null) requestLineSpans(this.spans, s, methodEnd, versionStart, e, lineAbs, this.msgBytes - this.lineBase);
    this.state = State.HeaderLine;
    return true;
  }

  // ---- Header and trailer sections: field-name ":" OWS field-value OWS (RFC 9112 §5) ----

  /** Counts a field line against the section's limits (RFC 6585 §5: 431). */
  private countField(s: number, lineBytes: number, section: string): boolean {
    this.sectionBytes += lineBytes;
    if (this.sectionBytes > this.limits.maxHeaderBytes) {
      return this.fail("HEADERS_TOO_LARGE", `The ${section} section is larger than ${this.limits.maxHeaderBytes} bytes`, s);
    }
    this.fieldCount++;
    return true;
  }

  private headerLine(buf: Buffer, s: number, e: number, lineBytes: number, lineAbs: number): boolean {
    if (s === e) return this.endOfHead(s, lineAbs, lineBytes);
    if (!this.countField(s, lineBytes, "header")) return false;
    const v = this.bounds;
    const error = this.judge.fieldParts(buf, e, v);
    return error === null ? this.takeField(buf, s, fieldName(buf, s, v.nameEnd), v, lineBytes, lineAbs) : this.failWith(error);
  }

  /** What a header field line means, its syntax judged sound and the line counted. */
  private takeField(buf: Buffer, s: number, name: string, v: FieldBounds, lineBytes: number, lineAbs: number): boolean {
    const error = readField(this.fields, name, buf, v.vs, v.ve);
    if (error !== null) return this.failWith(error);
    if (this.spans !== null) fieldSpans(this.spans, false, s, v.nameEnd, v.vs, v.ve, lineAbs, lineBytes);
    return true;
  }

  /** trailer-section: field lines checked like headers, then dropped (RFC 9112 §7.1.2). */
  private trailerLine(buf: Buffer, s: number, e: number, lineBytes: number, lineAbs: number): boolean {
    if (s === e) {
      this.emit("trailer-end", lineAbs, lineAbs + lineBytes);
      this.complete();
      return !this.closed;
    }
    if (!this.countField(s, lineBytes, "trailer")) return false;
    // Trailers never reach the request: a trailer cannot rewrite Content-Length or Host.
    const v = this.bounds;
    const error = this.judge.fieldParts(buf, e, v);
    if (error !== null) return this.failWith(error);
    if (this.spans !== null) fieldSpans(this.spans, true, s, v.nameEnd, v.vs, v.ve, lineAbs, lineBytes);
    return true;
  }

  /** The empty line: judge the framing (RFC 9112 §6.3) and hand the head on. */
  private endOfHead(at: number, lineAbs: number, lineBytes: number): boolean {
    // The line itself is sound: it is reported before the head it ends is judged, and refused, at its first byte.
    this.emit("blank-line", lineAbs, lineAbs + lineBytes);
    const verdict = judgeHead(this.fields, this.start.minor, this.limits);
    if ("code" in verdict) return this.fail(verdict.code, verdict.what, at);
    const framing = verdict.framing;
    const head = headOf(this.start, this.fields, verdict);
    this.head = head;
    this.bodyLimit = this.limits.maxBodyBytes;
    this.sink.onHead(head);
    if (this.closed) return false;
    if (framing.kind === "chunked") {
      this.state = State.ChunkSize;
      this.sectionBytes = 0;
      this.fieldCount = 0;
      this.body.reset(this.bodyLimit);
    } else if (framing.kind === "length") {
      // The handler may have lowered the limit for this request in onHead (limitBody).
      if (framing.length > this.bodyLimit) {
        return this.fail("CONTENT_TOO_LARGE", `Content-Length announces ${framing.length} bytes; ${head.path} takes at most ${this.bodyLimit}`, at);
      }
      this.state = State.FixedBody;
      this.remaining = framing.length;
      this.body.reset(framing.length);
    } else {
      this.complete();
    }
    return !this.closed;
  }

  // ---- Chunked body (RFC 9112 §7.1) ----

  private chunkSizeLine(buf: Buffer, s: number, e: number, lineAbs: number): boolean {
    const extensions = this.limits.maxChunkExtensionBytes;
    const read = readChunkSizeLine(buf, s, e, this.bodyLimit - this.body.length, this.bodyLimit, extensions - this.chunkExtensionBytes, extensions);
    if (isScanError(read)) return this.failWith(read);
    this.chunkExtensionBytes += e - read.digitsEnd;
    if (this.spans !== null) chunkSizeSpans(this.spans, s, read.digitsEnd, e, read.size === 0, lineAbs, this.consumed - lineAbs);
    if (read.size === 0) {
      this.state = State.TrailerLine;
    } else {
      this.state = State.ChunkData;
      this.remaining = read.size;
    }
    return true;
  }

  // ---- Completion, errors, carry ----

  private complete(): void {
    const head = this.head!;
    const request: Request = this.body.length === 0 ? head : { ...head, body: this.body.take() };
    this.reset();
    // RFC 9112 §9.6: nothing after a request that closes the connection is read.
    this.state = head.keepAlive ? State.RequestLine : State.Closed;
    this.sink.onRequest(request);
  }

  private reset(): void {
    this.start = NO_REQUEST_LINE;
    this.msgBytes = 0;
    this.leadingEmptyLines = 0;
    resetHeadFields(this.fields);
    this.fieldCount = 0;
    this.sectionBytes = 0;
    this.head = null;
    this.remaining = 0;
    this.body.reset(0);
    this.chunkExtensionBytes = 0;
  }

  private failWith(error: ScanError): false {
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

  /** See line-judge.ts. Returns false after reporting an error. */
  private checkLineSoFar(buf: Buffer, s: number, n: number, piece: LinePiece): boolean {
    const error = this.judge.judge(buf, s, n, piece, this.lineKind(), this.lineRoom(), this.fieldCount, this.fields.contentLength !== -1);
    return error === null || this.failWith(error);
  }

  private lineKind(): LineKind {
    const state = this.state;
    return state === State.RequestLine ? "request-line" : state === State.HeaderLine ? "header-line" : state === State.TrailerLine ? "trailer-line" : "chunk-size-line";
  }

  /** How many bytes the line being read may hold before it breaks a limit. */
  private lineRoom(): number {
    const limits = this.limits;
    switch (this.state) {
      case State.RequestLine:
        return limits.maxRequestLineBytes;
      case State.HeaderLine:
      case State.TrailerLine:
        return limits.maxHeaderBytes - this.sectionBytes;
      default:
        return MAX_CHUNK_SIZE_DIGITS + 2 + limits.maxChunkExtensionBytes - this.chunkExtensionBytes;
    }
  }
}
