// What the parser hands on: one request, framed and checked.

/** What the head of a request says, once every framing rule has been checked. */
export interface RequestHead {
  /** Case-sensitive token, exactly as sent (RFC 9110 §9.1). */
  readonly method: string;
  /** The request-target as sent (RFC 9112 §3.2). */
  readonly target: string;
  /** Path of the target, still percent-encoded; "*" for asterisk-form. */
  readonly path: string;
  /** Text after the first "?" of the target, without the "?"; "" when absent. */
  readonly query: string;
  /** Minor version: 0 for HTTP/1.0, 1 for HTTP/1.1 and any higher 1.x (RFC 9110 §6.2). */
  readonly minor: 0 | 1;
  /** Header fields in arrival order, flattened: lower-cased name, value, name, value... */
  readonly fields: readonly string[];
  /**
   * Each field's name as sent, in the order of `fields`: only when the
   * parser was asked to keep them (a streamed service, see
   * connection/streamed.ts); undefined otherwise.
   */
  readonly rawNames?: readonly string[];
  /** Host from the absolute-form target, else the Host field; "" when none (RFC 9112 §3.2.2). */
  readonly host: string;
  /** Body framing decided from the head (RFC 9112 §6.3). */
  readonly framing: Framing;
  /** Whether the connection stays open after this exchange (RFC 9112 §9.3). */
  readonly keepAlive: boolean;
  /** `Expect: 100-continue` on an HTTP/1.1 request (RFC 9110 §10.1.1). */
  readonly expectContinue: boolean;
  /**
   * Who sent it: the address of the client at the other end of the
   * connection, as its socket reports it ("127.0.0.1", "::1"), or "-" when
   * there is no such peer (an in-memory connection, unless inject() was
   * told whom its input stands for, as the wire view tells it).
   * Not part of the message: the connection tells its parser once, and the
   * parser puts it on every request it reads, so that a handler, which never
   * sees the socket, can still say who asked. Behind a proxy it is the
   * proxy's address; the client's own is then in the fields the proxy adds.
   */
  readonly peer: string;
}

export type Framing =
  | { readonly kind: "none" }
  | { readonly kind: "length"; readonly length: number }
  | { readonly kind: "chunked" };

export interface Request extends RequestHead {
  /** The whole body; empty when it was handed out in pieces instead (RequestParser.streamBody). */
  readonly body: Buffer;
  /** A streamed body's trailer fields, flattened: name as sent, value...; undefined when it had none. */
  readonly trailers?: readonly string[];
}

/** The value of a header field (combined with ", " if sent more than once), or undefined. */
export function headerValue(head: RequestHead, name: string): string | undefined {
  const fields = head.fields;
  let found: string | undefined;
  for (let i = 0; i < fields.length; i += 2) {
    if (fields[i] === name) found = found === undefined ? fields[i + 1] : `${found}, ${fields[i + 1]}`;
  }
  return found;
}
