// The access log: one line per response on stdout, written in batches so that
// logging costs one write per event-loop turn, not one per request.

import type { Exchange } from "./http/connection.js";

export function formatExchange(e: Exchange): string {
  return `${e.method} ${e.target} ${e.status} ${e.bodyBytes}B ${e.ms.toFixed(2)}ms`;
}

/** `prefix` marks the process a line comes from (e.g. "w2 " under WORKERS). */
export function accessLog(out: NodeJS.WritableStream = process.stdout, prefix = ""): (e: Exchange) => void {
  let pending = "";
  const flush = () => {
    const text = pending;
    pending = "";
    out.write(text);
  };
  return (e) => {
    if (pending === "") setImmediate(flush);
    pending += prefix + formatExchange(e) + "\n";
  };
}
