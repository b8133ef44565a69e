// The one-pass reader of sound lines (clean-line.ts) must take only lines the
// line-by-line judge (line-judge.ts, line-scan.ts) also takes, and find the
// same parts in them: otherwise a whole head and the same head cut in pieces
// could be read differently. Checked at every line start of random and
// mutated requests, with the limits at their defaults and small enough to be
// hit; each run also checks the reader is not vacuous (it takes lines).

import assert from "node:assert/strict";
import fc from "fast-check";
import t from "tap";
import { cleanFieldLine, cleanRequestLine, isPlainLength } from "../../src/http/parse/clean-line.js";
import { LineJudge } from "../../src/http/parse/line-judge.js";
import { endFieldLine, endRequestLine, fieldBounds } from "../../src/http/parse/line-scan.js";
import { DEFAULT_LIMITS, RequestParser, type ParserLimits } from "../../src/http/parse/parser.js";
import { httpishArb, mutate, mutationArb, pipelineArb, smallLimitsArb } from "./fixtures/generators.js";

/** Every index just after an LF, and 0: where a line may start. */
function lineStarts(buf: Buffer): number[] {
  const starts = [0];
  for (let i = buf.indexOf(0x0a); i !== -1; i = buf.indexOf(0x0a, i + 1)) starts.push(i + 1);
  return starts;
}

/** Lines taken by the one-pass reader, checked against the judge; returns how many it took. */
function agree(buf: Buffer, limits: ParserLimits): number {
  const judge = new LineJudge(limits);
  let taken = 0;
  for (const s of lineStarts(buf)) {
    const line = { methodEnd: 0, versionStart: 0 };
    let lf = cleanRequestLine(buf, s, limits.maxRequestLineBytes, line);
    if (lf !== -1) {
      taken++;
      assert.equal(buf[lf], 0x0a, "the request line ends at an LF");
      assert.equal(buf[lf - 1], 0x0d, "after a CR");
      assert.equal(judge.judge(buf, s, lf, "whole", "request-line", limits.maxRequestLineBytes, 0, false), null, `the judge takes ${JSON.stringify(buf.toString("latin1", s, lf))}`);
      assert.equal(endRequestLine(buf, lf - 1, judge.whole), null, "and its end");
      assert.deepEqual([line.methodEnd, line.versionStart], [judge.whole.split, judge.whole.mark], "the same method end and version start");
    }
    // A field line, with the room the whole header section has, and with just enough.
    // (The parser asks only while the section may hold one more field.)
    for (const room of [limits.maxHeaderBytes, buf.indexOf(0x0a, s) + 1 - s]) {
      if (room <= 0 || limits.maxHeaderCount === 0) continue;
      const v = { nameEnd: 0, vs: 0, ve: 0 };
      lf = cleanFieldLine(buf, s, room, v);
      if (lf === -1) continue;
      taken++;
      assert.ok(lf + 1 - s <= room, "the line, CR LF included, fits its room");
      assert.equal(buf[lf - 1], 0x0d, "the field line ends in CR LF");
      const text = JSON.stringify(buf.toString("latin1", s, lf));
      const isLength = buf.toString("latin1", s, v.nameEnd).toLowerCase() === "content-length";
      // The parser hands Content-Length to the one-pass reader only in its plain form, and only once.
      if (isLength && !isPlainLength(buf, v.vs, v.ve)) continue;
      assert.equal(judge.judge(buf, s, lf, "whole", "header-line", room, 0, false), null, `the judge takes ${text}`);
      assert.equal(endFieldLine(buf, lf - 1, judge.whole), null, `and its end, ${text}`);
      assert.deepEqual(fieldBounds(buf, judge.whole.split, lf - 1, { nameEnd: 0, vs: 0, ve: 0 }), v, `the same name and value in ${text}`);
    }
  }
  return taken;
}

t.test("every line the one-pass reader takes, the judge takes, with the same parts", (t) => {
  let taken = 0;
  const inputs = fc.oneof(
    pipelineArb.map(({ raw }) => raw),
    fc.tuple(pipelineArb, fc.array(mutationArb, { minLength: 1, maxLength: 4 })).map(([{ raw }, mutations]) => mutate(raw, mutations)),
    httpishArb,
  );
  const details = fc.check(
    fc.property(inputs, fc.oneof(fc.constant(DEFAULT_LIMITS), smallLimitsArb), (raw, limits) => {
      taken += agree(Buffer.from(raw, "latin1"), limits);
    }),
    { numRuns: 1500, includeErrorInReport: true },
  );
  t.notOk(details.failed, `${details.numRuns} runs${details.failed ? `\n${fc.defaultReportMessage(details) ?? ""}` : ""}`);
  t.ok(taken > 1500, `the reader took lines (${taken})`);
  t.end();
});

t.test("lines the one-pass reader leaves to the judge", (t) => {
  const cases: Array<[string, string]> = [
    ["GET / HTTP/1.1\n", "a bare LF"],
    ["GET / HTTP/1.1\r", "a CR at the end of the buffer"],
    ["GET / HTTP/1.1", "no line end yet"],
    ["GET  / HTTP/1.1\r\n", "two spaces"],
    ["GET / HTTP/2.0\r\n", "another major version"],
    ["GET / HTTP/1.1 \r\n", "a space after the version"],
    [" GET / HTTP/1.1\r\n", "whitespace first"],
    ["GET /a b HTTP/1.1\r\n", "a space in the target"],
    ["GET  HTTP/1.1\r\n", "no target"],
    ["GET\t/ HTTP/1.1\r\n", "a tab after the method"],
    ["GET / HTTP/1.1\r\r\n", "a CR before the CR LF"],
  ];
  for (const [line, why] of cases) {
    t.equal(cleanRequestLine(Buffer.from(line, "latin1"), 0, 8192, { methodEnd: 0, versionStart: 0 }), -1, why);
  }
  t.equal(cleanRequestLine(Buffer.from("GET /status HTTP/1.1\r\n", "latin1"), 0, 20, { methodEnd: 0, versionStart: 0 }), 21, "20 bytes before the CR fit a limit of 20");
  t.equal(cleanRequestLine(Buffer.from("GET /status HTTP/1.1\r\n", "latin1"), 0, 19, { methodEnd: 0, versionStart: 0 }), -1, "but not a limit of 19");

  const fields: Array<[string, string]> = [
    ["Host : a\r\n", "whitespace before the colon"],
    [" Host: a\r\n", "an obs-fold"],
    ["Host: a\rb\r\n", "a bare CR in the value"],
    ["Host: a\x00\r\n", "a NUL in the value"],
    ["Host: a\x7f\r\n", "a DEL in the value"],
    [": a\r\n", "an empty name"],
    ["Host a\r\n", "no colon"],
  ];
  for (const [line, why] of fields) t.equal(cleanFieldLine(Buffer.from(line, "latin1"), 0, 8192, { nameEnd: 0, vs: 0, ve: 0 }), -1, why);
  const v = { nameEnd: 0, vs: 0, ve: 0 };
  t.equal(cleanFieldLine(Buffer.from("X: \t a b \t\r\n", "latin1"), 0, 12, v), 11, "12 bytes with the CR LF fit a room of 12");
  t.same(v, { nameEnd: 1, vs: 5, ve: 8 }, "the value without the OWS around it");
  t.equal(cleanFieldLine(Buffer.from("X: \t a b \t\r\n", "latin1"), 0, 11, v), -1, "but not a room of 11");

  t.ok(isPlainLength(Buffer.from("000000000000000000123456789012345"), 0, 33), "leading zeros do not count");
  t.notOk(isPlainLength(Buffer.from("1234567890123456"), 0, 16), "16 significant digits are the judge's to refuse");
  for (const value of ["", "1,1", "+1", "1 1", "0x1"]) t.notOk(isPlainLength(Buffer.from(value), 0, value.length), JSON.stringify(value));
  t.end();
});

t.test("limits are whole numbers, or the parser refuses them: the two readers draw a limit's edge the same way only then", (t) => {
  for (const bad of [17.5, -1, Number.NaN, Infinity]) {
    t.throws(() => new RequestParser({ onHead() {}, onRequest() {}, onError() {} }, { ...DEFAULT_LIMITS, maxRequestLineBytes: bad }), RangeError, String(bad));
  }
  t.doesNotThrow(() => new RequestParser({ onHead() {}, onRequest() {}, onError() {} }, { ...DEFAULT_LIMITS, maxHeaderCount: 0 }), "0 is a limit");
  t.end();
});
