// A body produced in pieces (an async iterable, e.g. rows from a store
// cursor), so that it is never held whole: the connection asks for the next
// piece only once the socket has taken the last (connection/send-body.ts),
// and closes the iterable if the client goes away (its `return()` runs: a
// cursor is released). Sent with chunked transfer coding (RFC 9112 §7.1), or
// bare for an HTTP/1.0 client, whose response then ends when the connection
// does.
//
// Whoever consumes a body stream is done with a piece when it asks for the
// next: the socket has taken it (the write's callback: its bytes are in the
// kernel), a coder has consumed it (compression.ts), a test has copied it. So
// a producer may write its next piece into the same buffer, and a body sent
// to a client that does not read costs no memory per byte sent: one buffer,
// reused, instead of a new one per piece for the garbage collector to find.

export type BodyStream = AsyncIterable<string | Uint8Array>;

export function isBodyStream(body: unknown): body is BodyStream {
  return typeof body === "object" && body !== null && Symbol.asyncIterator in body;
}
