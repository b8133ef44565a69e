// One connection's trace: every part of every request as the parser reported
// it (its spans, src/http/parse/spans.ts), its decisions, and every response as the
// connection wrote it, one line each, CR LF made visible.
//
//   #1 > 0-28 request-line  GET /api/v2/status HTTP/1.1\r\n
//   #1 >        method GET, target /api/v2/status, version HTTP/1.1
//   #1 * framing: Neither Content-Length nor Transfer-Encoding: ...
//   #1 < HTTP/1.1 200 OK\r\n
//   #1 ! INVALID_FIELD_VALUE at byte 44 (byte 3 of request 2): ...
//
// `>` is what the client sent, `<` what the server wrote, `*` a decision,
// `!` a broken rule. The bytes a span points into are kept only until the
// span has been printed, and of a body only the first `bodyBytes`.

import { PROTOCOL_ERRORS, type ProtocolError } from "../http/parse/errors.js";
import type { Request, RequestHead } from "../http/message/request.js";
import type { SpanKind } from "../http/parse/spans.js";
import { SpanParts } from "../http/parse/span-parts.js";
import type { ConnectionTrace } from "../http/connection/trace-hook.js";
import { closesAfter, framingOf, keepAliveOf, versionNote } from "../wire/explain.js";
import { bodyPrefix, bodyText, headText, painter, proseText, type Paint } from "./text.js";

export interface TracerOptions {
  /** Where the lines go (whole lines, each ending in "\n"). */
  readonly write: (text: string) => void;
  readonly paint: Paint;
  /** Bytes of each body shown; the rest is counted. */
  readonly bodyBytes: number;
}

const LF = 0x0a;
/** Columns of a part's byte range and of its kind, so that the bytes line up. */
const RANGE = 11;
const KIND = 15;
const DETAIL = " ".repeat(RANGE + 1 + KIND + 1);
const PLAIN = painter(false);

export class Tracer implements ConnectionTrace {
  private readonly prefix: string;
  private readonly o: TracerOptions;
  /** Bytes received and not yet printed: `kept` holds the stream's bytes from offset `base`. */
  private kept: Buffer[] = [];
  private base = 0;
  private received_ = 0;
  /** The parts inside the line being read, and where the parser found an error. */
  private readonly inLine = new SpanParts();
  /** Body or chunk data being received: where it starts (-1: none), its first bytes, its length so far. */
  private pieceStart = -1;
  private pieceKind: "body" | "chunk-data" = "body";
  private piece: Buffer[] = [];
  private pieceShown = 0;
  private pieceEnd = 0;
  /** What the head (Content-Length) or the chunk-size line announced. */
  private pieceWant = 0;
  /** Heads accepted so far, and whether the last one's body is still being read. */
  private requests = 0;
  private inBody = false;
  /** The request a protocol error refused (numbered as the error line numbers it), or one answered from its head; 0 if none. */
  private refused = 0;

  constructor(label: string, options: TracerOptions) {
    this.prefix = label;
    this.o = options;
  }

  private line(sign: ">" | "<" | "*" | "!", text: string): void {
    const p = this.o.paint;
    const tone = sign === ">" ? "cyan" : sign === "<" ? "green" : sign === "*" ? "yellow" : "red";
    this.o.write(`${p("dim", this.prefix)} ${p(tone, sign)} ${text}\n`);
  }

  // ---- The bytes ----

  received(chunk: Buffer): void {
    this.kept.push(chunk);
    this.received_ += chunk.length;
  }

  /** Stream bytes [start, end), as far as they are kept. */
  private bytes(start: number, end: number): Buffer {
    const parts: Buffer[] = [];
    let at = this.base;
    for (const chunk of this.kept) {
      const from = Math.max(start, at);
      const to = Math.min(end, at + chunk.length);
      if (from < to) parts.push(chunk.subarray(from - at, to - at));
      at += chunk.length;
      if (at >= end) break;
    }
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  }

  /** Everything before `offset` has been printed: let go of it. */
  private release(offset: number): void {
    while (this.kept.length > 0 && this.base + this.kept[0]!.length <= offset) this.base += this.kept.shift()!.length;
  }

  // ---- Spans ----

  span(kind: SpanKind, start: number, end: number): void {
    if (this.inLine.note(kind, start, end)) return;
    switch (kind) {
      case "body":
      case "chunk-data":
        this.take(kind, start, end);
        return;
      default:
        this.lineSpan(kind, start, end);
    }
  }

  /** A part of the request: its byte range, its kind (the parser's name for it), its bytes. */
  private part(start: number, end: number, kind: string, text: string): void {
    const range = end > start ? `${start}-${end - 1}` : `${start}`;
    this.line(">", `${this.o.paint("dim", range.padEnd(RANGE))} ${kind.padEnd(KIND)} ${text}`);
  }

  private detail(text: string): void {
    this.line(">", DETAIL + this.o.paint("dim", text));
  }

  private lineSpan(kind: SpanKind, start: number, end: number): void {
    if (kind === "chunk-end") this.flushPiece();
    // The parts inside a line, escaped too: an extension or a trailer may hold tabs and bytes over 0x7f.
    const text = (s: number, e: number) => headText(this.bytes(s, e), PLAIN).text;
    this.part(start, end, kind, headText(this.bytes(start, end), this.o.paint).text);
    if (kind === "request-line") {
      this.detail(`method ${text(this.inLine.s1, this.inLine.e1)}, target ${text(this.inLine.s2, this.inLine.e2)}, version ${versionNote(text(this.inLine.s3, this.inLine.e3))}`);
    } else if (kind === "chunk-size-line" || kind === "last-chunk") {
      const hex = text(this.inLine.s1, this.inLine.e1);
      const ext = this.inLine.s2 < 0 ? "" : `; extension ${text(this.inLine.s2, this.inLine.e2)} (ignored)`;
      this.pieceWant = parseInt(hex, 16);
      this.detail(`0x${hex} = ${this.pieceWant} bytes${kind === "last-chunk" ? ": the last chunk" : ""}${ext}`);
    } else if (kind === "trailer-line") {
      this.detail("a trailer field: parsed and dropped");
    }
    // The line is kept until the next one: a head refused as a whole is refused at its blank line, shown again then.
    this.release(start);
  }

  /** A piece of body or chunk data: its first bytes are copied, the rest only counted. */
  private take(kind: "body" | "chunk-data", start: number, end: number): void {
    if (this.pieceStart < 0) {
      this.pieceStart = start;
      this.pieceKind = kind;
      this.pieceShown = 0;
    }
    const want = Math.min(end - start, this.o.bodyBytes - this.pieceShown);
    if (want > 0) {
      this.piece.push(Buffer.from(this.bytes(start, start + want)));
      this.pieceShown += want;
    }
    this.pieceEnd = end;
    this.release(end);
  }

  private flushPiece(): void {
    if (this.pieceStart < 0) return;
    const p = this.o.paint;
    const total = this.pieceEnd - this.pieceStart;
    const shown = Buffer.concat(this.piece);
    const more = total > shown.length ? ` ... (${total - shown.length} more bytes)` : "";
    const size = total === this.pieceWant ? `${total} bytes` : `${total} of the ${this.pieceWant} bytes announced`;
    this.part(this.pieceStart, this.pieceEnd, this.pieceKind, `${bodyText(shown, p)}${p("dim", `${more}  (${size})`)}`);
    this.pieceStart = -1;
    this.piece = [];
  }

  // ---- Verdicts ----

  head(head: RequestHead): void {
    this.requests++;
    this.inBody = head.framing.kind !== "none";
    if (head.framing.kind === "length") this.pieceWant = head.framing.length;
    const framing = framingOf(head);
    const keepAlive = keepAliveOf(head);
    this.line("*", `request ${this.requests}: framing ${framing.kind}${framing.length === undefined ? "" : ` ${framing.length}`}: ${framing.reason}`);
    this.line("*", `request ${this.requests}: ${keepAlive.value ? "keep-alive" : "close"}: ${keepAlive.reason}`);
    if (head.expectContinue && head.framing.kind !== "none") this.line("*", `request ${this.requests}: Expect: 100-continue: a 100 Continue is owed before the body (RFC 9110 §10.1.1)`);
  }

  refusedFromHead(): void {
    this.inBody = false;
    this.refused = this.requests;
    this.line("*", `request ${this.requests}: answered from its head alone: its body, and all after it, is never read, and the connection closes after the answer`);
  }

  request(request: Request): void {
    this.flushPiece();
    this.inBody = false;
    this.line("*", `request ${this.requests} complete: ${request.method} ${headText(Buffer.from(request.target, "latin1"), this.o.paint).text}, ${request.body.length} body bytes, to the handler`);
  }

  error(error: ProtocolError): void {
    this.flushPiece();
    const p = this.o.paint;
    const kind = PROTOCOL_ERRORS[error.code];
    const at = this.inLine.errorAt;
    this.inLine.errorAt = -1;
    // In the body of the last request whose head was read, or in the head of the next one.
    const request = this.inBody ? this.requests : this.requests + 1;
    this.refused = request;
    const where = at < 0 ? ` in request ${request}` : ` at byte ${at} (byte ${error.offset} of request ${request})`;
    this.line("!", p("bold", `${error.code}${where}: ${error.status} ${kind.title} (${kind.rule})`));
    // The detail is what was found, then the rule and the fix (errors.ts): each on a line of its own.
    const tail = ` (${kind.rule}). ${kind.fix}`;
    this.line("!", `  ${proseText(error.detail.endsWith(tail) ? error.detail.slice(0, -tail.length) : error.detail)}`);
    this.line("!", `  fix: ${kind.fix}`);
    if (at >= 0) this.context(at);
  }

  /** The line of kept bytes that holds the byte at `at`, with a caret under it. */
  private context(at: number): void {
    const all = this.bytes(this.base, this.received_);
    const i = at - this.base;
    if (i < 0 || i >= all.length) return;
    // (lastIndexOf from -1 would search from the end.)
    const from = i === 0 ? 0 : all.lastIndexOf(LF, i - 1) + 1;
    const lf = all.indexOf(LF, i);
    const to = lf === -1 ? all.length : lf + 1;
    const shown = headText(all.subarray(from, to), this.o.paint, i - from);
    this.line("!", `  ${shown.text}`);
    this.line("!", `  ${" ".repeat(shown.markAt)}^ byte ${at}`);
  }

  response(head: string, body: string | Uint8Array | undefined, streamed: boolean): void {
    const p = this.o.paint;
    const lines = head.split("\r\n");
    // "A\r\nB\r\n\r\n" splits into A, B, "", "": every piece but the last ended with CR LF.
    for (let i = 0; i < lines.length - 1; i++) this.line("<", headText(Buffer.from(`${lines[i]}\r\n`, "latin1"), p).text);
    if (streamed) this.line("<", p("dim", "(a streamed body, sent in chunks as it is produced)"));
    else if (body !== undefined) {
      const { bytes, total } = bodyPrefix(body, this.o.bodyBytes);
      const more = total > bytes.byteLength ? p("dim", ` ... (${total - bytes.byteLength} more bytes)`) : "";
      this.line("<", `${bodyText(bytes, p)}${more}`);
    }
    const status = lines[0]!.slice(9, 12);
    if (status.startsWith("1")) this.line("*", `interim response ${status}: the final one follows`);
    else if (closesAfter(head)) this.line("*", `response ${status}: Connection: close, the connection closes after it (RFC 9112 §9.6)`);
    else this.line("*", `response ${status}: the connection stays open for the next request`);
  }

  closed(): void {
    this.flushPiece();
    // Heads read whole, and the request refused, if one was: "0 request heads"
    // alone, under an error in "request 1", reads as a contradiction.
    const heads = `${this.requests} request head${this.requests === 1 ? "" : "s"} read whole`;
    this.line("*", `connection closed after ${this.received_} bytes: ${heads}${this.refused > 0 ? `, request ${this.refused} refused` : ""}`);
    this.kept = [];
  }
}
