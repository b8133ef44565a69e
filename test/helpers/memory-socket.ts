// A client connection in memory: a Duplex that a Connection reads from (what
// the test pushes into it) and writes to (kept, in order). For tests that
// drive a connection without a socket, checking its deadlines at chosen
// instants rather than waiting for a clock.

import { Duplex } from "node:stream";

export interface MemorySocket {
  /** The connection's side: give it to `new Connection(...)`. */
  readonly socket: Duplex;
  /** Everything the server has written so far. */
  written(): Buffer;
  /** The same, as text. */
  output(): string;
  /** Resolves once what the server has written makes `done` true: checked at once, then after each write. */
  until(done: () => boolean): Promise<void>;
}

export function memorySocket(): MemorySocket {
  const chunks: Buffer[] = [];
  const waiting = new Set<() => void>();
  const socket = new Duplex({
    allowHalfOpen: true,
    read() {},
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk);
      for (const check of waiting) check();
      callback();
    },
  });
  const written = () => Buffer.concat(chunks);
  return {
    socket,
    written,
    output: () => written().toString("latin1"),
    until: (done) =>
      new Promise<void>((resolve) => {
        if (done()) return resolve();
        const check = () => {
          if (!done()) return;
          waiting.delete(check);
          resolve();
        };
        waiting.add(check);
      }),
  };
}
