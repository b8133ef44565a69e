// The two failures of a store that are not bugs, as classes the callers can
// tell apart: main.ts prints a StoreOpenError as one line and exits; the API
// answers a StoreUnavailableError with 503 and Retry-After, and keeps serving.

/** Opening failed in a way the operator can fix; the message says how. */
export class StoreOpenError extends Error {
  override readonly name = "StoreOpenError";
}

/**
 * The database server cannot be reached right now (it is down, restarting,
 * or out of connections). Nothing was decided: the same call may well succeed
 * a few seconds later, so callers report it as temporary rather than as a bug.
 */
export class StoreUnavailableError extends Error {
  override readonly name = "StoreUnavailableError";
}
