// How much one wire-view answer may hold. Every piece of the account is
// charged its size in the JSON answer as it is made, and text that does not
// fit is never decoded: so the answer, and the memory and work behind it, stay
// within the budget whatever the requests inside ask for (a few pipelined
// GETs of a large collection would otherwise turn 400 bytes of input into
// hundreds of megabytes of answer).

export interface Budget {
  /** Bytes of JSON the answer may hold in all. */
  readonly limit: number;
  /** Where the pieces being made now must stop (at most `limit`): lets one side keep room for the other. */
  ceiling: number;
  spent: number;
  /** Parts the answer may hold (a megabyte of one-byte chunks is half a million parts), with a ceiling as for bytes. */
  readonly partLimit: number;
  partCeiling: number;
  parts: number;
  /** Bytes of the input, and of what the server wrote, whose text the answer leaves out. */
  requestBytesNotShown: number;
  responseBytesNotShown: number;
}

export type Side = "request" | "response";

export function createBudget(limit: number, partLimit = Infinity): Budget {
  return { limit, ceiling: limit, spent: 0, partLimit, partCeiling: partLimit, parts: 0, requestBytesNotShown: 0, responseBytesNotShown: 0 };
}

export function left(budget: Budget): number {
  return Math.max(0, Math.min(budget.limit, budget.ceiling) - budget.spent);
}

export function partsLeft(budget: Budget): number {
  return Math.max(0, Math.min(budget.partLimit, budget.partCeiling) - budget.parts);
}

/** Size of a value in the JSON answer, with the comma that separates it from the next. */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value)) + 1;
}

/** Counts a piece that is always sent (a request's method and framing, a status line) against the budget. */
export function charge(budget: Budget, value: unknown): void {
  budget.spent += jsonBytes(value);
}

export function notShown(budget: Budget, side: Side, bytes: number): void {
  if (side === "request") budget.requestBytesNotShown += bytes;
  else budget.responseBytesNotShown += bytes;
}

const MiB = 1024 * 1024;

/** "4 MiB", "512 KiB", "1000 bytes": for details people read. */
export function sizeText(bytes: number): string {
  if (bytes >= MiB && bytes % (MiB / 4) === 0) return `${bytes / MiB} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/**
 * How many of bytes[start, end) fit in `room` bytes of JSON text once decoded
 * (UTF-8, or Latin-1 where each byte from 0x80 becomes two), read off the
 * bytes in one pass without decoding them: quotes and backslashes take two
 * bytes, control bytes two or six (RFC 8259 §7).
 */
export function fittingBytes(bytes: Buffer, start: number, end: number, room: number, isLatin1: boolean): { n: number; cost: number } {
  let cost = 0;
  let i = start;
  for (; i < end; i++) {
    const b = bytes[i]!;
    const c = b === 0x22 || b === 0x5c ? 2 : b < 0x20 ? (b === 0x08 || b === 0x09 || b === 0x0a || b === 0x0c || b === 0x0d ? 2 : 6) : b >= 0x80 && isLatin1 ? 2 : 1;
    if (cost + c > room) break;
    cost += c;
  }
  return { n: i - start, cost };
}

/**
 * The longest prefix of bytes[start, end) whose decoded text costs at most
 * `room` bytes of JSON (with its quotes and comma), cut at a character
 * boundary; the cut is found from the bytes, and only the prefix is decoded.
 * `cost`: what the text takes in JSON, quotes and comma included.
 */
export function fitText(bytes: Buffer, start: number, end: number, room: number, decode: (b: Buffer, s: number, e: number) => string, utf8: boolean): { text: string; shown: number; cost: number } {
  let n = fittingBytes(bytes, start, Math.max(start, end), room - 3, !utf8).n;
  for (;;) {
    // Never split a UTF-8 sequence: back off over continuation bytes.
    if (utf8) while (n > 0 && start + n < end && (bytes[start + n]! & 0xc0) === 0x80) n--;
    const text = decode(bytes, start, start + n);
    const cost = jsonBytes(text);
    // Over only where decoding made more than the bytes (invalid UTF-8 becomes U+FFFD): shrink and try again.
    if (cost <= room || n === 0) return { text, shown: n, cost };
    n = Math.min(n - 1, Math.floor((n * room) / cost));
  }
}
