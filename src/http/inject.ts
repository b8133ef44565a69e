// Run raw request bytes through the real connection code, in memory.
//
// The bytes go through the same parser, handler and writer as on a socket,
// with the same ordering, keep-alive and error rules; what comes back is every
// byte the server would have written. Used by tests and by tools that show
// the wire, without opening a port.

import { Duplex } from "node:stream";
import { Connection, DEFAULT_CONNECTION_OPTIONS, type ConnectionOptions, type Exchange, type Handler, type Service } from "./connection.js";
import { DEFAULT_LIMITS, type ParserLimits } from "./parser.js";

export interface InjectOptions {
  readonly limits?: Partial<ParserLimits>;
  readonly onHandlerError?: (error: unknown) => void;
}

export interface InjectResult {
  /** Everything the server wrote, in order. */
  readonly output: Buffer;
  /** One entry per response, as the access log would see it. */
  readonly exchanges: readonly Exchange[];
}

/**
 * Feed `input` (one buffer, or several chunks delivered separately) as a
 * client that then half-closes, and collect the server's answer.
 */
export function inject(handler: Handler | Service, input: string | Buffer | readonly (string | Buffer)[], options: InjectOptions = {}): Promise<InjectResult> {
  const chunks = (Array.isArray(input) ? input : [input]).map((c: string | Buffer) => (typeof c === "string" ? Buffer.from(c, "latin1") : c));
  const written: Buffer[] = [];
  const exchanges: Exchange[] = [];
  return new Promise((resolve) => {
    const wire = new Duplex({
      allowHalfOpen: true,
      read() {},
      write(chunk: Buffer, _encoding, callback) {
        written.push(chunk);
        callback();
      },
      writev(items, callback) {
        for (const item of items) written.push(item.chunk as Buffer);
        callback();
      },
      final(callback) {
        callback();
        resolve({ output: Buffer.concat(written), exchanges });
      },
    });
    const connectionOptions: ConnectionOptions = { ...DEFAULT_CONNECTION_OPTIONS, limits: { ...DEFAULT_LIMITS, ...options.limits } };
    new Connection(wire, handler, connectionOptions, {
      onExchange: (e) => exchanges.push(e),
      onHandlerError: options.onHandlerError ?? (() => {}),
      onClose: () => {},
    });
    for (const chunk of chunks) wire.push(chunk);
    wire.push(null);
  });
}
