// Bytes of a head as a string, one character per byte (the head's bytes are
// ISO-8859-1 text by RFC 9110 §5.5's reading: obs-text is kept, not decoded).

interface Latin1Slicing {
  latin1Slice(start: number, end: number): string;
}

/**
 * buf[start, end) as a string of the same length. `latin1Slice` is the
 * Buffer method behind `toString("latin1", start, end)`; called directly it
 * skips the argument checks and the encoding lookup, which for a 16-byte
 * target cost about 200 instructions of the 1,000 a call takes (callgrind,
 * node 20, the string's allocation included). Every caller passes bounds
 * inside `buf`.
 */
export function latin1(buf: Buffer, start: number, end: number): string {
  return (buf as unknown as Latin1Slicing).latin1Slice(start, end);
}
