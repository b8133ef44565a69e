// How values arrive from PostgreSQL. node-postgres turns every timestamptz
// into a Date by default, which the store would only format back into a
// Timestamp string: for a list of posts, that round trip was about a sixth of
// the CPU of the whole request. Instead each connection is put in UTC with ISO
// output, and the text PostgreSQL sends is rewritten into the canonical
// Timestamp with a few string operations.

import pg from "pg";
import type { CustomTypesConfig } from "pg";
import type { Timestamp } from "./types.js";

/** Run on every new connection, before it serves a call: the form `timestampFromText` reads. */
export const SESSION_SETUP = "SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'";

const TIMESTAMPTZ = 1184;

/** "2025-01-31 12:00:00.5+00" as PostgreSQL writes it in UTC/ISO. */
const ISO_UTC = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?\+00$/;

/** PostgreSQL's text of a timestamptz, in a session set up by SESSION_SETUP, as a Timestamp. */
export function timestampFromText(text: string): Timestamp {
  const m = ISO_UTC.exec(text);
  // Anything else means the session is not as SESSION_SETUP left it: a bug, not a value to guess at.
  if (m === null) throw new Error(`unexpected timestamptz text from PostgreSQL: ${JSON.stringify(text)}`);
  // The store writes milliseconds; the server drops trailing zeros ("12:00:00.5"), so pad them back.
  return `${m[1]}T${m[2]}.${(m[3] ?? "").padEnd(3, "0").slice(0, 3)}Z`;
}

export const TYPES: CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === TIMESTAMPTZ && format !== "binary" ? timestampFromText : pg.types.getTypeParser(oid, format as "text")) as CustomTypesConfig["getTypeParser"],
};
