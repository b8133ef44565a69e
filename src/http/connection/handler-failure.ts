// A handler that throws or rejects: an HttpError is an answer it chose; anything
// else is a failure, logged for the operator and answered with a 500 that
// tells the client nothing about the server's insides.

import { HttpError, problem } from "../message/problem.js";
import type { Request } from "../message/request.js";
import type { Response } from "../message/response.js";

const INTERNAL_ERROR_DETAIL = "The server failed while handling this request. The error has been logged; no details are sent to clients.";

export function answerFailure(error: unknown, request: Request | null, onHandlerError: (error: unknown, request: Request | null) => void): Response {
  try {
    if (error instanceof HttpError) return error.response;
  } catch {
    // A Proxy can throw even from instanceof; it is certainly not an HttpError.
  }
  try {
    onHandlerError(error, request);
  } catch {
    // An error whose message or stack getter throws cannot be printed; the client still gets its 500.
    try {
      console.error("startline: a handler failed with an error that could not be logged");
    } catch {
      // stdout/stderr gone: nothing left to tell
    }
  }
  return problem(500, { kind: "internal-error", detail: INTERNAL_ERROR_DETAIL, instance: request?.target ?? "" });
}
