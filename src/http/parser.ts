// The incremental HTTP/1.1 request parser (RFC 9112).
//
// Bytes go in through `feed`, in chunks of any size split anywhere; complete
// requests, or exactly one named error, come out through the sink. The parser
// is a small state machine over lines and body bytes:
//
//   RequestLine -> HeaderLine* -> (FixedBody | ChunkSize -> ChunkData -> ... -> TrailerLine*) -> RequestLine
//
// Lines are found with Buffer#indexOf (a native memchr) and checked byte by
// byte against the tables in chars.ts; strings are made once per token, never
// per byte. Only an unfinished line is ever copied (into `carry`, bounded by the
// limits below); body bytes are handed on as slices of the socket's chunks.
//
// Strict by default: anything RFC 9112 lets a server reject, it rejects, since
// every leniency is a place where this server and a proxy in front of it could
// disagree about where a request ends (request smuggling).

import { COLON, CR, FIELD_VALUE, HEX, HOST, HTAB, LF, QDTEXT, SEMICOLON, SP, TARGET, TCHAR } from "./chars.js";
import { BodyBuffer } from "./body-buffer.js";
import { protocolError, type ProtocolError, type ProtocolErrorCode } from "./errors.js";
import { describe, scanFieldLine, scanRequestLine, startScan, type LineScan, type ScanError } from "./line-scan.js";
import { listElements, trimOws } from "./lists.js";
import { fieldName, methodName } from "./names.js";
import type { Framing, Request, RequestHead } from "./request.js";

export interface ParserLimits {
  /** Longest request line, CRLF excluded (414 when the target is what overflows). */
  readonly maxRequestLineBytes: number;
  /** Largest header section (all field lines with their CRLFs); also bounds the trailer section. */
  readonly maxHeaderBytes: number;
  /** Most field lines in the header section; also bounds the trailer section. */
  readonly maxHeaderCount: number;
  /** Largest body, checked against Content-Length before any body byte is read. */
  readonly maxBodyBytes: number;
  /** Most bytes of chunk extensions in one message (they are ignored, RFC 9112 §7.1.1). */
  readonly maxChunkExtensionBytes: number;
  /** Accept a bare LF as a line ending (RFC 9112 §2.2 permits it); off unless asked for. */
  readonly allowBareLf: boolean;
}

export const DEFAULT_LIMITS: ParserLimits = {
  maxRequestLineBytes: 8 * 1024,
  maxHeaderBytes: 16 * 1024,
  maxHeaderCount: 100,
  maxBodyBytes: 1024 * 1024,
  maxChunkExtensionBytes: 4 * 1024,
  allowBareLf: false,
};

export interface ParserSink {
  /** The head is complete and valid; the body (if any) follows. */
  onHead(head: RequestHead): void;
  /** The whole request has arrived. */
  onRequest(request: Request): void;
  /** The bytes broke a rule; the parser accepts nothing more. */
  onError(error: ProtocolError): void;
}

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

const EMPTY = Buffer.alloc(0);
const NO_BODY: Framing = { kind: "none" };
const CHUNKED: Framing = { kind: "chunked" };
/** Empty lines tolerated before a request line (RFC 9112 §2.2 asks for at least one). */
const MAX_LEADING_EMPTY_LINES = 8;
/** Hex digits in a chunk size before it is certainly larger than any body limit. */
const MAX_CHUNK_SIZE_DIGITS = 12;
/** Decimal digits in a Content-Length before it is certainly larger than any body limit. */
const MAX_LENGTH_DIGITS = 15;
const COMMA = 0x2c;
const EQUALS = 0x3d;
const DQUOTE = 0x22;
const BACKSLASH = 0x5c;

export class RequestParser {
  private state = State.RequestLine;
  private readonly limits: ParserLimits;
  private readonly sink: ParserSink;

  /** An unfinished line carried over to the next chunk. */
  private carry: Buffer | null = null;
  private carryLen = 0;
  /** How far the unfinished line has been judged (line-scan.ts), so each byte is looked at once. */
  private readonly partialScan: LineScan = { phase: 0, at: 0, count: 0, mark: 0 };
  /** The same judgement for a line that arrived whole. */
  private readonly wholeScan: LineScan = { phase: 0, at: 0, count: 0, mark: 0 };

  /**
   * While paused, bytes not yet parsed wait here (a slice of the caller's
   * chunk, not a copy); the connection pauses the parser when responses back
   * up, so one large chunk of pipelined requests cannot queue up work without bound.
   */
  private paused = false;
  private running = false;
  private pending: Buffer | null = null;

  /** Bytes of the current message before the line being parsed (for error offsets). */
  private msgBytes = 0;
  private lineBase = 0;
  private lineStart = 0;
  private leadingEmptyLines = 0;

  // The head being assembled.
  private method = "";
  private target = "";
  private path = "";
  private query = "";
  private minor: 0 | 1 = 1;
  private absoluteHost: string | null = null;
  private fields: string[] = [];
  private fieldCount = 0;
  private sectionBytes = 0;
  private hostCount = 0;
  private host = "";
  private contentLength = -1;
  private transferEncoding: string | null = null;
  private connectionClose = false;
  private connectionKeepAlive = false;
  private expect: string | null = null;
  private head: Request | null = null;

  // The body being received.
  private remaining = 0;
  private readonly body = new BodyBuffer();
  /** This request's body limit: the server's, or less where the handler said so in onHead. */
  private bodyLimit = 0;
  private chunkExtensionBytes = 0;

  constructor(sink: ParserSink, limits: ParserLimits = DEFAULT_LIMITS) {
    this.sink = sink;
    this.limits = limits;
  }

  /** True between requests: no byte of a next request has arrived yet. */
  get idle(): boolean {
    return this.state === State.RequestLine && this.carryLen === 0 && this.msgBytes === 0 && this.pending === null;
  }

  /** True once the parser has stopped accepting bytes (error, or a closing request done). */
  get closed(): boolean {
    return this.state === State.Closed;
  }

  /** Method and target of the request being read, "" before its request line is complete. */
  get current(): { readonly method: string; readonly target: string } {
    return { method: this.method, target: this.target };
  }

  /** Stop reading: every later byte is ignored (used on timeouts and shutdown). */
  stop(): void {
    this.state = State.Closed;
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
    if (this.state === State.Closed || chunk.length === 0) return;
    if (this.paused) {
      this.pending = this.pending === null ? chunk : Buffer.concat([this.pending, chunk]);
      return;
    }
    let pos = 0;
    if (this.carryLen > 0) {
      const lf = chunk.indexOf(LF);
      if (lf === -1) {
        this.appendCarry(chunk, 0, chunk.length);
        this.checkPartialLine();
        return;
      }
      this.appendCarry(chunk, 0, lf + 1);
      const line = this.carry!;
      const length = this.carryLen;
      this.carry = null;
      this.carryLen = 0;
      if (!this.line(line, 0, length - 1)) return;
      pos = lf + 1;
    }
    this.run(chunk, pos);
  }

  /** Stop after the request being completed; later bytes wait for resume(). */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    if (this.running || this.pending === null) return;
    const pending = this.pending;
    this.pending = null;
    this.feed(pending);
  }

  private run(buf: Buffer, pos: number): void {
    this.running = true;
    try {
      this.loop(buf, pos);
    } finally {
      this.running = false;
    }
  }

  private loop(buf: Buffer, pos: number): void {
    const len = buf.length;
    while (pos < len) {
      if (this.paused) {
        if (this.state !== State.Closed) this.pending = buf.subarray(pos);
        return;
      }
      switch (this.state) {
        case State.RequestLine:
        case State.HeaderLine:
        case State.ChunkSize:
        case State.TrailerLine: {
          const lf = buf.indexOf(LF, pos);
          if (lf === -1) {
            this.appendCarry(buf, pos, len);
            this.checkPartialLine();
            return;
          }
          if (!this.line(buf, pos, lf)) return;
          pos = lf + 1;
          break;
        }
        case State.FixedBody:
        case State.ChunkData: {
          const n = Math.min(this.remaining, len - pos);
          this.body.append(buf, pos, pos + n);
          this.msgBytes += n;
          this.remaining -= n;
          pos += n;
          if (this.remaining === 0) {
            if (this.state === State.FixedBody) this.complete();
            else this.state = State.ChunkDataCr;
          }
          break;
        }
        case State.ChunkDataCr: {
          // RFC 9112 §7.1: chunk-data is followed by CRLF, exactly.
          const b = buf[pos]!;
          if (b === CR) this.state = State.ChunkDataLf;
          else if (b === LF && this.limits.allowBareLf) this.state = State.ChunkSize;
          else {
            this.failAt("INVALID_CHUNK_END", `Expected CR LF after the chunk data, found ${describe(b)}`, this.msgBytes);
            return;
          }
          this.msgBytes++;
          pos++;
          break;
        }
        case State.ChunkDataLf: {
          if (buf[pos] !== LF) {
            this.failAt("BARE_CR", "A CR after the chunk data was not followed by LF", this.msgBytes);
            return;
          }
          this.state = State.ChunkSize;
          this.msgBytes++;
          pos++;
          break;
        }
        case State.Closed:
          return;
      }
    }
  }

  /** One line, buf[start, lf) with lf at the LF. Returns false when parsing must stop. */
  private line(buf: Buffer, start: number, lf: number): boolean {
    this.lineBase = this.msgBytes;
    this.lineStart = start;
    // The checks an unfinished line gets come first, so that a line's verdict
    // does not depend on whether it arrived whole or in pieces.
    if (!this.checkLineSoFar(buf, start, lf, false)) return false;
    let end = lf;
    if (lf > start && buf[lf - 1] === CR) end = lf - 1;
    else if (!this.limits.allowBareLf) {
      this.fail("BARE_LF", "A line of the request head ended with LF alone", lf);
      return false;
    }
    this.msgBytes += lf + 1 - start;
    switch (this.state) {
      case State.RequestLine:
        return this.requestLine(buf, start, end);
      case State.HeaderLine:
        return this.headerLine(buf, start, end, lf + 1 - start);
      case State.ChunkSize:
        return this.chunkSizeLine(buf, start, end);
      case State.TrailerLine:
        return this.trailerLine(buf, start, end, lf + 1 - start);
      default:
        return false;
    }
  }

  // ---- Request line: method SP request-target SP HTTP-version (RFC 9112 §3) ----

  private requestLine(buf: Buffer, s: number, e: number): boolean {
    if (s === e) {
      // RFC 9112 §2.2: ignore empty lines received before the request line.
      if (++this.leadingEmptyLines > MAX_LEADING_EMPTY_LINES) {
        return this.fail("INVALID_REQUEST_LINE", "Too many empty lines before the request line", s);
      }
      this.msgBytes = 0;
      return true;
    }
    if (e - s > this.limits.maxRequestLineBytes) return this.requestLineTooLong(buf, s, s + this.limits.maxRequestLineBytes + 1);

    let i = s;
    while (i < e && TCHAR[buf[i]!] === 1) i++;
    if (i === s) {
      return buf[s] === SP || buf[s] === HTAB
        ? this.fail("INVALID_REQUEST_LINE", "The request line starts with whitespace", s)
        : this.badByte("INVALID_METHOD", "the method", buf, s);
    }
    if (i === e) return this.fail("INVALID_REQUEST_LINE", "The request line ends after the method", i);
    if (buf[i] !== SP) {
      return buf[i] === HTAB
        ? this.fail("INVALID_REQUEST_LINE", "A tab separates the method from the target; use a single space", i)
        : this.badByte("INVALID_METHOD", "the method", buf, i);
    }
    const methodEnd = i;

    const targetStart = ++i;
    while (i < e && TARGET[buf[i]!] === 1) i++;
    if (i === targetStart) {
      return buf[i] === SP || i === e
        ? this.fail("INVALID_REQUEST_LINE", "The request target is empty or preceded by more than one space", i)
        : this.badByte("INVALID_TARGET", "the request target", buf, i);
    }
    if (i === e) {
      return this.fail("INVALID_REQUEST_LINE", "The request line has no HTTP version (HTTP/0.9 requests are not served)", i);
    }
    if (buf[i] !== SP) return this.badByte("INVALID_TARGET", "the request target", buf, i);
    const targetEnd = i;

    // RFC 9112 §2.3: HTTP-version = "HTTP/" DIGIT "." DIGIT, case-sensitive.
    const v = i + 1;
    if (
      e - v !== 8 ||
      buf[v] !== 0x48 || buf[v + 1] !== 0x54 || buf[v + 2] !== 0x54 || buf[v + 3] !== 0x50 || buf[v + 4] !== 0x2f ||
      !isDigit(buf[v + 5]!) || buf[v + 6] !== 0x2e || !isDigit(buf[v + 7]!)
    ) {
      const cr = buf.indexOf(CR, v);
      if (cr !== -1 && cr < e) return this.fail("BARE_CR", "A CR appears inside the request line", cr);
      if (buf[v] === SP) return this.fail("INVALID_REQUEST_LINE", "More than one space before the HTTP version", v);
      // RFC 9112 §3: exactly three parts. A space here is a space inside the target, or text after the version.
      const sp = buf.indexOf(SP, v);
      if (sp !== -1 && sp < e) {
        return this.fail("INVALID_REQUEST_LINE", "The request line has more than three space-separated parts (a space in the target must be sent as %20)", sp);
      }
      return this.fail("INVALID_VERSION", `"${buf.toString("latin1", v, Math.min(e, v + 16))}" is not an HTTP version`, v);
    }
    const major = buf[v + 5]! - 0x30;
    if (major !== 1) {
      return this.fail("VERSION_NOT_SUPPORTED", `The request asks for HTTP/${major}.${buf[v + 7]! - 0x30}`, v);
    }
    // RFC 9112 §2.3: a higher minor version of 1.x is answered as 1.1.
    this.minor = buf[v + 7] === 0x30 ? 0 : 1;

    this.method = methodName(buf, s, methodEnd);
    return this.requestTarget(buf, targetStart, targetEnd);
  }

  /** RFC 9112 §3.2: origin-form, absolute-form, asterisk-form; authority-form is CONNECT's alone. */
  private requestTarget(buf: Buffer, s: number, e: number): boolean {
    const target = buf.toString("latin1", s, e);
    this.target = target;
    this.absoluteHost = null;
    // RFC 9110 §9.3.6: this origin server opens no tunnels, whatever form the CONNECT target takes.
    if (this.method === "CONNECT") return this.fail("CONNECT_NOT_SUPPORTED", `CONNECT ${target.slice(0, 64)} asks for a tunnel`, s);
    if (buf[s] === 0x2f /* "/" */) {
      const q = target.indexOf("?");
      this.path = q === -1 ? target : target.slice(0, q);
      this.query = q === -1 ? "" : target.slice(q + 1);
    } else if (target === "*") {
      if (this.method !== "OPTIONS") {
        return this.fail("INVALID_TARGET", "The asterisk-form target `*` is only for OPTIONS", s);
      }
      this.path = "*";
      this.query = "";
    } else {
      // absolute-form (RFC 9112 §3.2.2): the server uses its authority, not the Host field.
      // RFC 9110 §4.2.1, §4.2.4: the authority is host [":" port], no userinfo, and the host is not empty;
      // what follows it is a path or a query.
      const m = /^https?:\/\/([^/?#@:]+(?::[0-9]*)?|\[[^/?#@\]]*\](?::[0-9]*)?)((?:[/?][^#]*)?)$/i.exec(target);
      if (m === null) {
        return this.fail("INVALID_TARGET", `"${target.slice(0, 64)}" is neither a path starting with "/" nor an http(s) URI`, s);
      }
      const rest = m[2]!;
      const q = rest.indexOf("?");
      const path = q === -1 ? rest : rest.slice(0, q);
      this.absoluteHost = m[1]!;
      this.path = path === "" ? "/" : path;
      this.query = q === -1 ? "" : rest.slice(q + 1);
    }
    this.state = State.HeaderLine;
    return true;
  }

  /** Which part overflowed, judged from buf[s, e): the first limit + 1 bytes of the line, however many have arrived. */
  private requestLineTooLong(buf: Buffer, s: number, e: number): boolean {
    const limit = this.limits.maxRequestLineBytes;
    const sp1 = buf.indexOf(SP, s);
    const sp2 = sp1 === -1 || sp1 >= e ? -1 : buf.indexOf(SP, sp1 + 1);
    if (sp1 !== -1 && sp1 < e && (sp2 === -1 || sp2 >= e || sp2 - sp1 > limit / 2)) {
      return this.fail("URI_TOO_LONG", `The request target is longer than this server's limit (request line: ${limit} bytes)`, sp1 + 1);
    }
    return this.fail("REQUEST_LINE_TOO_LONG", `The request line is longer than ${limit} bytes`, s);
  }

  // ---- Header section: field-name ":" OWS field-value OWS (RFC 9112 §5) ----

  private headerLine(buf: Buffer, s: number, e: number, lineBytes: number): boolean {
    if (s === e) return this.endOfHead(buf, s);
    this.sectionBytes += lineBytes;
    if (this.sectionBytes > this.limits.maxHeaderBytes) {
      return this.fail("HEADERS_TOO_LARGE", `The header section is larger than ${this.limits.maxHeaderBytes} bytes`, s);
    }
    if (++this.fieldCount > this.limits.maxHeaderCount) {
      return this.fail("TOO_MANY_HEADERS", `The request has more than ${this.limits.maxHeaderCount} header fields`, s);
    }
    const nameEnd = this.fieldLine(buf, s, e);
    if (nameEnd === -1) return false;
    const name = fieldName(buf, s, nameEnd);
    const vs = this.valueStart;
    const ve = this.valueEnd;
    const value = vs === ve ? "" : buf.toString("latin1", vs, ve);
    this.fields.push(name, value);
    switch (name) {
      case "host":
        this.hostCount++;
        {
          // RFC 9112 §3.2: a Host field with an invalid value MUST be answered with 400.
          const bad = hostError(buf, vs, ve);
          if (bad !== -1) return this.fail("INVALID_HOST", `Unexpected ${bad < ve ? describe(buf[bad]) : "end of the value"} in the Host header`, bad);
        }
        this.host = value;
        return true;
      case "content-length":
        return this.contentLengthField(buf, vs, ve);
      case "transfer-encoding":
        // Several field lines form one list (RFC 9110 §5.3); judged whole at the end of the head.
        this.transferEncoding = this.transferEncoding === null ? value : `${this.transferEncoding},${value}`;
        return true;
      case "connection":
        // RFC 9110 §7.6.1: Connection = #connection-option, each a token. Anything
        // else (say "close\xA0") is refused, not guessed at: a proxy would not read it as close.
        for (const option of listElements(value)) {
          if (!isToken(option)) return this.fail("INVALID_CONNECTION", `Connection holds "${option.slice(0, 40)}", which is not a token`, vs);
          const o = option.toLowerCase();
          if (o === "close") this.connectionClose = true;
          else if (o === "keep-alive") this.connectionKeepAlive = true;
        }
        return true;
      case "expect":
        this.expect = this.expect === null ? value : `${this.expect}, ${value}`;
        return true;
      default:
        return true;
    }
  }

  private valueStart = 0;
  private valueEnd = 0;

  /**
   * Checks one field line (header or trailer) and returns where its name ends,
   * or -1 after reporting the error. The value's bounds, without the optional
   * whitespace around it, are left in valueStart/valueEnd.
   */
  private fieldLine(buf: Buffer, s: number, e: number): number {
    const first = buf[s]!;
    if (first === SP || first === HTAB) {
      // RFC 9112 §5.2 (obs-fold) and §2.2 (whitespace before the first field): both rejected.
      this.fail("OBS_FOLD", "A header line starts with whitespace", s);
      return -1;
    }
    let i = s;
    while (i < e && TCHAR[buf[i]!] === 1) i++;
    if (i === e) {
      this.fail("MISSING_COLON", `The header line "${buf.toString("latin1", s, Math.min(e, s + 40))}" has no colon`, i);
      return -1;
    }
    const c = buf[i]!;
    if (c !== COLON) {
      if ((c === SP || c === HTAB) && i > s) this.fail("WHITESPACE_BEFORE_COLON", `Whitespace follows the field name "${buf.toString("latin1", s, i)}"`, i);
      else this.badByte("INVALID_FIELD_NAME", "a field name", buf, i);
      return -1;
    }
    if (i === s) {
      this.fail("INVALID_FIELD_NAME", "A header line has an empty field name", s);
      return -1;
    }
    const nameEnd = i;
    i++;
    while (i < e && (buf[i] === SP || buf[i] === HTAB)) i++;
    let ve = e;
    while (ve > i && (buf[ve - 1] === SP || buf[ve - 1] === HTAB)) ve--;
    // Every byte of the value was checked against FIELD_VALUE by the line scan (checkLineSoFar).
    this.valueStart = i;
    this.valueEnd = ve;
    return nameEnd;
  }

  /**
   * RFC 9110 §8.6: Content-Length = 1*DIGIT. RFC 9112 §6.3 lets a recipient
   * take a list of identical values ("5, 5", or two lines of 5) as one, or
   * reject it; this server rejects any repetition (REPEATED_CONTENT_LENGTH),
   * since a proxy that picked the other reading is how requests get smuggled.
   */
  private contentLengthField(buf: Buffer, s: number, e: number): boolean {
    if (this.contentLength !== -1) {
      return this.fail("REPEATED_CONTENT_LENGTH", "Content-Length is sent on more than one field line", s);
    }
    let i = s;
    // Leading zeros do not make a length large, so they do not count as digits.
    while (i < e && buf[i] === 0x30) i++;
    const significant = i;
    let n = 0;
    while (i < e && isDigit(buf[i]!)) n = n * 10 + (buf[i++]! - 0x30);
    if (i === s) return this.fail("INVALID_CONTENT_LENGTH", "Content-Length does not start with a decimal digit", i);
    let j = i;
    while (j < e && (buf[j] === SP || buf[j] === HTAB)) j++;
    if (j < e && buf[j] === COMMA) return this.fail("REPEATED_CONTENT_LENGTH", "Content-Length holds a list of values", j);
    if (i < e) return this.fail("INVALID_CONTENT_LENGTH", `Content-Length holds ${describe(buf[i])} after its digits`, i);
    this.contentLength = i - significant > MAX_LENGTH_DIGITS ? Infinity : n;
    return true;
  }

  /** The empty line: judge the framing (RFC 9112 §6.3) and hand the head on. */
  private endOfHead(buf: Buffer, at: number): boolean {
    if (this.hostCount > 1) return this.fail("DUPLICATE_HOST", `The request carries ${this.hostCount} Host fields`, at);
    if (this.hostCount === 0 && this.minor === 1) return this.fail("MISSING_HOST", "The HTTP/1.1 request has no Host field", at);

    let framing: Framing = NO_BODY;
    if (this.transferEncoding !== null) {
      if (this.minor === 0) {
        return this.fail("TRANSFER_ENCODING_IN_HTTP10", `An HTTP/1.0 request carries Transfer-Encoding: ${this.transferEncoding}`, at);
      }
      if (this.contentLength !== -1) {
        return this.fail("CONTENT_LENGTH_WITH_TRANSFER_ENCODING", "The request carries both Transfer-Encoding and Content-Length", at);
      }
      const problem = judgeTransferEncoding(this.transferEncoding);
      if (problem !== null) return this.fail(problem, `Transfer-Encoding: ${this.transferEncoding.slice(0, 80)}`, at);
      framing = CHUNKED;
    } else if (this.contentLength > 0) {
      if (this.contentLength > this.limits.maxBodyBytes) {
        const size = Number.isFinite(this.contentLength) ? `${this.contentLength} bytes` : "more than 10^15 bytes";
        return this.fail("CONTENT_TOO_LARGE", `Content-Length announces ${size}; the limit is ${this.limits.maxBodyBytes} bytes`, at);
      }
      framing = { kind: "length", length: this.contentLength };
    }

    let expectContinue = false;
    if (this.expect !== null) {
      // RFC 9110 §10.1.1: the one expectation defined; OWS around it is SP and HTAB only.
      if (trimOws(this.expect).toLowerCase() !== "100-continue") {
        return this.fail("EXPECTATION_FAILED", `The request expects "${this.expect.slice(0, 60)}"`, at);
      }
      // RFC 9110 §10.1.1: an HTTP/1.0 request's 100-continue expectation is ignored.
      expectContinue = this.minor === 1;
    }

    // Built as a whole Request with an empty body, so a request without a body
    // (most of them) is handed on as this very object, with no copy.
    const head: Request = {
      method: this.method,
      target: this.target,
      path: this.path,
      query: this.query,
      minor: this.minor,
      fields: this.fields,
      host: this.absoluteHost ?? this.host,
      framing,
      // RFC 9112 §9.3: 1.1 persists unless "close"; 1.0 only when it asks for keep-alive.
      keepAlive: !this.connectionClose && (this.minor === 1 || this.connectionKeepAlive),
      expectContinue,
      body: EMPTY,
    };
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

  /** chunk-size [ chunk-ext ] CRLF */
  private chunkSizeLine(buf: Buffer, s: number, e: number): boolean {
    if (s === e) return this.fail("INVALID_CHUNK_SIZE", "A chunk-size line is empty", s);
    let i = s;
    // RFC 9112 §7.1: chunk-size = 1*HEXDIG; leading zeros add nothing to the size, so they do not count as digits.
    while (i < e && buf[i] === 0x30) i++;
    const significant = i;
    let size = 0;
    while (i < e && HEX[buf[i]!] !== 255) size = size * 16 + HEX[buf[i++]!]!;
    if (i === s) return this.badByte("INVALID_CHUNK_SIZE", "a chunk size", buf, i);
    if (i - significant > MAX_CHUNK_SIZE_DIGITS || this.body.length + size > this.bodyLimit) {
      return this.fail("CONTENT_TOO_LARGE", `The chunked body grows past the limit of ${this.bodyLimit} bytes`, s);
    }
    if (i < e) {
      this.chunkExtensionBytes += e - i;
      if (this.chunkExtensionBytes > this.limits.maxChunkExtensionBytes) {
        return this.fail("CHUNK_EXTENSIONS_TOO_LARGE", `Chunk extensions exceed ${this.limits.maxChunkExtensionBytes} bytes`, i);
      }
      // Bare CRs were ruled out by checkLineSoFar; bad === e is the end of the line, not a byte in it.
      const bad = chunkExtensionError(buf, i, e);
      if (bad !== -1) return this.fail("INVALID_CHUNK_EXTENSION", `Unexpected ${describe(bad < e ? buf[bad] : undefined)} in a chunk extension`, bad);
    }
    if (size === 0) {
      this.state = State.TrailerLine;
    } else {
      this.state = State.ChunkData;
      this.remaining = size;
    }
    return true;
  }

  /** trailer-section: field lines checked like headers, then dropped (RFC 9112 §7.1.2). */
  private trailerLine(buf: Buffer, s: number, e: number, lineBytes: number): boolean {
    if (s === e) {
      this.complete();
      return !this.closed;
    }
    this.sectionBytes += lineBytes;
    if (this.sectionBytes > this.limits.maxHeaderBytes) {
      return this.fail("HEADERS_TOO_LARGE", `The trailer section is larger than ${this.limits.maxHeaderBytes} bytes`, s);
    }
    if (++this.fieldCount > this.limits.maxHeaderCount) {
      return this.fail("TOO_MANY_HEADERS", `The trailer section has more than ${this.limits.maxHeaderCount} fields`, s);
    }
    // Trailers never reach the request: a trailer cannot rewrite Content-Length or Host.
    return this.fieldLine(buf, s, e) !== -1;
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
    this.method = "";
    this.target = "";
    this.msgBytes = 0;
    this.leadingEmptyLines = 0;
    this.fields = [];
    this.fieldCount = 0;
    this.sectionBytes = 0;
    this.hostCount = 0;
    this.host = "";
    this.contentLength = -1;
    this.transferEncoding = null;
    this.connectionClose = false;
    this.connectionKeepAlive = false;
    this.expect = null;
    this.head = null;
    this.remaining = 0;
    this.body.reset(0);
    this.chunkExtensionBytes = 0;
  }

  /** Report an error at index `at` of the line being parsed. Always returns false. */
  private fail(code: ProtocolErrorCode, what: string, at: number): boolean {
    return this.failAt(code, what, this.lineBase + (at - this.lineStart));
  }

  private failAt(code: ProtocolErrorCode, what: string, offset: number): false {
    this.stop();
    this.sink.onError(protocolError(code, what, offset));
    return false;
  }

  /** An unexpected byte: a CR is named as such, since a bare CR is the likelier mistake. */
  private badByte(code: ProtocolErrorCode, where: string, buf: Buffer, at: number): boolean {
    const b = buf[at];
    if (b === CR) return this.fail("BARE_CR", `A CR inside ${where} is not followed by LF`, at);
    return this.fail(code, `Unexpected ${describe(b)} in ${where}`, at);
  }

  private appendCarry(src: Buffer, start: number, end: number): void {
    if (this.carryLen === 0) this.startScan(this.partialScan, 0);
    const need = this.carryLen + (end - start);
    if (this.carry === null || need > this.carry.length) {
      const grown = Buffer.allocUnsafe(Math.max(need, 2 * (this.carry?.length ?? 0), 256));
      if (this.carry !== null) this.carry.copy(grown, 0, 0, this.carryLen);
      this.carry = grown;
    }
    src.copy(this.carry, this.carryLen, start, end);
    this.carryLen = need;
  }

  /** Limits apply to unfinished lines too, so a line that never ends cannot grow without bound. */
  private checkPartialLine(): void {
    this.lineBase = this.msgBytes;
    this.lineStart = 0;
    this.checkLineSoFar(this.carry!, 0, this.carryLen, true);
  }

  /**
   * Judges buf[s, n), a line or the start of one (no LF in it), by the two
   * rules that need no more bytes: a CR followed by anything but LF is a bare
   * CR (RFC 9112 §2.2), and a line may not outgrow its limit. Each is decided
   * by the earliest byte that shows it (the byte after the CR; the first byte
   * past the limit, unless that byte is a CR that may yet end the line), and
   * the earlier one wins. Unfinished lines and whole lines are judged by this
   * same function, so the verdict never depends on where the stream was cut.
   * Returns false after reporting an error.
   */
  private checkLineSoFar(buf: Buffer, s: number, n: number, partial: boolean): boolean {
    if (n <= s) return true;
    // With the line's own CR at n - 1 the search stops there; otherwise search only the line.
    let crAt: number;
    if (buf[n - 1] === CR) crAt = buf.indexOf(CR, s);
    else {
      const i = buf.subarray(s, n).indexOf(CR);
      crAt = i === -1 ? -1 : s + i;
    }
    const crShownBy = crAt !== -1 && crAt + 1 < n ? crAt + 1 : Infinity;
    const over = s + this.lineRoom();
    const overShownBy = over < n && buf[over] !== CR ? over : Infinity;
    // The syntax of the line so far; it stops at a CR, so it never looks past crAt.
    let scanned: ScanError | null = null;
    if (this.state === State.RequestLine || this.state === State.HeaderLine || this.state === State.TrailerLine) {
      let scan = this.partialScan;
      if (!partial) {
        scan = this.wholeScan;
        this.startScan(scan, s);
      }
      scanned = this.scanLine(buf, Math.min(n, over), scan);
    }
    if (scanned !== null && scanned.at < overShownBy) return this.fail(scanned.code, scanned.what, scanned.at);
    if (crShownBy === Infinity && overShownBy === Infinity) return true;
    if (crShownBy <= overShownBy) return this.fail("BARE_CR", "A CR is not followed by LF", crAt);
    const limits = this.limits;
    switch (this.state) {
      case State.RequestLine:
        return this.requestLineTooLong(buf, s, over + 1);
      case State.HeaderLine:
        return this.fail("HEADERS_TOO_LARGE", `The header section is larger than ${limits.maxHeaderBytes} bytes`, s);
      case State.TrailerLine:
        return this.fail("HEADERS_TOO_LARGE", `The trailer section is larger than ${limits.maxHeaderBytes} bytes`, s);
      default:
        return this.fail("CHUNK_EXTENSIONS_TOO_LARGE", `A chunk-size line is longer than the ${limits.maxChunkExtensionBytes}-byte extension limit allows`, s);
    }
  }

  private startScan(scan: LineScan, at: number): void {
    startScan(scan, this.state === State.RequestLine ? "request-line" : "field-line", at);
  }

  private scanLine(buf: Buffer, end: number, scan: LineScan): ScanError | null {
    if (this.state === State.RequestLine) return scanRequestLine(buf, end, scan);
    return scanFieldLine(buf, end, scan, {
      fields: this.fieldCount,
      maxFields: this.limits.maxHeaderCount,
      contentLengthSeen: this.contentLength !== -1,
      trailer: this.state === State.TrailerLine,
    });
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

/** RFC 9110 §5.6.2: token = 1*tchar. */
function isToken(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 0x7f || TCHAR[c] !== 1) return false;
  }
  return true;
}

function isDigit(b: number): boolean {
  return b >= 0x30 && b <= 0x39;
}


/**
 * Host = uri-host [ ":" port ] (RFC 9110 §7.2), where uri-host is an
 * IP-literal in brackets or a reg-name / IPv4 address, and port = *DIGIT
 * (RFC 3986 §3.2.2, §3.2.3). Returns the index of the first byte that breaks
 * it (ve when the value ends too soon), or -1.
 */
function hostError(buf: Buffer, vs: number, ve: number): number {
  let i = vs;
  if (i < ve && buf[i] === 0x5b /* "[" */) {
    i++;
    while (i < ve && buf[i] !== 0x5d /* "]" */) {
      if (HOST[buf[i]!] !== 1 || buf[i] === 0x5b) return i;
      i++;
    }
    if (i === ve) return ve;
    i++;
  } else {
    while (i < ve && HOST[buf[i]!] === 1 && buf[i] !== COLON && buf[i] !== 0x5b && buf[i] !== 0x5d) i++;
  }
  if (i < ve && buf[i] === COLON) {
    i++;
    while (i < ve && isDigit(buf[i]!)) i++;
  }
  return i === ve ? -1 : i;
}

/**
 * RFC 9112 §6.1 and §7: the only coding this server decodes is chunked, and on
 * a request it must be the final one, applied once. Returns what is wrong, or null.
 */
function judgeTransferEncoding(value: string): ProtocolErrorCode | null {
  const codings: string[] = [];
  // RFC 9110 §5.6.1: empty list elements do not count; OWS is SP and HTAB only,
  // so "chunked\xA0" is no token and is refused rather than read as chunked.
  for (const coding of listElements(value)) {
    if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+(?:[ \t]*;.*)?$/.test(coding)) return "INVALID_TRANSFER_ENCODING";
    codings.push(coding.toLowerCase());
  }
  if (codings.length === 0) return "INVALID_TRANSFER_ENCODING";
  // RFC 9112 §7: chunked at most once. "chunked, identity" applies it once, but not last: that is CHUNKED_NOT_FINAL.
  if (codings.indexOf("chunked") !== codings.lastIndexOf("chunked")) return "CHUNKED_TWICE";
  if (codings[codings.length - 1] !== "chunked") return "CHUNKED_NOT_FINAL";
  if (codings.length > 1) return "UNSUPPORTED_TRANSFER_CODING";
  return null;
}

/**
 * chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
 * (RFC 9112 §7.1.1). Returns the index of the first byte that breaks it, or -1.
 */
function chunkExtensionError(buf: Buffer, s: number, e: number): number {
  let i = s;
  const skipBws = () => {
    while (i < e && (buf[i] === SP || buf[i] === HTAB)) i++;
  };
  while (i < e) {
    skipBws();
    if (buf[i] !== SEMICOLON) return i;
    i++;
    skipBws();
    const nameStart = i;
    while (i < e && TCHAR[buf[i]!] === 1) i++;
    if (i === nameStart) return i;
    skipBws();
    if (i < e && buf[i] === EQUALS) {
      i++;
      skipBws();
      if (buf[i] === DQUOTE) {
        i++;
        for (;;) {
          if (i >= e) return i;
          const b = buf[i]!;
          if (b === DQUOTE) break;
          if (b === BACKSLASH) {
            i++;
            if (i >= e || FIELD_VALUE[buf[i]!] !== 1) return i;
          } else if (QDTEXT[b] !== 1) return i;
          i++;
        }
        i++;
      } else {
        const valueStart = i;
        while (i < e && TCHAR[buf[i]!] === 1) i++;
        if (i === valueStart) return i;
      }
    }
  }
  return -1;
}
