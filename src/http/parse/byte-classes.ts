// Every byte's class, decided in one place, and the sets of the HTTP grammar
// (token, request-target, field value, ...) as unions of those classes.
//
// One function, classOf, sorts the 256 byte values into classes so that each
// set the grammar names is a union of whole classes. Everything else is
// derived from it: the grammar table of the parser's scanner (line-scan.ts:
// one load per byte on the hot path), the sets and lookup tables (TOKEN_SET,
// HOST, ...), and the token test that the router applies to a
// route's method and that the page script applies to a method typed in the
// form (tokenPattern). A byte can therefore not be a token to the parser and
// something else to the router or the page.

export const CR = 0x0d;
export const LF = 0x0a;
export const SP = 0x20;
export const HTAB = 0x09;


/** The classes. Each is a set of bytes that every rule of the grammar treats alike. */
// ByteClass: plain numbers, not an enum, so that the scanner's loop compares constants.
export type ByteClass = number;
/** CTL other than HTAB, CR and LF; and DEL (RFC 5234 B.1). Allowed nowhere in a head. */
export const CLASS_CONTROL = 0;
export const CLASS_HTAB = 1;
export const CLASS_SP = 2;
export const CLASS_CR = 3;
export const CLASS_LF = 4;
export const CLASS_DIGIT = 5;
/** A-F a-f: letters that are also hex digits (chunk-size). */
export const CLASS_HEX_LETTER = 6;
/** The other letters. */
export const CLASS_LETTER = 7;
/** tchar that are also allowed in a request-target and a Host: ! $ % & ' * + - . _ ~ */
export const CLASS_TOKEN_SYMBOL = 8;
/** tchar that a request-target must percent-encode: # ^ ` | */
export const CLASS_TOKEN_ONLY = 9;
export const CLASS_COLON = 10;
export const CLASS_COMMA = 11;
export const CLASS_SEMICOLON = 12;
export const CLASS_EQUALS = 13;
/** ( ) [ ]: in a target and a Host, not in a token. */
export const CLASS_BRACKET = 14;
/** / @: in a target, not in a token nor a Host. */
export const CLASS_TARGET_ONLY = 15;
/** ?: in a target, where the first one starts the query (RFC 3986 §3.4); not in a token nor a Host. */
export const CLASS_QUESTION = 16;
export const CLASS_DQUOTE = 17;
export const CLASS_BACKSLASH = 18;
/** < > { }: visible, but neither token nor target. */
export const CLASS_VISIBLE_OTHER = 19;
/** 0x80-0xFF (RFC 9110 §5.5 obs-text). */
export const CLASS_OBS_TEXT = 20;

/** How many classes there are (the width of the grammar table). */
export const CLASS_COUNT = CLASS_OBS_TEXT + 1;

const isAlpha = (b: number) => (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a);
const isHexLetter = (b: number) => (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);

/** The one decision of what a byte is. */
export function classOf(b: number): ByteClass {
  if (b === HTAB) return CLASS_HTAB;
  if (b === SP) return CLASS_SP;
  if (b === CR) return CLASS_CR;
  if (b === LF) return CLASS_LF;
  if (b < 0x20 || b === 0x7f) return CLASS_CONTROL;
  if (b >= 0x80) return CLASS_OBS_TEXT;
  if (b >= 0x30 && b <= 0x39) return CLASS_DIGIT;
  if (isHexLetter(b)) return CLASS_HEX_LETTER;
  if (isAlpha(b)) return CLASS_LETTER;
  const c = String.fromCharCode(b);
  if ("!$%&'*+-._~".includes(c)) return CLASS_TOKEN_SYMBOL;
  if ("#^`|".includes(c)) return CLASS_TOKEN_ONLY;
  if (c === ":") return CLASS_COLON;
  if (c === ",") return CLASS_COMMA;
  if (c === ";") return CLASS_SEMICOLON;
  if (c === "=") return CLASS_EQUALS;
  if ("()[]".includes(c)) return CLASS_BRACKET;
  if (c === "/" || c === "@") return CLASS_TARGET_ONLY;
  if (c === "?") return CLASS_QUESTION;
  if (c === '"') return CLASS_DQUOTE;
  if (c === "\\") return CLASS_BACKSLASH;
  return CLASS_VISIBLE_OTHER; // < > { }
}

/** classOf for every byte, as a table. */
export const CLASS: Uint8Array = Uint8Array.from({ length: 256 }, (_, b) => classOf(b));

/** 1 << classOf(b) for every byte: a set of classes is a mask, and a byte is in it when BIT[b] & mask. */
export const BIT: Uint32Array = Uint32Array.from(CLASS, (c) => 1 << c);

/** The mask of a set of classes. */
export function classes(...members: ByteClass[]): number {
  let mask = 0;
  for (const c of members) mask |= 1 << c;
  return mask;
}

const ALNUM = classes(CLASS_DIGIT, CLASS_HEX_LETTER, CLASS_LETTER);

/** RFC 9110 §5.6.2: tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA */
export const TOKEN_SET = ALNUM | classes(CLASS_TOKEN_SYMBOL, CLASS_TOKEN_ONLY);

/**
 * RFC 9112 §3.2 with RFC 3986: the bytes a request-target may hold as sent:
 * unreserved, sub-delims, ":" "@" "/" "?", "%" of percent-encoding, and "[" "]"
 * of IP literals. Anything else (space, controls, `"#<>\^`{|}`, non-ASCII) must
 * be percent-encoded by the client.
 */
export const TARGET_SET = ALNUM | classes(CLASS_TOKEN_SYMBOL, CLASS_COLON, CLASS_COMMA, CLASS_SEMICOLON, CLASS_EQUALS, CLASS_BRACKET, CLASS_TARGET_ONLY, CLASS_QUESTION);

/**
 * RFC 9110 §5.5: field-vchar = VCHAR / obs-text, and SP and HTAB inside a
 * value. NUL, CR, LF, the other controls and DEL are refused: RFC 9110 §5.5
 * lets a recipient reject them, and accepting any of them is how header
 * injection and request smuggling begin.
 */
export const FIELD_VALUE_SET = ~classes(CLASS_CONTROL, CLASS_CR, CLASS_LF) & ((1 << CLASS_COUNT) - 1);

/** RFC 9110 §5.6.4: qdtext = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text (a quoted chunk-ext-val, RFC 9112 §7.1.1). */
export const QDTEXT_SET = FIELD_VALUE_SET & ~classes(CLASS_DQUOTE, CLASS_BACKSLASH);

/**
 * OWS = *( SP / HTAB ) (RFC 9110 §5.6.3): the whitespace around a field value
 * (RFC 9112 §5) and around the elements of a list (RFC 9110 §5.6.1), and
 * nothing else: not NBSP, not any other Unicode space. The scanner's table
 * (line-scan.ts) and the trimming of values and lists (isOws) both use it.
 */
export const OWS_SET = classes(CLASS_SP, CLASS_HTAB);

/** RFC 3986 §3.2.2 reg-name / IP-literal / port characters of a Host value (RFC 9112 §3.2). */
export const HOST_SET = TARGET_SET & ~classes(CLASS_TARGET_ONLY, CLASS_QUESTION);

/** HEXDIG (RFC 5234 B.1). */
export const HEXDIG_SET = classes(CLASS_DIGIT, CLASS_HEX_LETTER);

/** Whether byte b is in the set `mask`. */
export function inSet(mask: number, b: number): boolean {
  return (BIT[b]! & mask) !== 0;
}

/** A string is a token (RFC 9110 §5.6.2: token = 1*tchar): methods, field names, connection options. */
export function isToken(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 0xff || (BIT[c]! & TOKEN_SET) === 0) return false;
  }
  return true;
}

/**
 * A regular expression source for a whole token, made from the TOKEN_SET set,
 * for a script that runs where this module cannot be imported (the page's,
 * src/docs/page-script.ts). Every byte is written as \xHH.
 */
export function tokenPattern(): string {
  let set = "";
  for (let b = 0; b < 0x80; b++) if (inSet(TOKEN_SET, b)) set += `\\x${b.toString(16).padStart(2, "0")}`;
  return `^[${set}]+$`;
}

/** Values of a hex digit, or 255 for a byte that is not one (chunk-size, RFC 9112 §7.1). */
export const HEX: Uint8Array = Uint8Array.from({ length: 256 }, (_, b) => (!inSet(HEXDIG_SET, b) ? 255 : b <= 0x39 ? b - 0x30 : (b | 0x20) - 0x61 + 10));

/** A set as a 256-entry table of 0 and 1, tested `TABLE[b] === 1`: one load per byte (the Host check, the writer's field names). */
function tableOf(mask: number): Uint8Array {
  return Uint8Array.from({ length: 256 }, (_, b) => (inSet(mask, b) ? 1 : 0));
}

export const TCHAR = tableOf(TOKEN_SET);
export const TARGET = tableOf(TARGET_SET);
export const FIELD_VALUE = tableOf(FIELD_VALUE_SET);
export const QDTEXT = tableOf(QDTEXT_SET);
export const HOST = tableOf(HOST_SET);
const OWS = tableOf(OWS_SET);

/** Whether byte (or code unit) `b` is one of OWS's: SP or HTAB, nothing else (see OWS_SET). */
export function isOws(b: number): boolean {
  return OWS[b] === 1;
}
