// The parser's account of the bytes, part by part, for whoever wants to show
// them (the wire view, the terminal trace): llhttp's callbacks, as byte ranges.
//
// Offsets count from the first byte the parser was fed. Spans named "...-line"
// include their CR LF; the parts inside a line (method, field-name, ...) do
// not, and are reported before the line that holds them. The lines and body
// pieces tile the bytes read, in order. An "error" span is empty: it marks the
// byte where a rule was broken, in the line or piece the parser refused (which
// gets no span of its own), or at the first byte of the blank line when the
// head as a whole is refused (no Host, conflicting framing, a body too large).
// Without a listener the parser makes no span at all.

export type SpanKind =
  /** An empty line before a request line, ignored (RFC 9112 §2.2). */
  | "empty-line"
  | "request-line"
  | "method"
  | "target"
  | "version"
  | "field-line"
  | "field-name"
  | "field-value"
  /** The empty line that ends the header section. */
  | "blank-line"
  /** Body bytes framed by Content-Length, as they arrive (one span per piece). */
  | "body"
  | "chunk-size-line"
  | "chunk-size"
  | "chunk-extension"
  /** Chunk data as it arrives (one span per piece), then the CR LF after it. */
  | "chunk-data"
  | "chunk-end"
  /** The zero-size chunk-size line that ends the chunks. */
  | "last-chunk"
  | "trailer-line"
  | "trailer-name"
  | "trailer-value"
  /** The empty line that ends a chunked message. */
  | "trailer-end"
  | "error";

export interface SpanListener {
  span(kind: SpanKind, start: number, end: number): void;
}

// The parts of each kind of line, for the parser. Indexes are into the buffer
// the line lies in; `lineAbs` is where the line starts in the stream.

/** A request line buf[s, e) (CR LF not included), and the whole line, lineBytes long. */
export function requestLineSpans(to: SpanListener, s: number, methodEnd: number, versionStart: number, e: number, lineAbs: number, lineBytes: number): void {
  const at = (i: number) => lineAbs + (i - s);
  to.span("method", at(s), at(methodEnd));
  to.span("target", at(methodEnd + 1), at(versionStart - 1));
  to.span("version", at(versionStart), at(e));
  to.span("request-line", lineAbs, lineAbs + lineBytes);
}

/** A header or trailer field line starting at buf[s]: its name, its value without OWS, and the whole line. */
export function fieldSpans(to: SpanListener, trailer: boolean, s: number, nameEnd: number, vs: number, ve: number, lineAbs: number, lineBytes: number): void {
  const at = (i: number) => lineAbs + (i - s);
  to.span(trailer ? "trailer-name" : "field-name", at(s), at(nameEnd));
  to.span(trailer ? "trailer-value" : "field-value", at(vs), at(ve));
  to.span(trailer ? "trailer-line" : "field-line", lineAbs, lineAbs + lineBytes);
}

/** A chunk-size line buf[s, e) (CR LF not included): the size, the extensions if any, and the whole line. */
export function chunkSizeSpans(to: SpanListener, s: number, digitsEnd: number, e: number, last: boolean, lineAbs: number, lineBytes: number): void {
  const at = (i: number) => lineAbs + (i - s);
  to.span("chunk-size", at(s), at(digitsEnd));
  if (digitsEnd < e) to.span("chunk-extension", at(digitsEnd), at(e));
  to.span(last ? "last-chunk" : "chunk-size-line", lineAbs, lineAbs + lineBytes);
}
