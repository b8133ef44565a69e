// Bytes as terminal text for the trace: every byte that is not printable is
// written as an escape, so CR LF can be seen (`\r\n`) and a client cannot
// move the cursor, change colours or hide text on the operator's terminal
// (no control byte, no ANSI escape, no bidirectional override reaches it).

const ANSI = {
  dim: "\x1b[2m",
  bold: "\x1b[1m",
  red: "\x1b[31m",
  green: "\x1b[32m",
  yellow: "\x1b[33m",
  cyan: "\x1b[36m",
  mark: "\x1b[1;7;31m",
} as const;
const RESET = "\x1b[0m";

export type Tone = keyof typeof ANSI;
/** Colours text on a terminal; returns it unchanged for plain output. */
export type Paint = (tone: Tone, text: string) => string;

export function painter(color: boolean): Paint {
  return color ? (tone, text) => (text === "" ? "" : ANSI[tone] + text + RESET) : (_tone, text) => text;
}

/**
 * Whether to colour: only a terminal, and not when NO_COLOR is set to
 * anything but "" (https://no-color.org).
 */
export function useColor(stream: { readonly isTTY?: boolean }, noColor: string | undefined): boolean {
  return stream.isTTY === true && (noColor === undefined || noColor === "");
}

function hex2(n: number): string {
  return n.toString(16).padStart(2, "0");
}

/** The escape for byte `b` of a head, or null when it prints as itself (printable ASCII). */
function headEscape(b: number): string | null {
  if (b === 0x0d) return "\\r";
  if (b === 0x0a) return "\\n";
  if (b === 0x09) return "\\t";
  if (b === 0x5c) return "\\\\";
  if (b < 0x20 || b >= 0x7f) return `\\x${hex2(b)}`;
  return null;
}

export interface Shown {
  /** The text, painted. */
  readonly text: string;
  /** Columns before the marked byte, in the plain text (for a caret under it); -1 when nothing is marked. */
  readonly markAt: number;
}

/**
 * Bytes of a request or response head, byte for byte: printable ASCII as
 * itself, CR, LF and tab as `\r`, `\n`, `\t` (dimmed), a backslash doubled,
 * any other byte as `\xNN`. The byte at `mark` (an index into `bytes`) is
 * shown as the error.
 */
export function headText(bytes: Uint8Array, paint: Paint, mark = -1): Shown {
  let out = "";
  let run = "";
  let width = 0;
  let markAt = -1;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    const escape = headEscape(b);
    const shown = escape ?? String.fromCharCode(b);
    if (i === mark) {
      out += run + paint("mark", shown);
      run = "";
      markAt = width;
    } else if (escape === null || escape === "\\\\") {
      run += shown;
    } else {
      out += run + paint("dim", escape);
      run = "";
    }
    width += shown.length;
  }
  return { text: out + run, markAt };
}

/** Characters a terminal would act on or hide: controls, format characters (bidi overrides), line separators. */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\\]/gu;

function escapeUnsafe(text: string, paint: Paint, pattern: RegExp): string {
  return text.replace(pattern, (c) => {
    if (c === "\\") return "\\\\";
    const code = c.codePointAt(0)!;
    const escape = c === "\r" ? "\\r" : c === "\n" ? "\\n" : c === "\t" ? "\\t" : code < 0x100 ? `\\x${hex2(code)}` : `\\u{${code.toString(16)}}`;
    return paint("dim", escape);
  });
}

/** Body bytes as UTF-8 text, with every control or invisible formatting character escaped. */
export function bodyText(bytes: Uint8Array, paint: Paint): string {
  return escapeUnsafe(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"), paint, UNSAFE);
}

const UNSAFE_IN_PROSE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

/** Prose that may quote the client's bytes (an error's detail): its control characters escaped, backslashes left alone. */
export function proseText(text: string): string {
  return escapeUnsafe(text, (_tone, t) => t, UNSAFE_IN_PROSE);
}

/** The first `max` bytes of `body`, cut at a character boundary, and its whole length. */
export function bodyPrefix(body: string | Uint8Array, max: number): { bytes: Uint8Array; total: number } {
  if (typeof body !== "string") return { bytes: body.subarray(0, max), total: body.byteLength };
  // At most `max` characters hold the first `max` bytes; the whole length is counted without encoding the rest.
  const head = Buffer.from(body.slice(0, max), "utf8");
  let n = Math.min(max, head.length);
  while (n > 0 && n < head.length && (head[n]! & 0xc0) === 0x80) n--;
  return { bytes: head.subarray(0, n), total: Buffer.byteLength(body, "utf8") };
}
