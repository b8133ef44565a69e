// RFC 9457 problem details: the one shape of every error this server sends.

import { problemSlug, PROTOCOL_ERRORS, type ProtocolError } from "../parse/errors.js";
import type { FieldValue, Response } from "./response.js";
import { reasonPhrase } from "./status.js";

export interface Problem {
  /** A stable URI reference per kind of error, e.g. "/problems/not-found". */
  readonly type: string;
  readonly title: string;
  readonly status: number;
  /** What went wrong with this request, and what to do about it. */
  readonly detail: string;
  /** The request target the problem is about. */
  readonly instance: string;
}

export interface ProblemInit {
  /** Short slug appended to /problems/; defaults to the status's reason phrase in kebab case. */
  readonly kind?: string;
  readonly title?: string;
  readonly detail: string;
  readonly instance?: string;
  readonly headers?: Readonly<Record<string, FieldValue>>;
  /** Extension members (RFC 9457 §3.2), e.g. the parser's error code and byte offset. */
  readonly extensions?: Readonly<Record<string, unknown>>;
}

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");
}

export function problem(status: number, init: ProblemInit): Response {
  const reason = reasonPhrase(status);
  const body: Problem & Record<string, unknown> = {
    type: `/problems/${init.kind ?? slug(reason)}`,
    title: init.title ?? reason,
    status,
    detail: init.detail,
    instance: init.instance ?? "",
    ...init.extensions,
  };
  return {
    status,
    headers: { "Content-Type": PROBLEM_CONTENT_TYPE, ...init.headers },
    body: JSON.stringify(body),
  };
}

/** The problem response for a broken request; the instance is its target when one was read. */
export function protocolProblem(error: ProtocolError, instance: string): Response {
  const kind = PROTOCOL_ERRORS[error.code];
  return problem(error.status, {
    kind: problemSlug(error.code),
    title: kind.title,
    detail: error.detail,
    instance,
    extensions: { code: error.code, offset: error.offset },
  });
}

/**
 * Thrown by a handler (or a helper it calls) to answer with a problem
 * instead of a result: `throw new HttpError(problem(415, {...}))`. The
 * connection sends its response as is; it is an answer, not a failure, so it
 * is not logged as one.
 */
export class HttpError extends Error {
  override readonly name = "HttpError";
  readonly response: Response;
  constructor(response: Response) {
    super(`HTTP ${response.status}`);
    this.response = response;
  }
}

/** Throw a problem response: `fail(404, { detail: "..." })`. */
export function fail(status: number, init: ProblemInit): never {
  throw new HttpError(problem(status, init));
}
