// Turning a connection away past a connection cap, before reading anything
// from it: the server does it past maxConnections, and a WORKERS primary
// past its cap on the connections waiting for a worker (src/cluster.ts). A
// file of its own so that the primary, which serves no request, need not
// load the server and the connection (the parser with them) for it.

import type net from "node:net";
import { problem } from "../message/problem.js";
import { serialize } from "../message/response.js";

const BUSY = problem(503, {
  kind: "too-many-connections",
  title: "Too many connections",
  detail: "The server has as many open connections as it is configured to serve. Retry shortly, or reuse an open connection.",
  headers: { "Retry-After": 1 },
});

/**
 * Past a connection cap: one 503, then close, without reading a request (the reply needs none). Over TLS
 * a 503 could only be read after a handshake, so the connection is closed before one. Under WORKERS the
 * primary turns connections away with this too, past the cap on those waiting for a worker (src/cluster.ts).
 */
export function refuse(socket: net.Socket, how: { readonly secure: boolean; readonly responseFields: string }): void {
  if (how.secure) return void socket.destroy();
  const out = serialize(BUSY, { omitBody: false, close: true, confirmKeepAlive: false, extraFields: how.responseFields });
  socket.on("error", () => {});
  // What the client sends is read and dropped (the primary's sockets are paused until a worker has them):
  // unread bytes would make the close a reset, which can discard the 503 before the client reads it,
  // and the client's own close is seen, so the socket goes then rather than at the timer.
  socket.resume();
  socket.end(out.head + (out.body as string));
  setTimeout(() => socket.destroy(), 1000).unref();
}
