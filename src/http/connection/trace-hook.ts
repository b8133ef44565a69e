// The hook a connection offers to whoever wants to watch its bytes (the
// terminal trace of TRACE=1, src/trace/; the wire view, src/wire/, through
// inject()): its parser's spans, the bytes they point into, the parser's
// verdicts, the connection's own decisions on them, and what it writes. This
// layer only tells; it never formats or prints. Without a factory in the
// connection's options, nothing is made: no listener, no call per request.

import type { ProtocolError } from "../parse/errors.js";
import type { Request, RequestHead } from "../message/request.js";
import type { SpanListener } from "../parse/spans.js";

export interface ConnectionTrace extends SpanListener {
  /** Bytes read from the socket, just before the parser is fed them: span offsets count from the first. */
  received(chunk: Buffer): void;
  /** The parser accepted a head: its framing and keep-alive decisions. */
  head(head: RequestHead): void;
  /**
   * The head just told is answered from itself alone (its service refused it
   * from the head, or a streamed handler failed on it): its body, and
   * everything after it, is never read, and the connection closes after the
   * answer. Optional: a watcher that does not care need not say so.
   */
  refusedFromHead?(): void;
  /** A whole request goes to the handler. */
  request(request: Request): void;
  /** The request broke a rule (or timed out); the answer follows. */
  error(error: ProtocolError): void;
  /** A response (or an interim 100) was written: its head, and its body unless it has none or is streamed. */
  response(head: string, body: string | Uint8Array | undefined, streamed: boolean): void;
  /** The connection is gone. */
  closed(): void;
}

/** Called once per connection, with its socket's peer (absent for an in-memory one). */
export type TraceFactory = (peer: { readonly remoteAddress?: string | undefined; readonly remotePort?: number | undefined }) => ConnectionTrace;
