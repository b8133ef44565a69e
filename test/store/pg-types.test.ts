// Timestamps as PostgreSQL writes them in UTC/ISO, into the one Timestamp shape.

import t from "tap";
import { timestampFromText } from "../../src/store/pg-types.js";

t.test("PostgreSQL's timestamptz text becomes an RFC 3339 Timestamp with milliseconds", async (t) => {
  const cases: [string, string][] = [
    ["2025-01-31 12:00:00+00", "2025-01-31T12:00:00.000Z"],
    ["2025-01-31 12:00:00.5+00", "2025-01-31T12:00:00.500Z"],
    ["2025-01-31 12:00:00.05+00", "2025-01-31T12:00:00.050Z"],
    ["2025-01-31 12:00:00.123+00", "2025-01-31T12:00:00.123Z"],
    ["2025-01-31 12:00:00.123456+00", "2025-01-31T12:00:00.123Z"],
    ["1999-12-31 23:59:59.999+00", "1999-12-31T23:59:59.999Z"],
  ];
  for (const [text, timestamp] of cases) {
    t.equal(timestampFromText(text), timestamp, text);
    t.equal(new Date(timestamp).toISOString(), timestamp, "the shape toISOString writes");
  }
});

t.test("any other shape is a bug (a session not in UTC/ISO), not a value to guess at", async (t) => {
  for (const text of ["2025-01-31 13:00:00+01", "2025-01-31 12:00:00-05:30", "Fri Jan 31 12:00:00 2025 UTC", "2025-01-31T12:00:00Z", "infinity"]) {
    t.throws(() => timestampFromText(text), /unexpected timestamptz text/, text);
  }
});
