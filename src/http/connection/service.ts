// What a connection serves: a handler, and optionally a judge of heads that
// may refuse a request before its body is read. Kept apart from the
// connection, which alone applies the judgement (onHead), so that whoever
// makes or wraps a service (the application, the wire view's run) needs
// these types and not the connection.

import type { Request, RequestHead } from "../message/request.js";
import type { Response } from "../message/response.js";

export type Handler = (request: Request) => Response | Promise<Response>;

/**
 * What a service says of a request from its head alone, before any body byte
 * is read: refuse it now (a 415 or 413 it would give anyway, without making
 * the client send and the server read the body first), or admit it with a
 * tighter body limit than the server's. Undefined admits it as it is.
 */
export type Admission = { readonly refuse: Response } | { readonly maxBodyBytes: number } | undefined;

/** A handler, and optionally a judge of heads (see Admission). */
export interface Service {
  readonly handle: Handler;
  readonly admit?: (head: RequestHead) => Admission;
}

/** Either a bare handler or a service; a bare handler admits every head. */
export function asService(service: Handler | Service): Service {
  return typeof service === "function" ? { handle: service } : service;
}

/**
 * The service's word on a head. Only a head that announces a body is judged:
 * refusing early is what saves reading the body (RFC 9110 §15.5.14, §15.5.16).
 */
export function admitHead(admit: Service["admit"], head: RequestHead): Admission {
  return admit === undefined || head.framing.kind === "none" ? undefined : admit(head);
}
