// A string unit for fast-check: one code point of any plane, surrogates
// excluded, as `unit: "binary"` draws them, without that unit's cost.

import fc from "fast-check";

const SURROGATES = 0xe000 - 0xd800;

/**
 * Any code point but a surrogate, as a string, for `fc.string({ unit: codePoint })`: the same draws as
 * fast-check's `unit: "binary"` (an index from 0 to 0x10FFFF less the surrogates, surrogates skipped).
 * That unit maps the index through a table, and the first `fc.string` made of it builds the reverse of
 * the table, all 1.1 million code points, to read its list of troublesome strings back into units: 1.2 s
 * of CPU, more than the properties that use it. Here the way back is arithmetic, so the same strings are
 * read back at no cost.
 */
export const codePoint = fc.nat(0x10ffff - SURROGATES).map(
  (index) => String.fromCodePoint(index < 0xd800 ? index : index + SURROGATES),
  (unit) => {
    const point = typeof unit === "string" ? unit.codePointAt(0) : undefined;
    if (point === undefined || String.fromCodePoint(point) !== unit || (point >= 0xd800 && point < 0xe000)) throw new Error("not one code point");
    return point < 0xd800 ? point : point - SURROGATES;
  },
);
