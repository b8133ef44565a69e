// Telling PostgreSQL failures apart: "the server is not there right now"
// (answer 503 and keep serving; it may be back in a moment) against anything
// else (a bug, or a broken schema: let it surface as one), and saying what
// went wrong at start in one line an operator can act on.

/** SQLSTATEs that mean the server went away or cannot take us now, not that the query was wrong. */
const UNAVAILABLE_STATES = new Set([
  "57P01", // admin_shutdown: the server is stopping
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now: starting up, or in recovery
  "53300", // too_many_connections
  "53000", // insufficient_resources
  "57014", // query_canceled: statement_timeout (postgres.ts) cancelled a statement that waited too long; none of it was applied
]);

/**
 * node-postgres reports a lost or unreachable server with plain Errors of
 * these messages (no code): pg/lib/client.js and pg-pool/index.js.
 */
const UNAVAILABLE_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error and is not queryable|Query read timeout|timeout expired)/;

/** True when `error` says the database cannot be reached, rather than that the query failed. */
export function isUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") {
    // Class 08 is "connection exception"; E... are the socket's own errors (ECONNREFUSED, ECONNRESET, ETIMEDOUT...).
    if (code.startsWith("08") || UNAVAILABLE_STATES.has(code) || /^E[A-Z]+$/.test(code)) return true;
  }
  return UNAVAILABLE_MESSAGES.test(error.message);
}

/** The URL for messages: never the password. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== "") u.password = "***";
    return u.toString();
  } catch {
    return "(DATABASE_URL)";
  }
}

/** One line saying why opening the database failed, and what to do about it. */
export function describeOpenFailure(error: unknown, url: string): string {
  const where = redactUrl(url);
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "28P01" || code === "28000") {
    return `the PostgreSQL server at ${where} refused the credentials (${message}). Check the user and password in DATABASE_URL.`;
  }
  if (code === "3D000") {
    return `the database named in ${where} does not exist (${message}). Create it (createdb), or fix DATABASE_URL.`;
  }
  if (code === "42501") {
    return `the user of ${where} may not create startline's tables (${message}). Grant it CREATE on the database, or run the first start as the owner.`;
  }
  if (isUnavailable(error)) {
    return `cannot reach the PostgreSQL server at ${where} (${message || (typeof code === "string" ? code : "no answer")}). Check that it is running and that DATABASE_URL is right.`;
  }
  return `cannot prepare the PostgreSQL database at ${where}: ${message}`;
}
