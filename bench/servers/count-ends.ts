// Counting request ends ("\r\n\r\n") across chunks, for the ceiling server.

const CR = 13;
const LF = 10;

/**
 * Counts "\r\n\r\n" in a chunk, starting in `state` (how many bytes of the
 * pattern the previous chunk ended with, 0-3); returns the count and the new state.
 */
export function countEnds(chunk: Buffer, state: number): [number, number] {
  let count = 0;
  let i = 0;
  const n = chunk.length;
  // Finish a match carried over from the previous chunk, byte by byte.
  while (state > 0 && i < n) {
    const b = chunk[i++];
    const want = state === 1 || state === 3 ? LF : CR;
    if (b === want) {
      state++;
      if (state === 4) {
        count++;
        state = 0;
      }
    } else state = b === CR ? 1 : 0;
  }
  // Whole matches inside the chunk.
  let lastEnd = i;
  for (;;) {
    const at = chunk.indexOf("\r\n\r\n", i, "latin1");
    if (at < 0) break;
    count++;
    i = at + 4;
    lastEnd = i;
  }
  if (state === 0) {
    // A partial match at the very end (only bytes after the last match count).
    const tail = n - lastEnd;
    if (tail >= 3 && chunk[n - 3] === CR && chunk[n - 2] === LF && chunk[n - 1] === CR) state = 3;
    else if (tail >= 2 && chunk[n - 2] === CR && chunk[n - 1] === LF) state = 2;
    else if (tail >= 1 && chunk[n - 1] === CR) state = 1;
  }
  return [count, state];
}
