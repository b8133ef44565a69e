// The terminal trace (TRACE=1 or --trace): every exchange on every
// connection printed as the parser read it and the server wrote it. The
// connection only tells (src/http/connection/trace-hook.ts); this decides how it reads.

import type { ConnectionTrace, TraceFactory } from "../http/connection/trace-hook.js";
import { painter } from "./text.js";
import { Tracer } from "./tracer.js";

export { useColor } from "./text.js";

export interface TraceOptions {
  readonly out: NodeJS.WritableStream;
  /** Colour (ANSI escapes) or plain text: see useColor. */
  readonly color: boolean;
  /** Bytes of each body shown (TRACE_BODY_BYTES). */
  readonly bodyBytes: number;
  /** Marks the process the lines come from (e.g. "w2" under WORKERS). */
  readonly prefix?: string;
}

/**
 * A trace for every connection of a server (ServerOptions.trace). Lines are
 * written in one batch per turn of the event loop, as the access log is.
 */
export function createTrace(options: TraceOptions): TraceFactory {
  const paint = painter(options.color);
  let pending = "";
  const flush = () => {
    const text = pending;
    pending = "";
    options.out.write(text);
  };
  const write = (text: string) => {
    if (pending === "") setImmediate(flush);
    pending += text;
  };
  let connections = 0;
  return (peer) => {
    const label = `${options.prefix ?? ""}#${++connections}`;
    const from = peer.remoteAddress === undefined ? "" : ` from ${peer.remoteAddress}:${peer.remotePort}`;
    write(`${paint("dim", label)} ${paint("yellow", "*")} connection opened${from}\n`);
    return quietOnFailure(new Tracer(label, { write, paint, bodyBytes: options.bodyBytes }), (error) => {
      write(`${paint("dim", label)} ${paint("red", "!")} the trace of this connection failed, and stops: ${String(error).replace(/[^\x20-\x7e]/g, "?")}\n`);
    });
  };
}

/**
 * The tracer's calls run inside the parser and the connection: one that
 * throws must not take the connection (or the server) down. It says so once
 * and goes quiet; the connection is served as if it were never traced.
 */
function quietOnFailure(tracer: ConnectionTrace, report: (error: unknown) => void): ConnectionTrace {
  let broken = false;
  const safe =
    <A extends unknown[]>(call: (...args: A) => void) =>
    (...args: A): void => {
      if (broken) return;
      try {
        call.apply(tracer, args);
      } catch (error) {
        broken = true;
        report(error);
      }
    };
  return {
    span: safe(tracer.span),
    received: safe(tracer.received),
    head: safe(tracer.head),
    ...(tracer.refusedFromHead === undefined ? {} : { refusedFromHead: safe(tracer.refusedFromHead) }),
    request: safe(tracer.request),
    error: safe(tracer.error),
    response: safe(tracer.response),
    closed: safe(tracer.closed),
  };
}
