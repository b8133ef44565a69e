// The parts inside the line being read, gathered from the parser's spans for
// whoever assembles them into lines (the wire view, the terminal trace): the
// parts come before the line that holds them (spans.ts), so a listener keeps
// them here until the line's own span arrives, and then reads them.

import type { SpanKind } from "./spans.js";

export class SpanParts {
  /** The first part: method, field-name, trailer-name or chunk-size. */
  s1 = 0;
  e1 = 0;
  /** The second: target, field-value, trailer-value or chunk-extension; s2 is -1 when the line has none (a chunk without extension). */
  s2 = -1;
  e2 = -1;
  /** The third: the request line's version. */
  s3 = 0;
  e3 = 0;
  /** Where the parser found a rule broken, from its "error" span; -1 when it has not. */
  errorAt = -1;

  /** Keeps `kind` when it is a part inside a line (or the error mark) and says so; false for a line or a piece of body. */
  note(kind: SpanKind, start: number, end: number): boolean {
    switch (kind) {
      case "method":
      case "field-name":
      case "trailer-name":
      case "chunk-size":
        this.s1 = start;
        this.e1 = end;
        this.s2 = -1;
        return true;
      case "target":
      case "field-value":
      case "trailer-value":
      case "chunk-extension":
        this.s2 = start;
        this.e2 = end;
        return true;
      case "version":
        this.s3 = start;
        this.e3 = end;
        return true;
      case "error":
        this.errorAt = start;
        return true;
      default:
        return false;
    }
  }
}
