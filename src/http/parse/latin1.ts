// Bytes of a head as a string, one character per byte (the head's bytes are
// ISO-8859-1 text by RFC 9110 §5.5's reading: obs-text is kept, not decoded).

interface Latin1Slicing {
  latin1Slice(start: number, end: number): string;
}

/**
 * buf[start, end) as a string of the same length. `latin1Slice` is the
 * Buffer method behind `toString("latin1", start, end)`; called directly it
 * skips the argument checks and the encoding lookup, which for a 16-byte
 * target cost as much as the copy itself (callgrind: about 110 instructions
 * of the 330 a call takes). Every caller passes bounds inside `buf`.
 */
export function latin1(buf: Buffer, start: number, end: number): string {
  return (buf as unknown as Latin1Slicing).latin1Slice(start, end);
}
