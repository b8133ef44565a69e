// The rules of a field section that no single line can judge by its bytes:
// how many field lines and bytes it may hold, a second Content-Length, the
// Host fields, and what a trailer section may hold. One function, asked at
// two moments of every field line (its colon, its end) and at the section's
// end; nothing else knows these rules. What the next line meets (the section
// is full; how many bytes it may still take) does not depend on that line, so
// the function says it once, when the line before it ends (`oneMore`, `room`),
// and the scanner reads it there: no call per line for a rule that changes
// once per line at most.

import type { ProtocolErrorCode } from "./errors.js";

/** A header or trailer section being read. */
export interface Section {
  trailer: boolean;
  /** Field lines taken so far, and their bytes (CR LF included). */
  fields: number;
  bytes: number;
  /**
   * The bytes the next field line may hold before its CR LF: what is left of
   * maxBytes once its CR LF is counted. The scanner refuses the first byte
   * past it (as "overflow", worded here). Said by sectionRule.
   */
  room: number;
  readonly maxFields: number;
  readonly maxBytes: number;
  /** A Content-Length field line was begun (header section only). */
  contentLength: boolean;
  /** Host field lines (header section only). */
  hosts: number;
  /** The request's HTTP minor version (RFC 9112 §3.2: 1.1 requires Host). */
  minor: 0 | 1;
  /** What one more field line meets at its first byte: null while the section may hold one. Said by sectionRule. */
  oneMore: Refused | null;
}

export function newSection(maxFields: number, maxBytes: number): Section {
  const section: Section = { trailer: false, fields: 0, bytes: 0, room: 0, maxFields, maxBytes, contentLength: false, hosts: 0, minor: 1, oneMore: null };
  section.oneMore = sectionRule(section, "field-start", "", 0);
  return section;
}

/** Start a section: the header section of a new request, or the trailer section of a chunked one. */
export function startSection(section: Section, trailer: boolean): void {
  section.trailer = trailer;
  section.fields = 0;
  section.bytes = 0;
  section.room = roomLeft(section);
  if (!trailer) {
    section.contentLength = false;
    section.hosts = 0;
  }
  section.oneMore = sectionRule(section, "field-start", "", 0);
}

/**
 * The moments of a field line the rules are asked at (strings, not an enum
 * from this file: outside the build, which inlines const enums
 * (tsconfig.build.json), an imported enum is a property load at every use):
 *   "field-start"  its first byte (not the CR of the blank line): asked by
 *                  this file when a section starts and when a line ends,
 *                  its answer kept in section.oneMore;
 *   "colon"        its colon: `name` is its name, lower-cased and, when
 *                  common, interned (interned-names.ts);
 *   "line-end"     it ended: `lineBytes` is its length, CR LF included;
 *   "overflow"     it grew past section.room: the refusal;
 *   "section-end"  the blank line that ends the section.
 */
export type Moment = "field-start" | "colon" | "line-end" | "overflow" | "section-end";

export interface Refused {
  readonly code: ProtocolErrorCode;
  readonly what: string;
}

/** Said at a colon: the value is a Content-Length's, read by its own phases. */
export const LENGTH_VALUE: Refused = Object.freeze({ code: "INVALID_CONTENT_LENGTH", what: "" });

/**
 * What the section says at this moment of a line: null (nothing against it),
 * LENGTH_VALUE, or a refusal. The per-line moments (colon, line-end) are a
 * few comparisons, and the refusals are worded out of line, so that the
 * scanner's compiler copies this function into its callers instead of
 * calling it twice per field line.
 */
export function sectionRule(section: Section, moment: Moment, name: string, lineBytes: number): Refused | null {
  switch (moment) {
    case "field-start":
      // RFC 9110 §5.4 lets a server bound a section: this one holds at most maxFields lines.
      return section.fields < section.maxFields ? null : tooManyFields(section);
    case "colon":
      // RFC 9112 §7.1.2: a trailer frames nothing and routes nothing: it is checked as a field line, then dropped.
      if (section.trailer) return null;
      if (name === "content-length") {
        // RFC 9110 §8.6: one Content-Length, one value.
        if (section.contentLength) return REPEATED_CONTENT_LENGTH;
        section.contentLength = true;
        return LENGTH_VALUE;
      }
      if (name === "host") section.hosts++;
      return null;
    case "line-end":
      section.bytes += lineBytes;
      section.room = roomLeft(section);
      // The answer to one more line changes only when the count reaches the bound.
      if (++section.fields === section.maxFields) section.oneMore = tooManyFields(section);
      return null;
    case "overflow":
      return tooLarge(section);
    case "section-end":
      if (section.trailer) return null;
      // RFC 9112 §3.2: exactly one Host in an HTTP/1.1 request; at most one in 1.0.
      if (section.hosts > 1 || (section.hosts === 0 && section.minor === 1)) return hostCount(section);
      return null;
  }
}

const REPEATED_CONTENT_LENGTH: Refused = Object.freeze({ code: "REPEATED_CONTENT_LENGTH", what: "Content-Length is sent on more than one field line" });

function tooManyFields(section: Section): Refused {
  return { code: "TOO_MANY_HEADERS", what: section.trailer ? `The trailer section has more than ${section.maxFields} fields` : `The request has more than ${section.maxFields} header fields` };
}

/**
 * RFC 6585 §5: the section's bytes are bounded (431), every line counted with
 * its CR LF. A line that ends with LF alone (allowBareLf) is given room as if
 * it ended with CR LF: one byte less than it could take, for a rule that says
 * in one number what fits.
 */
function roomLeft(section: Section): number {
  return Math.max(0, section.maxBytes - section.bytes - 2);
}

function tooLarge(section: Section): Refused {
  return { code: "HEADERS_TOO_LARGE", what: `The ${section.trailer ? "trailer" : "header"} section is larger than ${section.maxBytes} bytes` };
}

function hostCount(section: Section): Refused {
  if (section.hosts > 1) return { code: "DUPLICATE_HOST", what: `The request carries ${section.hosts} Host fields` };
  return { code: "MISSING_HOST", what: "The HTTP/1.1 request has no Host field" };
}
