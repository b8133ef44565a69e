// The earliest byte that breaks a line: a resumable left-to-right scan of a
// request line or a field line, for a line that has not ended yet as much as
// for a whole one.
//
// Why: a client that sends `GET / HTTP/5.6`, a 25-digit Content-Length or a
// first field line starting with a space, and then never the CRLF, must be
// answered when the byte that rules out every valid message arrives, not
// when the headers timeout runs out (llhttp does the same). And because the
// same scan judges whole lines (all but the sound ones clean-line.ts reads,
// which this scan would pass), before the parser's line-end checks, a line's
// verdict (code, offset and detail) is the same however the stream was cut: the scan reports only what the bytes up to the offending one
// show, never anything that depends on later bytes.
//
// The scan stops at a CR: whether that CR ends the line or is a bare CR
// (RFC 9112 §2.2) is the next byte's to say, and the parser judges it.

import { COLON, CR, FIELD_VALUE, HTAB, SP, TARGET, TCHAR } from "./byte-classes.js";
import type { ProtocolErrorCode } from "./errors.js";

/** Where a scan stands; kept between the pieces of an unfinished line. */
export interface LineScan {
  /** One of the phases below. */
  phase: number;
  /** Index (into the buffer being scanned) of the next byte to look at. */
  at: number;
  /** Phase-dependent: the version byte reached, or significant Content-Length digits. */
  count: number;
  /** Where the part being scanned started (the version, the field name). */
  mark: number;
  /** Request line: the space after the method. Field line: the colon. */
  split: number;
}

/** A rule broken at one byte of a line (the parser turns it into a ProtocolError). */
export interface ScanError {
  readonly code: ProtocolErrorCode;
  readonly what: string;
  /** Index of the offending byte in the buffer scanned. */
  readonly at: number;
}

/** What a field line's verdict depends on besides its own bytes. */
export interface FieldContext {
  /** Field lines already in this section, and how many it may hold. */
  fields: number;
  readonly maxFields: number;
  /** A Content-Length was already seen (a second one is refused, RFC 9110 §8.6). */
  contentLengthSeen: boolean;
  /** Content-Length in a trailer section frames nothing: its value is not judged here. */
  trailer: boolean;
}

/** Where a field line's name ends, and where its value lies without the OWS around it. */
export interface FieldBounds {
  nameEnd: number;
  vs: number;
  ve: number;
}

/** RFC 9112 §5: OWS before and after the value is not part of it; fills and returns `into`. */
export function fieldBounds(buf: Buffer, nameEnd: number, e: number, into: FieldBounds): FieldBounds {
  let vs = nameEnd + 1;
  while (vs < e && (buf[vs] === SP || buf[vs] === HTAB)) vs++;
  let ve = e;
  while (ve > vs && (buf[ve - 1] === SP || buf[ve - 1] === HTAB)) ve--;
  into.nameEnd = nameEnd;
  into.vs = vs;
  into.ve = ve;
  return into;
}

// Request line phases (RFC 9112 §3): method SP request-target SP HTTP-version.
const METHOD_FIRST = 0;
const METHOD = 1;
const TARGET_FIRST = 2;
const TARGET_REST = 3;
const VERSION = 4;
const AFTER_VERSION = 5;
// Field line phases (RFC 9112 §5): field-name ":" OWS field-value OWS.
const FIELD_FIRST = 10;
const FIELD_NAME = 11;
const FIELD_VALUE_BYTES = 12;
const LENGTH_LEADING_OWS = 13;
const LENGTH_DIGITS = 14;
const LENGTH_TRAILING_OWS = 15;

/** "HTTP/" DIGIT "." DIGIT (RFC 9112 §2.3); 0 stands for a digit. */
const VERSION_TEMPLATE = [0x48, 0x54, 0x54, 0x50, 0x2f, 0, 0x2e, 0];
/** Significant digits of a Content-Length past which it is larger than any body limit (10^15 bytes). */
export const MAX_LENGTH_DIGITS = 15;
const CONTENT_LENGTH = Buffer.from("content-length", "latin1");

export function startScan(scan: LineScan, kind: "request-line" | "field-line", at: number): void {
  scan.phase = kind === "request-line" ? METHOD_FIRST : FIELD_FIRST;
  scan.at = at;
  scan.count = 0;
  scan.mark = at;
  scan.split = -1;
}

function isDigit(b: number): boolean {
  return b >= 0x30 && b <= 0x39;
}

/** "HTTP/1." and a digit at buf[i] (the caller checked that 8 bytes are there). */
export function isHttp1At(buf: Buffer, i: number): boolean {
  return (
    buf[i] === 0x48 && buf[i + 1] === 0x54 && buf[i + 2] === 0x54 && buf[i + 3] === 0x50 &&
    buf[i + 4] === 0x2f && buf[i + 5] === 0x31 && buf[i + 6] === 0x2e && isDigit(buf[i + 7]!)
  );
}

function err(code: ProtocolErrorCode, what: string, at: number): ScanError {
  return { code, what, at };
}

/** A byte where it does not belong, named as a reader would name it. */
export function describe(b: number | undefined): string {
  if (b === undefined) return "end of line";
  if (b === 0) return "NUL byte (0x00)";
  if (b === SP) return "space";
  if (b === HTAB) return "tab";
  if (b === 0x0a) return "LF";
  const hex = `0x${b.toString(16).padStart(2, "0")}`;
  return b > 0x20 && b < 0x7f ? `"${String.fromCharCode(b)}" (${hex})` : `byte ${hex}`;
}

/**
 * Scans buf[scan.at, end) of a request line; returns the first error, or null with `scan` ready to go on. Stops early at
 * a CR (see the top of this file).
 */
export function scanRequestLine(buf: Buffer, end: number, scan: LineScan): ScanError | null {
  let i = scan.at;
  let phase = scan.phase;
  for (; i < end; i++) {
    const b = buf[i]!;
    if (b === CR) break;
    switch (phase) {
      case METHOD_FIRST:
        if (TCHAR[b] === 1) phase = METHOD;
        else if (b === SP || b === HTAB) return err("INVALID_REQUEST_LINE", "The request line starts with whitespace", i);
        else return err("INVALID_METHOD", `Unexpected ${describe(b)} in the method`, i);
        break;
      case METHOD:
        if (TCHAR[b] === 1) {
          // The rest of the run in a tight loop: one table lookup per byte, no dispatch.
          while (i + 1 < end && TCHAR[buf[i + 1]!] === 1) i++;
          break;
        }
        if (b === SP) {
          phase = TARGET_FIRST;
          scan.split = i;
        } else if (b === HTAB) return err("INVALID_REQUEST_LINE", "A tab separates the method from the target; use a single space", i);
        else return err("INVALID_METHOD", `Unexpected ${describe(b)} in the method`, i);
        break;
      case TARGET_FIRST:
        if (TARGET[b] === 1) phase = TARGET_REST;
        else if (b === SP) return err("INVALID_REQUEST_LINE", "The request target is empty or preceded by more than one space", i);
        else return err("INVALID_TARGET", `Unexpected ${describe(b)} in the request target`, i);
        break;
      case TARGET_REST:
        if (TARGET[b] === 1) {
          while (i + 1 < end && TARGET[buf[i + 1]!] === 1) i++;
          break;
        }
        if (b !== SP) return err("INVALID_TARGET", `Unexpected ${describe(b)} in the request target`, i);
        phase = VERSION;
        scan.count = 0;
        scan.mark = i + 1;
        break;
      case VERSION: {
        const k = scan.count;
        // The usual case, a whole "HTTP/1.x" in this piece, in one go; any other bytes take the byte-by-byte path below.
        if (k === 0 && i + 8 <= end && isHttp1At(buf, i)) {
          i += 7;
          phase = AFTER_VERSION;
          break;
        }
        const want = VERSION_TEMPLATE[k]!;
        if (want === 0 ? isDigit(b) : b === want) {
          if (k < 7) {
            scan.count = k + 1;
            break;
          }
          // All of "HTTP/x.y" is here: another major version is known to be unserved (RFC 9110 §15.6.6).
          const major = buf[i - 2]! - 0x30;
          if (major !== 1) return err("VERSION_NOT_SUPPORTED", `The request asks for HTTP/${major}.${b - 0x30}`, scan.mark);
          phase = AFTER_VERSION;
          break;
        }
        if (b === SP) {
          return k === 0
            ? err("INVALID_REQUEST_LINE", "More than one space before the HTTP version", i)
            : err("INVALID_REQUEST_LINE", "The request line has more than three space-separated parts (a space in the target must be sent as %20)", i);
        }
        // A third part that does not even start like a version is most likely the rest of a target with a space in it.
        if (k === 0 && b !== 0x48 && b !== 0x68) {
          return err("INVALID_REQUEST_LINE", "The request line has more than three space-separated parts (a space in the target must be sent as %20)", i);
        }
        return err("INVALID_VERSION", `"${buf.toString("latin1", scan.mark, i + 1)}" is not an HTTP version`, scan.mark);
      }
      case AFTER_VERSION:
        if (b === SP) return err("INVALID_REQUEST_LINE", "The request line has more than three space-separated parts (a space in the target must be sent as %20)", i);
        return err("INVALID_VERSION", `"${buf.toString("latin1", scan.mark, i + 1)}" is not an HTTP version`, scan.mark);
    }
  }
  scan.at = i;
  scan.phase = phase;
  return null;
}

/** As scanRequestLine, for a header or trailer field line (RFC 9112 §5, RFC 9110 §5.5, §8.6). */
export function scanFieldLine(buf: Buffer, end: number, scan: LineScan, ctx: FieldContext): ScanError | null {
  let i = scan.at;
  let phase = scan.phase;
  for (; i < end; i++) {
    const b = buf[i]!;
    if (b === CR) break;
    switch (phase) {
      case FIELD_FIRST:
        // RFC 9112 §5.2 (obs-fold) and §2.2 (whitespace before the first field): both rejected.
        if (b === SP || b === HTAB) return err("OBS_FOLD", "A header line starts with whitespace", i);
        // A byte other than CR means a field line, not the blank line: one more than the section may hold.
        if (ctx.fields + 1 > ctx.maxFields) {
          return ctx.trailer
            ? err("TOO_MANY_HEADERS", `The trailer section has more than ${ctx.maxFields} fields`, i)
            : err("TOO_MANY_HEADERS", `The request has more than ${ctx.maxFields} header fields`, i);
        }
        if (b === COLON) return err("INVALID_FIELD_NAME", "A header line has an empty field name", i);
        if (TCHAR[b] !== 1) return err("INVALID_FIELD_NAME", `Unexpected ${describe(b)} in a field name`, i);
        phase = FIELD_NAME;
        scan.mark = i;
        break;
      case FIELD_NAME:
        if (TCHAR[b] === 1) {
          while (i + 1 < end && TCHAR[buf[i + 1]!] === 1) i++;
          break;
        }
        if (b === SP || b === HTAB) {
          return err("WHITESPACE_BEFORE_COLON", `A ${describe(b)} follows "${buf.toString("latin1", scan.mark, i)}", where only more of the field name or its colon may come`, i);
        }
        if (b !== COLON) return err("INVALID_FIELD_NAME", `Unexpected ${describe(b)} in a field name`, i);
        phase = FIELD_VALUE_BYTES;
        scan.split = i;
        if (!ctx.trailer && isContentLength(buf, scan.mark, i)) {
          // Known at this colon, before the value arrives; the offset is the repeated field line's first byte.
          if (ctx.contentLengthSeen) return err("REPEATED_CONTENT_LENGTH", "Content-Length is sent on more than one field line", scan.mark);
          phase = LENGTH_LEADING_OWS;
          scan.count = 0;
        }
        break;
      case FIELD_VALUE_BYTES:
        if (FIELD_VALUE[b] !== 1) return err("INVALID_FIELD_VALUE", `Unexpected ${describe(b)} in the value of "${buf.toString("latin1", scan.mark, scan.split)}"`, i);
        while (i + 1 < end && FIELD_VALUE[buf[i + 1]!] === 1) i++;
        break;
      // RFC 9110 §8.6: Content-Length = 1*DIGIT, one value only.
      case LENGTH_LEADING_OWS:
      case LENGTH_DIGITS:
      case LENGTH_TRAILING_OWS:
        if (FIELD_VALUE[b] !== 1) return err("INVALID_FIELD_VALUE", `Unexpected ${describe(b)} in the value of "Content-Length"`, i);
        if (isDigit(b) && phase !== LENGTH_TRAILING_OWS) {
          phase = LENGTH_DIGITS;
          // Leading zeros add nothing to a length, so they do not count.
          if (b !== 0x30 || scan.count > 0) scan.count++;
          if (scan.count > MAX_LENGTH_DIGITS) return err("CONTENT_TOO_LARGE", `Content-Length has more than ${MAX_LENGTH_DIGITS} digits: larger than any body this server takes`, i);
        } else if (b === SP || b === HTAB) {
          if (phase === LENGTH_DIGITS) phase = LENGTH_TRAILING_OWS;
        } else if (b === 0x2c && phase !== LENGTH_LEADING_OWS) {
          return err("REPEATED_CONTENT_LENGTH", "Content-Length holds a list of values", i);
        } else {
          return err("INVALID_CONTENT_LENGTH", `Content-Length holds ${describe(b)} where a decimal digit belongs`, i);
        }
        break;
    }
  }
  scan.at = i;
  scan.phase = phase;
  return null;
}

function isContentLength(buf: Buffer, s: number, e: number): boolean {
  if (e - s !== CONTENT_LENGTH.length) return false;
  for (let j = 0; j < CONTENT_LENGTH.length; j++) {
    if ((buf[s + j]! | 0x20) !== CONTENT_LENGTH[j]) return false;
  }
  return true;
}

/**
 * The verdict on a whole request line once its content, buf[.., end), was
 * scanned without error: what the line's end itself shows (RFC 9112 §3).
 */
export function endRequestLine(buf: Buffer, end: number, scan: LineScan): ScanError | null {
  switch (scan.phase) {
    case METHOD:
      return err("INVALID_REQUEST_LINE", "The request line ends after the method", end);
    case TARGET_FIRST:
      return err("INVALID_REQUEST_LINE", "The request target is empty or preceded by more than one space", end);
    case TARGET_REST:
      return err("INVALID_REQUEST_LINE", "The request line has no HTTP version (HTTP/0.9 requests are not served)", end);
    case VERSION:
      return err("INVALID_VERSION", `"${buf.toString("latin1", scan.mark, end)}" is not an HTTP version`, scan.mark);
    default:
      return null;
  }
}

/** The same for a whole field line (RFC 9112 §5, RFC 9110 §8.6). */
export function endFieldLine(buf: Buffer, end: number, scan: LineScan): ScanError | null {
  switch (scan.phase) {
    case FIELD_NAME:
      return err("MISSING_COLON", `The header line "${buf.toString("latin1", scan.mark, Math.min(end, scan.mark + 40))}" has no colon`, end);
    case LENGTH_LEADING_OWS:
      return err("INVALID_CONTENT_LENGTH", "Content-Length is empty", end);
    default:
      return null;
  }
}
