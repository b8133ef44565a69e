// The grammar of a request's lines, and the scanner that runs it: the one
// judge of whether each byte of a line is in its place. (What the tokens
// mean is read after the scanner has accepted them: the target and Host in
// request-line.ts and host.ts, the framing fields in head-framing.ts.)
//
// ---- The grammar, as data ----
//
// For each phase of a line, what each class of byte (byte-classes.ts) leads
// to: the next phase, or a refusal. Beside each phase, the ABNF of RFC 9112 /
// RFC 9110 it enforces: nothing else decides whether a byte of a line is in
// its place.
//
// Four kinds of line are described: the request line (RFC 9112 §3), a field
// line, in the header or the trailer section (RFC 9112 §5, §7.1.2), a
// chunk-size line and the CRLF that ends a chunk's data (RFC 9112 §7.1), a
// line with nothing before its end. What they share is the line's end: in
// every phase a CR leads to CELL_END (it must be followed by LF, RFC 9112
// §2.2) and a lone LF to CELL_BARE_LF; what the end of the line means in a
// phase is AT_END.
//
// A refusal is written once, beside the rows whose edges refuse with it
// (llhttp's `.otherwise(p.error(code, "words"))` is the model): `refusal()`
// takes a code of the protocol error table (errors.ts) and the words, made
// from the bytes that show the fault, and gives the number the table's cells
// carry. What a line's verdict depends on beyond its bytes (how many fields a
// section holds, a Content-Length before it) is not here: the scanner asks
// section-rules.ts.
//
// The scanner is in this file with the table because the phases are plain
// constants of this file: an imported binding is checked at every use, and
// the scanner compares against a phase at every step.
//
import {
  CLASS,
  CLASS_BACKSLASH,
  CLASS_COLON,
  CLASS_COMMA,
  CLASS_COUNT,
  CLASS_CR,
  CLASS_DIGIT,
  CLASS_DQUOTE,
  CLASS_EQUALS,
  CLASS_HTAB,
  CLASS_LF,
  CLASS_QUESTION,
  CLASS_SEMICOLON,
  CLASS_SP,
  FIELD_VALUE_SET,
  HEX,
  HTAB,
  isOws,
  LF,
  OWS_SET,
  SP,
  HEXDIG_SET,
  QDTEXT_SET,
  TARGET_SET,
  TOKEN_SET,
} from "./byte-classes.js";
import type { ProtocolErrorCode } from "./errors.js";
import { fieldName } from "./interned-names.js";
import { LENGTH_VALUE, sectionRule, type Section } from "./section-rules.js";


/**
 * The phases. A line starts in REQUEST_START, FIELD_START, CHUNK_START or
 * CHUNK_DATA_END.
 * Plain constants, not an enum: a constant of this file is a number
 * however the file is compiled, while an enum's members are inlined only
 * by the build (tsconfig.build.json; elsewhere, as in the tests, each is
 * a property load), and a property load per comparison is what the
 * scanner cannot afford.
 */
// ---- request-line = method SP request-target SP HTTP-version (RFC 9112 §3) ----
/** method = token (RFC 9110 §9.1); token = 1*tchar (RFC 9110 §5.6.2): its first byte. */
const REQUEST_START = 0;
/** The rest of the method, up to the one SP. */
const METHOD = 1;
/** request-target (RFC 9112 §3.2): its first byte, right after the one SP. */
const TARGET_START = 2;
/** The rest of the target, up to the one SP: only the bytes RFC 3986 allows unencoded. */
const TARGET_REST = 3;
/** From the target's first "?" (RFC 3986 §3.4: the query, where "?" is data), up to the one SP. */
const TARGET_QUERY = 4;
/**
 * HTTP-version = HTTP-name "/" DIGIT "." DIGIT; HTTP-name = %s"HTTP"
 * (RFC 9112 §2.3): a literal, matched byte by byte (CELL_VERSION cells).
 */
const VERSION = 5;
/** After the version only the line's CR LF may come. */
const AFTER_VERSION = 6;

// ---- field-line = field-name ":" OWS field-value OWS (RFC 9112 §5) ----
/** field-name = token (RFC 9110 §5.1): its first byte. A line starting with SP or HTAB is obs-fold (RFC 9112 §5.2). */
const FIELD_START = 7;
/** The rest of the name; no whitespace between it and the colon (RFC 9112 §5.1). */
const FIELD_NAME = 8;
/**
 * OWS field-value OWS, OWS = *( SP / HTAB ) (RFC 9110 §5.6.3); field-value =
 * *field-content, field-vchar = VCHAR / obs-text, SP and HTAB inside (RFC
 * 9110 §5.5). One run: the OWS around the value is trimmed when the line ends.
 */
const VALUE = 9;
/** Content-Length = 1*DIGIT (RFC 9110 §8.6): OWS before the digits. */
const LENGTH_OWS = 10;
/** Its digits (significant digits are counted: CELL_COUNT). */
const LENGTH_DIGITS = 11;
/** OWS after the digits: nothing else may follow (a list is refused, RFC 9110 §8.6). */
const LENGTH_AFTER = 12;

// ---- chunk-size [ chunk-ext ] CRLF; chunk-size = 1*HEXDIG (RFC 9112 §7.1) ----
/** The size's first hex digit. */
const CHUNK_START = 13;
/** The rest of the size (read as it comes: CELL_COUNT). */
const CHUNK_DIGITS = 14;
/** chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] ) (RFC 9112 §7.1.1); BWS = OWS: whitespace that must lead to ";". */
const EXT_SPACE = 15;
/** BWS after ";", before chunk-ext-name = token. */
const EXT_BEFORE_NAME = 16;
/** chunk-ext-name. */
const EXT_NAME = 17;
/** BWS after the name: only "=" or ";" may follow (whitespace that ends the line is not in the grammar). */
const EXT_AFTER_NAME = 18;
/** BWS after "=", before chunk-ext-val = token / quoted-string. */
const EXT_BEFORE_VALUE = 19;
/** A token value. */
const EXT_TOKEN = 20;
/** quoted-string = DQUOTE *( qdtext / quoted-pair ) DQUOTE (RFC 9110 §5.6.4). */
const EXT_QUOTED = 21;
/** quoted-pair = "\" ( HTAB / SP / VCHAR / obs-text ). */
const EXT_QUOTED_PAIR = 22;
/** Right after the closing DQUOTE. */
const EXT_AFTER_QUOTED = 23;

// ---- chunk = chunk-size [ chunk-ext ] CRLF chunk-data CRLF (RFC 9112 §7.1) ----
/**
 * The CRLF after a chunk's data: a line with nothing before its end. The
 * data's length is the chunk size's to say, so the parser counts it out; the
 * line after it is read here like any other, its CR and LF by the same cells.
 */
const CHUNK_DATA_END = 24;
export const PHASE_COUNT = CHUNK_DATA_END + 1;

// ---- Refusals ----

/** What a refusal's words are made from: where the rule broke, in which line. */
interface Broken {
  /** The byte that broke the rule; undefined when the line's end did. */
  readonly byte: number | undefined;
  /** Where it is in the buffer (at the line's end: where the line's content ends). */
  readonly i: number;
  /** Where the line starts in the buffer. */
  readonly s: number;
  readonly phase: number;
  readonly scan: Scan;
  readonly rules: LineRules;
  /** The line's bytes from offset `from` (counted from the line's start) to buffer index `to`, as latin1 text. */
  readonly text: (from: number, to: number) => string;
}

interface Refusal {
  readonly code: ProtocolErrorCode;
  /** What the client sent, worded from its bytes (errors.ts adds the rule and the fix). */
  readonly words: (b: Broken) => string;
  /** Where the fault is placed, as a buffer index: the breaking byte unless given. */
  readonly at?: (b: Broken) => number;
}

const REFUSALS: Refusal[] = [];
/** No refusal: the cell or the line's end is allowed. */
const R_NONE = 0;

/**
 * A refusal, with its code and its words, declared where its rule is; the
 * number the table's cells (CELL_REFUSED + it) and AT_END carry.
 */
function refusal(code: ProtocolErrorCode, words: (b: Broken) => string, at?: (b: Broken) => number): number {
  REFUSALS.push(at === undefined ? { code, words } : { code, words, at });
  return REFUSALS.length;
}

/** Every refusal of this file, in the order declared: for the test that reads the table. */
export function refusals(): readonly { readonly code: ProtocolErrorCode; readonly r: number }[] {
  return REFUSALS.map((entry, index) => ({ code: entry.code, r: index + 1 }));
}

/**
 * A cell: a phase (below CELL_SPECIAL), or one of the cells below. Phases
 * that count or match their bytes (VERSION, LENGTH_DIGITS, CHUNK_DIGITS) keep them with CELL_COUNT or
 * CELL_VERSION rather than their own number, so that the scanner's
 * run-skipping loop never passes over them.
 */
const CELL_SPECIAL = 0x40;
/** A CR: the line ends if LF follows (RFC 9112 §2.2). */
const CELL_END = 0x40;
/** An LF without CR before it. */
const CELL_BARE_LF = 0x41;
/** A byte of the version literal. */
const CELL_VERSION = 0x42;
/** A digit of a phase that counts them (LENGTH_OWS, LENGTH_DIGITS, CHUNK_START, CHUNK_DIGITS). */
const CELL_COUNT = 0x43;
/** CELL_REFUSED + R_*: the byte breaks that rule. */
export const CELL_REFUSED = 0x80;

/** The table: GRAMMAR[phase * CLASS_COUNT + class], a phase or a CELL_* value. */
export const GRAMMAR = new Uint8Array(PHASE_COUNT * CLASS_COUNT);
/** What the end of the line (its CR LF) means in each phase: R_NONE, or a refusal. */
export const AT_END = new Uint8Array(PHASE_COUNT);

const WS = OWS_SET;
const cls = (c: number): number => 1 << c;
/** The cell that refuses with `r`. */
const refusedBy = (r: number): number => CELL_REFUSED + r;

/**
 * One row: `otherwise` for every class no rule names, then the rules in order
 * (a later one wins); CR and LF end the line in every phase.
 */
function row(phase: number, atEnd: number, otherwise: number, ...rules: [number, number][]): void {
  for (let c = 0; c < CLASS_COUNT; c++) {
    let cell = otherwise;
    for (const [mask, to] of rules) if ((mask & (1 << c)) !== 0) cell = to;
    if (c === CLASS_CR) cell = CELL_END;
    if (c === CLASS_LF) cell = CELL_BARE_LF;
    GRAMMAR[phase * CLASS_COUNT + c] = cell;
  }
  AT_END[phase] = atEnd;
}

// Request line (RFC 9112 §3): request-line = method SP request-target SP HTTP-version; method = token
// (RFC 9110 §9.1); request-target (RFC 9112 §3.2), whose bytes TARGET_SET holds.
const R_REQUEST_LINE_STARTS_WITH_SPACE = refusal("INVALID_REQUEST_LINE", () => "The request line starts with whitespace");
const R_METHOD_BYTE = refusal("INVALID_METHOD", (x) => `Unexpected ${describe(x.byte)} in the method`);
const R_TAB_AFTER_METHOD = refusal("INVALID_REQUEST_LINE", () => "A tab separates the method from the target; use a single space");
const R_TARGET_EMPTY = refusal("INVALID_REQUEST_LINE", () => "The request target is empty or preceded by more than one space");
const R_TARGET_BYTE = refusal("INVALID_TARGET", (x) => `Unexpected ${describe(x.byte)} in the request target`);
const R_ENDS_AFTER_METHOD = refusal("INVALID_REQUEST_LINE", () => "The request line ends after the method");
const R_NO_VERSION = refusal("INVALID_REQUEST_LINE", () => "The request line has no HTTP version (HTTP/0.9 requests are not served)");
const R_SPACE_BEFORE_VERSION = refusal("INVALID_REQUEST_LINE", () => "More than one space before the HTTP version");
const R_THREE_PARTS = refusal("INVALID_REQUEST_LINE", () => "The request line has more than three space-separated parts (a space in the target must be sent as %20)");
// HTTP-version = HTTP-name "/" DIGIT "." DIGIT (RFC 9112 §2.3), matched byte by byte against HTTP/1.x.
const R_BAD_VERSION = refusal(
  "INVALID_VERSION",
  (x) => `"${x.text(x.scan.mark, x.byte === undefined ? x.i : x.i + 1)}" is not an HTTP version`,
  (x) => x.s + x.scan.mark,
);
// A version of another major number is well formed, and known to be unserved (RFC 9110 §15.6.6).
const R_VERSION_NOT_SUPPORTED = refusal("VERSION_NOT_SUPPORTED", (x) => `The request asks for HTTP/${x.text(x.scan.mark + 5, x.i)}${String.fromCharCode(x.byte!)}`, (x) => x.s + x.scan.mark);
row(REQUEST_START, R_NONE, refusedBy(R_METHOD_BYTE), [WS, refusedBy(R_REQUEST_LINE_STARTS_WITH_SPACE)], [TOKEN_SET, METHOD]);
row(METHOD, R_ENDS_AFTER_METHOD, refusedBy(R_METHOD_BYTE), [TOKEN_SET, METHOD], [cls(CLASS_SP), TARGET_START], [cls(CLASS_HTAB), refusedBy(R_TAB_AFTER_METHOD)]);
row(TARGET_START, R_TARGET_EMPTY, refusedBy(R_TARGET_BYTE), [TARGET_SET, TARGET_REST], [cls(CLASS_QUESTION), TARGET_QUERY], [cls(CLASS_SP), refusedBy(R_TARGET_EMPTY)]);
row(TARGET_REST, R_NO_VERSION, refusedBy(R_TARGET_BYTE), [TARGET_SET, TARGET_REST], [cls(CLASS_QUESTION), TARGET_QUERY], [cls(CLASS_SP), VERSION]);
row(TARGET_QUERY, R_NO_VERSION, refusedBy(R_TARGET_BYTE), [TARGET_SET, TARGET_QUERY], [cls(CLASS_SP), VERSION]);
row(VERSION, R_BAD_VERSION, CELL_VERSION);
row(AFTER_VERSION, R_NONE, refusedBy(R_BAD_VERSION), [cls(CLASS_SP), refusedBy(R_THREE_PARTS)]);

// Field line (RFC 9112 §5): field-line = field-name ":" OWS field-value OWS; field-name = token (RFC 9110
// §5.1); field-value bytes as FIELD_VALUE_SET holds (§5.5); no obs-fold (RFC 9112 §5.2); no whitespace
// between the name and the colon (§5.1). Content-Length = 1*DIGIT (RFC 9110 §8.6), one value.
const R_OBS_FOLD = refusal("OBS_FOLD", () => "A header line starts with whitespace");
const R_EMPTY_FIELD_NAME = refusal("INVALID_FIELD_NAME", () => "A header line has an empty field name");
const R_FIELD_NAME_BYTE = refusal("INVALID_FIELD_NAME", (x) => `Unexpected ${describe(x.byte)} in a field name`);
const R_SPACE_BEFORE_COLON = refusal("WHITESPACE_BEFORE_COLON", (x) => `A ${describe(x.byte)} follows "${x.text(0, x.i)}", where only more of the field name or its colon may come`);
const R_NO_COLON = refusal("MISSING_COLON", (x) => `The header line "${x.text(0, Math.min(x.i, x.s + 40))}" has no colon`);
const R_VALUE_BYTE = refusal("INVALID_FIELD_VALUE", (x) => {
  const name = x.phase === LENGTH_OWS || x.phase === LENGTH_DIGITS || x.phase === LENGTH_AFTER ? "Content-Length" : x.text(0, x.s + x.scan.split);
  return `Unexpected ${describe(x.byte)} in the value of "${name}"`;
});
const R_LENGTH_EMPTY = refusal("INVALID_CONTENT_LENGTH", () => "Content-Length is empty");
// After the digits and whitespace nothing may come, a digit no more than any other byte ("5 5").
const R_LENGTH_BYTE = refusal("INVALID_CONTENT_LENGTH", (x) =>
  x.phase === LENGTH_AFTER ? `Content-Length holds ${describe(x.byte)} after the whitespace that ends its digits` : `Content-Length holds ${describe(x.byte)} where a decimal digit belongs`,
);
const R_LENGTH_LIST = refusal("REPEATED_CONTENT_LENGTH", () => "Content-Length holds a list of values");
// More significant digits than any body limit needs: refused as it is read, before it is a number.
const R_LENGTH_DIGITS = refusal("CONTENT_TOO_LARGE", () => `Content-Length has more than ${MAX_LENGTH_DIGITS} digits: larger than any body this server takes`);
// The field line. The colon leads to VALUE; the section's rules send a Content-Length's value to LENGTH_OWS instead.
row(FIELD_START, R_NONE, refusedBy(R_FIELD_NAME_BYTE), [WS, refusedBy(R_OBS_FOLD)], [cls(CLASS_COLON), refusedBy(R_EMPTY_FIELD_NAME)], [TOKEN_SET, FIELD_NAME]);
row(FIELD_NAME, R_NO_COLON, refusedBy(R_FIELD_NAME_BYTE), [TOKEN_SET, FIELD_NAME], [WS, refusedBy(R_SPACE_BEFORE_COLON)], [cls(CLASS_COLON), VALUE]);
row(VALUE, R_NONE, refusedBy(R_VALUE_BYTE), [FIELD_VALUE_SET, VALUE]);
row(LENGTH_OWS, R_LENGTH_EMPTY, refusedBy(R_VALUE_BYTE), [FIELD_VALUE_SET, refusedBy(R_LENGTH_BYTE)], [WS, LENGTH_OWS], [cls(CLASS_DIGIT), CELL_COUNT]);
row(LENGTH_DIGITS, R_NONE, refusedBy(R_VALUE_BYTE), [FIELD_VALUE_SET, refusedBy(R_LENGTH_BYTE)], [WS, LENGTH_AFTER], [cls(CLASS_COMMA), refusedBy(R_LENGTH_LIST)], [cls(CLASS_DIGIT), CELL_COUNT]);
row(LENGTH_AFTER, R_NONE, refusedBy(R_VALUE_BYTE), [FIELD_VALUE_SET, refusedBy(R_LENGTH_BYTE)], [WS, LENGTH_AFTER], [cls(CLASS_COMMA), refusedBy(R_LENGTH_LIST)]);

// Chunk-size line (RFC 9112 §7.1): chunk-size [ chunk-ext ] CRLF; chunk-size = 1*HEXDIG; chunk-ext =
// *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] ), a token or a quoted-string.
const R_CHUNK_EMPTY = refusal("INVALID_CHUNK_SIZE", () => "A chunk-size line is empty");
const R_CHUNK_SIZE_BYTE = refusal("INVALID_CHUNK_SIZE", (x) => `Unexpected ${describe(x.byte)} in a chunk size`);
const R_EXTENSION_BYTE = refusal("INVALID_CHUNK_EXTENSION", (x) => `Unexpected ${describe(x.byte)} in a chunk extension`);
// The chunks together past the body limit (RFC 9110 §15.5.14): refused at the size that takes them past it.
const R_CHUNK_TOO_LARGE = refusal("CONTENT_TOO_LARGE", (x) => `The chunked body grows past the limit of ${x.rules.bodyLimit} bytes`, (x) => x.s);
// Digits past the line's first room: leading zeros without end (the significant ones are counted, MAX_CHUNK_SIZE_DIGITS).
const R_CHUNK_ZEROS = refusal("INVALID_CHUNK_SIZE", () => "A chunk size has more leading zeros than a chunk-size line may hold", (x) => x.s);
const R_EXTENSIONS_TOO_LARGE = refusal("CHUNK_EXTENSIONS_TOO_LARGE", (x) => `The chunk extensions of this message exceed ${x.rules.maxExtensions} bytes`, (x) => x.s + x.scan.split);
row(CHUNK_START, R_CHUNK_EMPTY, refusedBy(R_CHUNK_SIZE_BYTE), [HEXDIG_SET, CELL_COUNT]);
// A byte that is neither a hex digit nor the start of chunk-ext (BWS or ";") is still the size's: "0x5", "5g".
row(CHUNK_DIGITS, R_NONE, refusedBy(R_CHUNK_SIZE_BYTE), [HEXDIG_SET, CELL_COUNT], [WS, EXT_SPACE], [cls(CLASS_SEMICOLON), EXT_BEFORE_NAME]);
row(EXT_SPACE, R_EXTENSION_BYTE, refusedBy(R_EXTENSION_BYTE), [WS, EXT_SPACE], [cls(CLASS_SEMICOLON), EXT_BEFORE_NAME]);
row(EXT_BEFORE_NAME, R_EXTENSION_BYTE, refusedBy(R_EXTENSION_BYTE), [WS, EXT_BEFORE_NAME], [TOKEN_SET, EXT_NAME]);
row(EXT_NAME, R_NONE, refusedBy(R_EXTENSION_BYTE), [TOKEN_SET, EXT_NAME], [WS, EXT_AFTER_NAME], [cls(CLASS_EQUALS), EXT_BEFORE_VALUE], [cls(CLASS_SEMICOLON), EXT_BEFORE_NAME]);
row(EXT_AFTER_NAME, R_EXTENSION_BYTE, refusedBy(R_EXTENSION_BYTE), [WS, EXT_AFTER_NAME], [cls(CLASS_EQUALS), EXT_BEFORE_VALUE], [cls(CLASS_SEMICOLON), EXT_BEFORE_NAME]);
row(EXT_BEFORE_VALUE, R_EXTENSION_BYTE, refusedBy(R_EXTENSION_BYTE), [WS, EXT_BEFORE_VALUE], [TOKEN_SET, EXT_TOKEN], [cls(CLASS_DQUOTE), EXT_QUOTED]);
row(EXT_TOKEN, R_NONE, refusedBy(R_EXTENSION_BYTE), [TOKEN_SET, EXT_TOKEN], [WS, EXT_SPACE], [cls(CLASS_SEMICOLON), EXT_BEFORE_NAME]);
row(EXT_QUOTED, R_EXTENSION_BYTE, refusedBy(R_EXTENSION_BYTE), [QDTEXT_SET, EXT_QUOTED], [cls(CLASS_BACKSLASH), EXT_QUOTED_PAIR], [cls(CLASS_DQUOTE), EXT_AFTER_QUOTED]);
row(EXT_QUOTED_PAIR, R_EXTENSION_BYTE, refusedBy(R_EXTENSION_BYTE), [FIELD_VALUE_SET, EXT_QUOTED]);
row(EXT_AFTER_QUOTED, R_NONE, refusedBy(R_EXTENSION_BYTE), [WS, EXT_SPACE], [cls(CLASS_SEMICOLON), EXT_BEFORE_NAME]);

// The end of a chunk's data: only its CR LF (RFC 9112 §7.1: chunk-data CRLF).
const R_CHUNK_DATA_END_BYTE = refusal("INVALID_CHUNK_END", (x) => `Expected CR LF after the chunk data, found ${describe(x.byte)}`);
row(CHUNK_DATA_END, R_NONE, refusedBy(R_CHUNK_DATA_END_BYTE));

// Every line's end (RFC 9112 §2.2): CR LF; a bare LF only where the server allows it; a CR alone never.
const R_BARE_CR = refusal("BARE_CR", () => "A CR is not followed by LF");
const R_BARE_LF = refusal("BARE_LF", () => "A line ended with LF alone, not CR LF");
// A line longer than its room (limits.ts): a request line whose target fills it is a 414 (RFC 9110 §15.5.15), one
// whose target does not a 400; tooLong() tells them apart.
const R_URI_TOO_LONG = refusal("URI_TOO_LONG", (x) => `The request target is longer than this server's limit (request line: ${x.scan.room} bytes)`);
const R_REQUEST_LINE_TOO_LONG = refusal("REQUEST_LINE_TOO_LONG", (x) => `The request line is longer than ${x.scan.room} bytes`, (x) => x.s);

/**
 * The table by byte rather than by class, for the scanner: BY_BYTE[phase << 8 | b]
 * = GRAMMAR[phase * CLASS_COUNT + classOf(b)]. Derived here, never written by
 * hand: the scanner pays one load per byte, and its run-skipping loop is
 * "while the cell is the phase itself".
 */
export const BY_BYTE = new Uint8Array(PHASE_COUNT << 8);
for (let p = 0; p < PHASE_COUNT; p++) {
  for (let b = 0; b < 256; b++) BY_BYTE[(p << 8) | b] = GRAMMAR[p * CLASS_COUNT + CLASS[b]!]!;
}

// ---- The scanner ----
//
// It runs the grammar over the bytes of one line,
// from where it stopped last time, for a line that has not ended yet as much
// as for a whole one, and finds the line's end itself. It is the only reader
// of a line's bytes.
//
// Each byte is looked at once, with one load: the grammar's cell for the
// phase and the byte (BY_BYTE). A run of bytes whose cell is the phase itself
// (the rest of a method, a target, a value) is skipped in a tight loop that
// does nothing else; the one step after it decides (the way httparse reads a
// line). What the table alone cannot say (the version literal, counted
// digits, the section's say at a field line's start and colon) is done at
// that step, and the wording of a refusal is made only when one is found,
// in functions of its own, so that the loop stays small.
//
// A line cut anywhere is resumed with the state in Scan, so its verdict
// (code, offset and detail) is the same however the stream was cut: every
// rule is decided by the earliest byte that shows it, from the bytes up to
// that one. What a line's verdict depends on besides its bytes comes from
// outside: `room` (the bytes it may hold before a limit: the first byte past
// it that is not the CR or LF of its end breaks the limit) and, for field
// lines, the section (section-rules.ts).


/** Where the scan of a line stands, and, once it ended, where its parts lie. Offsets count from the line's first byte. */
export interface Scan {
  phase: number;
  /** The next byte to look at. */
  at: number;
  /** The line's CR when it was the last byte of a piece (the next byte decides), else -1. */
  cr: number;
  /** Bytes the line may hold before its CR without breaking a limit. */
  room: number;
  /** Version: bytes matched. Content-Length, chunk size: significant digits. */
  count: number;
  /** Request line: the SP after the method. Field line: the colon. Chunk-size line: where the digits end. */
  split: number;
  /** Request line: the target's first "?", or -1. */
  query: number;
  /** Request line: the first byte of the version. Field line: the value without the OWS around it, [mark, valueEnd). */
  mark: number;
  valueEnd: number;
  /** Field line: its name, lower-cased (interned-names.ts), read at the colon. */
  name: string;
  /** The chunk size read so far. */
  size: number;
  /** The line's content ends here (its CR, or its LF when it ended alone). Set when the line ends. */
  end: number;
  /** After a refusal: what, and where. */
  code: ProtocolErrorCode;
  what: string;
  errorAt: number;
}

export function newScan(): Scan {
  return { phase: REQUEST_START, at: 0, cr: -1, room: 0, count: 0, split: -1, query: -1, mark: 0, valueEnd: 0, name: "", size: 0, end: 0, code: "BARE_CR", what: "", errorAt: 0 };
}

/** Start a line in `phase` that may hold `room` bytes before its CR. */
function startLine(scan: Scan, phase: number, room: number): void {
  scan.phase = phase;
  scan.at = 0;
  scan.cr = -1;
  scan.room = room;
}

/** Start a request line, a field line (header or trailer) or a chunk-size line. */
export function startRequestLine(scan: Scan, room: number): void {
  startLine(scan, REQUEST_START, room);
  scan.query = -1;
}
export function startFieldLine(scan: Scan, room: number): void {
  startLine(scan, FIELD_START, room);
}
export function startChunkSizeLine(scan: Scan, room: number): void {
  startLine(scan, CHUNK_START, room);
}
/** The line after a chunk's data: it may hold nothing before its CR. */
export function startChunkDataEnd(scan: Scan): void {
  startLine(scan, CHUNK_DATA_END, 0);
}

/** The line that ended was empty: a blank line (or, before a request line, an empty one to ignore). */
export function isEmptyLine(scan: Scan): boolean {
  return scan.phase === REQUEST_START || scan.phase === FIELD_START;
}

/** What scanLine found: the index of the line's LF (0 or more), or one of these. */
export const MORE = -1;
export const REFUSE = -2;

/** A rule broken at one byte (`at`, an index into the buffer read), found after a line was scanned. */
export interface LineError {
  readonly code: ProtocolErrorCode;
  readonly what: string;
  readonly at: number;
}

/** What a line's verdict depends on besides its bytes and its room. */
export interface LineRules {
  readonly allowBareLf: boolean;
  /** The section a field line belongs to. */
  readonly section: Section;
  /** Chunk-size line: the most the size may be, of the message's body limit. */
  chunkRoom: number;
  bodyLimit: number;
  /** Chunk-size line: bytes of extensions the message may still carry. */
  extensionRoom: number;
  /** The limit on a message's chunk extensions. */
  readonly maxExtensions: number;
}

/** "HTTP/" DIGIT "." DIGIT (RFC 9112 §2.3); 0 stands for a digit. */
const VERSION_LITERAL = [0x48, 0x54, 0x54, 0x50, 0x2f, 0, 0x2e, 0];
/** Significant digits of a Content-Length past which it is larger than any body limit (10^15 bytes; limits.ts, MAX_BODY_LIMIT). */
export const MAX_LENGTH_DIGITS = 15;
/** Hex digits in a chunk size past which it is larger than any body limit (16^12 bytes; limits.ts, MAX_BODY_LIMIT). */
export const MAX_CHUNK_SIZE_DIGITS = 12;

/**
 * Scans buf[s + scan.at, end) of the line that starts at buf[s]. Returns the
 * index of its LF when the line ended there (its verdict at the end
 * included: `scan` then holds where its parts lie), MORE when every byte up
 * to `end` is sound and the line goes on, or REFUSE (`scan` then holds the
 * code, detail and offset of the first rule broken).
 */
export function scanLine(buf: Buffer, s: number, end: number, scan: Scan, rules: LineRules): number {
  let i = s + scan.at;
  if (scan.cr !== -1) return afterCr(buf, s, i, end, scan, rules);
  let phase = scan.phase;
  // Past `limit` a byte that is neither CR nor LF breaks the line's limit; the loop stops there.
  let limit = s + scan.room;
  let stop = limit < end ? limit : end;
  // The table as a local: a module binding is checked at every use.
  const table = BY_BYTE;
  for (;;) {
    const row = phase << 8;
    let cell: number = phase;
    // The run that stays in this phase: skipped, one load per byte.
    while (i < stop) {
      cell = table[row | buf[i]!]!;
      if (cell !== phase) break;
      i++;
    }
    if (i === stop) {
      if (i === end) {
        scan.phase = phase;
        scan.at = i - s;
        return MORE;
      }
      cell = table[row | buf[i]!]!;
      if (cell !== CELL_END && cell !== CELL_BARE_LF) return tooLong(buf, s, i, phase, scan, rules);
    }
    if (cell < CELL_SPECIAL) {
      // A step to another phase; the marks the parser reads, and the section's say, are taken here.
      switch (cell) {
        case TARGET_START:
          scan.split = i - s;
          break;
        case TARGET_QUERY:
          scan.query = i - s;
          break;
        case VERSION:
          scan.mark = i + 1 - s;
          scan.count = 0;
          // The usual case, a whole "HTTP/1." and a digit in this piece, in one go (written out here, not
          // called: the compiler spends its inlining budget on the per-line calls).
          if (
            i + 9 <= stop && buf[i + 1] === 0x48 && buf[i + 2] === 0x54 && buf[i + 3] === 0x54 && buf[i + 4] === 0x50 &&
            buf[i + 5] === 0x2f && buf[i + 6] === 0x31 && buf[i + 7] === 0x2e && buf[i + 8]! >= 0x30 && buf[i + 8]! <= 0x39
          ) {
            i += 9;
            phase = AFTER_VERSION;
            continue;
          }
          break;
        case FIELD_NAME: {
          // A byte other than CR, LF or whitespace: a field line, not the blank line. One more than the section may hold?
          const said = rules.section.oneMore;
          if (said !== null) return refuse(scan, said.code, said.what, i, s);
          break;
        }
        case VALUE: {
          scan.split = i - s;
          // The name, read once here: the section's rules and the parser both take it from the scan.
          const name = fieldName(buf, s, i);
          scan.name = name;
          const said = sectionRule(rules.section, "colon", name, 0);
          if (said === LENGTH_VALUE) {
            phase = LENGTH_OWS;
            i++;
            continue;
          }
          // Known at this colon, before the value arrives; the offset is the repeated field line's first byte.
          if (said !== null) return refuse(scan, said.code, said.what, s, s);
          break;
        }
        default:
          if (phase === CHUNK_DIGITS) {
            const error = chunkDigitsEnd(buf, s, i, scan, rules);
            if (error !== 0) return error;
            // The extensions begin with this byte: the line's room is now theirs (chunkDigitsEnd).
            limit = s + scan.room;
            stop = limit < end ? limit : end;
            if (i >= limit) return tooLong(buf, s, i, cell, scan, rules);
          }
      }
      phase = cell;
      i++;
      continue;
    }
    if (cell === CELL_END) {
      // RFC 9112 §2.2: a CR only as the first half of CR LF; the next byte says which it is.
      scan.phase = phase;
      if (i + 1 >= end) {
        scan.cr = i - s;
        scan.at = i + 1 - s;
        return MORE;
      }
      if (buf[i + 1] !== LF) return refuseBy(R_BARE_CR, buf, s, i, phase, scan, rules);
      return ended(buf, s, i + 1, i, scan, rules);
    }
    if (cell === CELL_BARE_LF) {
      if (!rules.allowBareLf) {
        // After a chunk's data a lone LF most often means the data was longer or shorter than its size: said so.
        if (phase === CHUNK_DATA_END) return refuseBy(R_CHUNK_DATA_END_BYTE, buf, s, i, phase, scan, rules);
        return refuseBy(R_BARE_LF, buf, s, i, phase, scan, rules);
      }
      scan.phase = phase;
      return ended(buf, s, i, i, scan, rules);
    }
    const next = rareStep(buf, s, i, phase, cell, scan, rules);
    if (next === REFUSE) return REFUSE;
    phase = next;
    i++;
  }
}

/** The line's CR was the last byte of the piece before: the first byte of this one decides. */
function afterCr(buf: Buffer, s: number, i: number, end: number, scan: Scan, rules: LineRules): number {
  if (i >= end) return MORE;
  if (buf[i] !== LF) return refuseBy(R_BARE_CR, buf, s, s + scan.cr, scan.phase, scan, rules);
  const contentEnd = s + scan.cr;
  scan.cr = -1;
  return ended(buf, s, i, contentEnd, scan, rules);
}

/**
 * The steps the loop hands on: a byte of the version literal, a counted
 * digit, a refusal. Returns the next phase, or REFUSE.
 */
function rareStep(buf: Buffer, s: number, i: number, phase: number, cell: number, scan: Scan, rules: LineRules): number {
  const b = buf[i]!;
  switch (cell) {
    case CELL_VERSION: {
      const k = scan.count;
      const want = VERSION_LITERAL[k]!;
      if (want === 0 ? b >= 0x30 && b <= 0x39 : b === want) {
        if (k < 7) {
          scan.count = k + 1;
          return VERSION;
        }
        // All of "HTTP/x.y" is here: another major version is known to be unserved (RFC 9110 §15.6.6).
        const major = buf[i - 2]! - 0x30;
        if (major !== 1) return refuseBy(R_VERSION_NOT_SUPPORTED, buf, s, i, phase, scan, rules);
        return AFTER_VERSION;
      }
      if (b === SP) return refuseBy(k === 0 ? R_SPACE_BEFORE_VERSION : R_THREE_PARTS, buf, s, i, phase, scan, rules);
      // A third part that does not even start like a version is most likely the rest of a target with a space in it.
      if (k === 0 && b !== 0x48 && b !== 0x68) return refuseBy(R_THREE_PARTS, buf, s, i, phase, scan, rules);
      return refuseBy(R_BAD_VERSION, buf, s, i, phase, scan, rules);
    }
    case CELL_COUNT:
      if (phase === LENGTH_OWS || phase === LENGTH_DIGITS) {
        if (phase === LENGTH_OWS) {
          scan.count = 0;
          scan.mark = i - s;
        }
        // Leading zeros add nothing to a length, so they do not count.
        if (b !== 0x30 || scan.count > 0) {
          if (++scan.count > MAX_LENGTH_DIGITS) return refuseBy(R_LENGTH_DIGITS, buf, s, i, phase, scan, rules);
        }
        return LENGTH_DIGITS;
      }
      // CHUNK_START, CHUNK_DIGITS
      if (phase === CHUNK_START) {
        scan.count = 0;
        scan.size = 0;
      }
      if (b !== 0x30 || scan.count > 0) {
        if (++scan.count > MAX_CHUNK_SIZE_DIGITS) return chunkTooLarge(buf, s, scan, rules);
      }
      scan.size = scan.size * 16 + HEX[b]!;
      return CHUNK_DIGITS;
    default:
      if (phase === FIELD_START && cell !== CELL_REFUSED + R_OBS_FOLD) {
        // Any first byte but whitespace makes this a field line: whether the section may hold one more comes first.
        const said = rules.section.oneMore;
        if (said !== null) return refuse(scan, said.code, said.what, i, s);
      }
      if (phase === CHUNK_DIGITS) {
        const error = chunkDigitsEnd(buf, s, i, scan, rules);
        if (error !== 0) return error;
      }
      return refuseBy(cell - CELL_REFUSED, buf, s, i, phase, scan, rules);
  }
}

/**
 * The chunk size's digits end at buf[i]: it must fit in what the body may
 * still take. What follows, up to the CR, is chunk-ext (RFC 9112 §7.1.1):
 * ignored, but a message's extensions are bounded (maxChunkExtensionBytes),
 * so the line's room becomes its digits plus the extension bytes the message
 * may still carry, and the scanner refuses the first byte past it.
 * Returns REFUSE, or 0.
 */
function chunkDigitsEnd(buf: Buffer, s: number, i: number, scan: Scan, rules: LineRules): number {
  scan.split = i - s;
  scan.room = scan.split + rules.extensionRoom;
  return scan.size > rules.chunkRoom ? chunkTooLarge(buf, s, scan, rules) : 0;
}

/**
 * The line's content ends at buf[contentEnd] (its CR, or a lone LF), its LF
 * at lf, in scan.phase: the phase's end verdict, then where the parts lie.
 */
function ended(buf: Buffer, s: number, lf: number, contentEnd: number, scan: Scan, rules: LineRules): number {
  const phase = scan.phase;
  scan.end = contentEnd - s;
  if (phase === CHUNK_DIGITS) {
    if (chunkDigitsEnd(buf, s, contentEnd, scan, rules) !== 0) return REFUSE;
  } else if (phase > FIELD_NAME && phase <= LENGTH_AFTER) {
    // A field line with its colon. RFC 9112 §5: the OWS before and after a field value is not part of it.
    let vs = s + scan.split + 1;
    while (vs < contentEnd && isOws(buf[vs]!)) vs++;
    let ve = contentEnd;
    while (ve > vs && isOws(buf[ve - 1]!)) ve--;
    scan.mark = vs - s;
    scan.valueEnd = ve - s;
  }
  const refusal = AT_END[phase]!;
  if (refusal !== R_NONE) return refuseBy(refusal, buf, s, contentEnd, phase, scan, rules);
  return lf;
}

function refuse(scan: Scan, code: ProtocolErrorCode, what: string, at: number, s: number): number {
  scan.code = code;
  scan.what = what;
  scan.errorAt = at - s;
  return REFUSE;
}

function chunkTooLarge(buf: Buffer, s: number, scan: Scan, rules: LineRules): number {
  return refuseBy(R_CHUNK_TOO_LARGE, buf, s, s, scan.phase, scan, rules);
}

/** A byte where it does not belong, named as a reader would name it. */
export function describe(b: number | undefined): string {
  if (b === undefined) return "end of line";
  if (b === 0) return "NUL byte (0x00)";
  if (b === SP) return "space";
  if (b === HTAB) return "tab";
  if (b === LF) return "LF";
  const hex = `0x${b.toString(16).padStart(2, "0")}`;
  return b > 0x20 && b < 0x7f ? `"${String.fromCharCode(b)}" (${hex})` : `byte ${hex}`;
}

/**
 * Refuses with refusal `r` at buf[i] (the line's end when i is where its
 * content ends and the end is what refuses), worded with the bytes that show
 * it. Off the hot path: only a refused line gets here.
 */
function refuseBy(r: number, buf: Buffer, s: number, i: number, phase: number, scan: Scan, rules: LineRules): number {
  const entry = REFUSALS[r - 1]!;
  const atEnd = i - s === scan.end && (buf[i] === 0x0d || buf[i] === LF) && AT_END[phase] === r;
  const broken: Broken = { byte: atEnd ? undefined : buf[i], i, s, phase, scan, rules, text: (from, to) => buf.toString("latin1", s + from, to) };
  return refuse(scan, entry.code, entry.words(broken), entry.at === undefined ? i : entry.at(broken), s);
}

/**
 * buf[i] is the first byte past the line's room. Which limit that breaks
 * depends on the line: for a request line, a long target is a 414 (RFC 9110
 * §15.5.15) and anything else a 400, told apart by where its spaces lie.
 */
function tooLong(buf: Buffer, s: number, i: number, phase: number, scan: Scan, rules: LineRules): number {
  // No limit is reached here: this line holds nothing before its CR, so its first other byte breaks the grammar.
  if (phase === CHUNK_DATA_END) return refuseBy(R_CHUNK_DATA_END_BYTE, buf, s, i, phase, scan, rules);
  if (phase <= AFTER_VERSION) {
    const max = scan.room;
    const sp = buf[i] === SP ? i : -1;
    // The first two spaces of the line up to and including this byte.
    const sp1 = phase === REQUEST_START || phase === METHOD ? sp : s + scan.split;
    const sp2 = phase === REQUEST_START || phase === METHOD ? -1 : phase === TARGET_START || phase === TARGET_REST || phase === TARGET_QUERY ? sp : s + scan.mark - 1;
    // The target is to blame only if it has begun by this byte (a method and its space that fill the line leave none of it
    // read) and fills more than half the room, read whole or so far: a long method with a short target is no long target.
    if (sp1 !== -1 && sp1 < i && (sp2 === -1 ? i : sp2) - sp1 > max / 2) {
      return refuseBy(R_URI_TOO_LONG, buf, s, sp1 + 1, phase, scan, rules);
    }
    return refuseBy(R_REQUEST_LINE_TOO_LONG, buf, s, i, phase, scan, rules);
  }
  if (phase > CHUNK_DIGITS) {
    return refuseBy(R_EXTENSIONS_TOO_LARGE, buf, s, i, phase, scan, rules);
  }
  if (phase >= CHUNK_START) {
    // Digits past the line's first room: leading zeros without end (the significant ones are counted, MAX_CHUNK_SIZE_DIGITS).
    return refuseBy(R_CHUNK_ZEROS, buf, s, i, phase, scan, rules);
  }
  const said = sectionRule(rules.section, "overflow", "", 0)!;
  return refuse(scan, said.code, said.what, s, s);
}
