// The line memory (line-memory.ts): a parser that remembers the lines of the
// heads it read must answer exactly what a fresh parser answers for each of
// them, whatever repeats, whatever the limits; and the memory itself recalls
// a line only when every byte of it repeats, whole, within the room given.

import assert from "node:assert/strict";
import fc from "fast-check";
import t from "tap";
import { LineMemory, MISSES, QUIET, SLOT_BYTES, SLOTS } from "../../src/http/parse/line-memory.js";
import { DEFAULT_LIMITS, RequestParser, type ParserLimits } from "../../src/http/parse/parser.js";
import type { RequestLine } from "../../src/http/parse/request-line.js";
import { bytes, errorOf, feedAt, feedPieces, feedWhole, type SeenEvent } from "./fixtures/helpers.js";
import { smallLimitsArb } from "./fixtures/generators.js";

const LINE: RequestLine = { method: "GET", target: "/a", path: "/a", query: "", minor: 1, absoluteHost: null };

/** A read as a socket delivers it: a buffer of its own, exactly as long. */
function read(s: string): Buffer {
  const b = Buffer.allocUnsafeSlow(s.length);
  b.write(s, "latin1");
  return b;
}

/** The same bytes inside a larger buffer, as a transport that reads into one might hand them on. */
function inLarge(s: string): Buffer {
  return Buffer.alloc(4097 + s.length).fill(s, 4097, undefined, "latin1").subarray(4097);
}

/** A memory past a connection's first head, when its places are made. */
function armed(): LineMemory {
  const memory = new LineMemory();
  const line = read("GET /first HTTP/1.1\r\n");
  memory.keepRequestLine(line, 0, line.length - 1, LINE);
  memory.keepRequestLine(line, 0, line.length - 1, LINE);
  return memory;
}

t.test("a connection's first head is not kept: one that sends a single request and stays open holds nothing", (t) => {
  const memory = new LineMemory();
  const line = read("GET /a HTTP/1.1\r\n");
  const field = read("Host: h\r\n");
  memory.keepRequestLine(line, 0, line.length - 1, LINE);
  memory.keepField(field, 0, field.length - 1, 1, "host", "h");
  t.equal(memory.recall(line, 0, 0, 100), -1);
  t.equal(memory.recall(field, 0, 1, 100), -1);
  t.equal((memory as unknown as { bytes: Buffer }).bytes.length, 0, "no place made");
  memory.keepRequestLine(line, 0, line.length - 1, LINE);
  memory.keepField(field, 0, field.length - 1, 1, "host", "h");
  t.equal(memory.recall(line, 0, 0, 100), line.length - 1, "the second head is kept");
  t.equal(memory.recall(field, 0, 1, 100), field.length - 1);
  t.end();
});

for (const [kind, make] of [
  ["a read of its own", read],
  ["inside a larger buffer", inLarge],
] as const) {
  t.test(`a line is recalled only when every byte repeats, whole and within the room (${kind})`, (t) => {
    const memory = armed();
    const line = make("Host: example.org\r\n");
    memory.keepField(line, 0, line.length - 1, 1, "host", "example.org");
    t.equal(memory.recall(line, 0, 1, line.length), line.length - 1, "the same bytes: recalled, ending at the LF");
    t.equal(memory.name(1), "host");
    t.equal(memory.value(1), "example.org");
    const later = make("GET / HTTP/1.1\r\nHost: example.org\r\n\r\n");
    t.equal(memory.recall(later, 16, 1, 100), 16 + line.length - 1, "anywhere in a buffer");
    t.equal(memory.recall(line, 0, 2, 100), -1, "only in its own place");
    t.equal(memory.recall(line, 0, 1, line.length - 1), -1, "not when the room left is smaller than the line");
    t.equal(memory.recall(line.subarray(0, line.length - 1), 0, 1, 100), -1, "not when the buffer ends before the LF");
    // A memory of its own per miss: misses running would leave the place alone (next test).
    const probe = (bytes: Buffer) => {
      const fresh = armed();
      fresh.keepField(line, 0, line.length - 1, 1, "host", "example.org");
      return fresh.recall(bytes, 0, 1, 100);
    };
    t.equal(probe(bytes("Host: example.org\r\r\n")), -1, "not when the line is longer");
    t.equal(probe(bytes("Host: example.o\r\n\r\n")), -1, "not when it is shorter");
    for (let i = 0; i < line.length; i++) {
      const changed = Buffer.from(line);
      changed[i] = changed[i]! ^ 0x01;
      assert.equal(probe(changed), -1, `byte ${i} changed`);
    }
    t.pass("not when any one byte differs");
    const other = make("Host: example.net\r\n");
    memory.keepField(other, 0, other.length - 1, 1, "host", "example.net");
    t.equal(memory.recall(line, 0, 1, 100), -1, "a place holds the last line kept in it");
    t.equal(memory.recall(other, 0, 1, 100), other.length - 1);
    t.equal(memory.value(1), "example.net");
    t.end();
  });
}

t.test(`a place whose line differed ${MISSES} heads running is left alone for ${QUIET} heads, then tried again`, (t) => {
  const memory = armed();
  const lines = Array.from({ length: MISSES + 1 }, (_, i) => read(`X: ${i}\r\n`));
  memory.keepField(lines[0]!, 0, 5, 1, "x", "0");
  // Each head brings a new line: a miss, and the new line kept in the place, as the parser does.
  for (let i = 1; i <= MISSES; i++) {
    memory.headTaken();
    t.equal(memory.recall(lines[i]!, 0, 1, 100), -1, `head ${i}: a miss`);
    memory.keepField(lines[i]!, 0, 5, 1, "x", String(i));
  }
  const last = lines[MISSES]!;
  for (let i = 0; i < QUIET; i++) {
    memory.headTaken();
    if (!memory.asleep(1)) t.fail(`quiet head ${i}: awake`);
    if (memory.recall(last, 0, 1, 100) !== -1) t.fail(`quiet head ${i}: recalled`);
    memory.keepField(last, 0, 5, 1, "x", "last");
  }
  t.pass(`${QUIET} heads: asleep and not recalled, though the line repeats`);
  memory.headTaken();
  t.notOk(memory.asleep(1), "then awake");
  t.equal(memory.recall(last, 0, 1, 100), -1, "its first head awake keeps the line again");
  memory.keepField(last, 0, 5, 1, "x", "last");
  memory.headTaken();
  t.equal(memory.recall(last, 0, 1, 100), 5, "then it is recalled again");
  t.equal(memory.value(1), "last");

  // A repeat in between starts the count again: one odd head does not silence a place.
  const steady = armed();
  const a = read("A: a\r\n");
  const b = read("B: b\r\n");
  steady.keepField(a, 0, 5, 1, "a", "a");
  for (let i = 0; i < 10; i++) {
    t.equal(steady.recall(b, 0, 1, 100), -1);
    steady.keepField(b, 0, 5, 1, "b", "b");
    t.equal(steady.recall(b, 0, 1, 100), 5, `round ${i}: recalled after one odd head`);
    t.equal(steady.recall(a, 0, 1, 100), -1);
    steady.keepField(a, 0, 5, 1, "a", "a");
    t.equal(steady.recall(a, 0, 1, 100), 5);
  }
  t.end();
});

t.test("kept lines are copied: a buffer the caller writes into again is read again", (t) => {
  const memory = armed();
  const large = inLarge("X: y\r\n");
  memory.keepField(large, 0, large.length - 1, 1, "x", "y");
  large.fill(0);
  t.equal(memory.recall(bytes("X: y\r\n"), 0, 1, 100), 5, "recalled after the buffer it came in was overwritten");
  t.notOk(
    Object.values(memory).some((v) => Buffer.isBuffer(v) && v.buffer === large.buffer),
    "the memory refers to no buffer of the caller's",
  );

  // One buffer, written and fed three times (a transport that reuses its read buffer):
  // the third head, the same length as the first two, is judged, not recalled.
  const reused = Buffer.allocUnsafeSlow(64);
  const heads = ["GET /a HTTP/1.1\r\nHost: h\r\n\r\n", "GET /a HTTP/1.1\r\nHost: h\r\n\r\n", "DEL\x00/b HTTP/1.1\r\nHost:\x01\x02\r\n\r\n"];
  const events: unknown[] = [];
  const parser = new RequestParser({ onHead() {}, onRequest: (r) => events.push(r.target), onError: (e) => events.push(e.code) }, DEFAULT_LIMITS);
  for (const head of heads) {
    reused.write(head, "latin1");
    parser.feed(reused.subarray(0, head.length));
  }
  t.same(events, ["/a", "/a", "INVALID_METHOD"]);
  t.end();
});

t.test("the memory is bounded: lines longer than a place, and places past the last, are not kept", (t) => {
  const memory = armed();
  const fits = read(`X: ${"a".repeat(SLOT_BYTES - 5)}\r\n`);
  const over = read(`X: ${"a".repeat(SLOT_BYTES - 4)}\r\n`);
  t.equal(fits.length, SLOT_BYTES);
  memory.keepField(fits, 0, fits.length - 1, 3, "x", "a");
  t.equal(memory.recall(fits, 0, 3, 10_000), fits.length - 1, `a line of ${SLOT_BYTES} bytes is kept`);
  memory.keepField(over, 0, over.length - 1, 3, "x", "a");
  t.equal(memory.recall(fits, 0, 3, 10_000), -1, "a longer line empties its place");
  t.equal(memory.recall(over, 0, 3, 10_000), -1, `a line of ${SLOT_BYTES + 1} bytes is not kept`);
  memory.keepField(fits, 0, fits.length - 1, SLOTS, "x", "a");
  t.equal(memory.recall(fits, 0, SLOTS, 10_000), -1, `there are ${SLOTS} places`);
  const request = read("GET /a HTTP/1.1\r\n");
  memory.keepRequestLine(request, 0, request.length - 1, LINE);
  t.equal(memory.recall(request, 0, 0, 10_000), request.length - 1);
  t.equal(memory.line, LINE, "the request line's meaning is kept whole");
  t.end();
});

// ---- One parser over many heads against a fresh parser for each ----

const REQUEST_LINES = [
  "GET /api/v1/status HTTP/1.1",
  "GET /api/v1/statuz HTTP/1.1",
  "GET /api/v1/status HTTP/1.0",
  "POST /p?x=1 HTTP/1.1",
  "UPDATE /p HTTP/1.1",
  "OPTIONS * HTTP/1.1",
  "GET * HTTP/1.1",
  "CONNECT example.org:443 HTTP/1.1",
  "GET http://example.org:8080/a?b HTTP/1.1",
  `GET /${"x".repeat(SLOT_BYTES - 17)} HTTP/1.1`, // SLOT_BYTES with its CR LF
  `GET /${"x".repeat(SLOT_BYTES - 16)} HTTP/1.1`, // one byte more
];

/** Lines that break nothing alone, so that many heads succeed and fill the memory's places. */
const SOUND_LINES = [
  "Accept: */*",
  "Connection: keep-alive",
  "Content-Length: 3",
  "Expect: 100-continue",
  "X-Empty:",
  "X-Tab:\tv\t",
  `X-Long: ${"v".repeat(SLOT_BYTES - 10)}`, // SLOT_BYTES with its CR LF
  `X-Long: ${"v".repeat(SLOT_BYTES - 9)}`,
];

/** Lines that break a rule alone or beside another, or that end the connection. */
const ODD_LINES = [
  "Host: 127.0.0.1:8081",
  "Host: a b",
  "Content-Length: 03",
  "Content-Length: 5",
  "Content-Length: 1,1",
  "Transfer-Encoding: chunked",
  "Connection: close",
  "Connection: close\xa0",
];

const HOST_LINES = ["Host: 127.0.0.1:8080", "host:127.0.0.1:8080", "Host: [::1]:80", "Host: a b"];

/**
 * A head of lines from the pools, so that lines repeat, in their place and out of it: sound lines at
 * most once each, then maybe one odd line and the Host line, each anywhere. Then the body its framing asks for.
 */
const messageArb: fc.Arbitrary<{ readonly raw: string }> = fc
  .record({
    requestLine: fc.oneof({ arbitrary: fc.constant(REQUEST_LINES[0]!), weight: 3 }, { arbitrary: fc.constantFrom(...REQUEST_LINES), weight: 2 }),
    sound: fc.uniqueArray(fc.constantFrom(...SOUND_LINES), { maxLength: SLOTS + 1 }),
    odd: fc.option(fc.constantFrom(...ODD_LINES), { freq: 4 }),
    host: fc.option(fc.constantFrom(...HOST_LINES), { freq: 10 }),
    places: fc.tuple(fc.nat(), fc.nat()),
  })
  .map(({ requestLine, sound, odd, host, places }) => {
    const fields = [...sound];
    if (odd !== null) fields.splice(places[0] % (fields.length + 1), 0, odd);
    if (host !== null) fields.splice(places[1] % Math.min(fields.length + 1, 3), 0, host);
    let body = "";
    const length = fields.find((f) => /^Content-Length: \d+$/.test(f));
    if (fields.includes("Transfer-Encoding: chunked")) body = "1\r\nz\r\n0\r\n\r\n";
    else if (length !== undefined) body = "b".repeat(Number(length.slice("Content-Length: ".length)));
    return { raw: `${requestLine}\r\n${fields.map((f) => `${f}\r\n`).join("")}\r\n${body}` };
  });

/** What fresh parsers give for the messages one after the other, up to the first that ends the connection. */
function freshEach(messages: readonly { readonly raw: string }[], limits: ParserLimits): SeenEvent[] {
  const events: SeenEvent[] = [];
  for (const m of messages) {
    const { outcome } = feedWhole(bytes(m.raw), limits);
    events.push(...outcome.events);
    if (outcome.closed) break;
  }
  return events;
}

t.test("one parser over many heads answers what a fresh parser answers for each", (t) => {
  const details = fc.check(
    fc.property(
      fc.array(messageArb, { minLength: 3, maxLength: 10 }),
      fc.oneof(fc.constant(DEFAULT_LIMITS), fc.constant({ ...DEFAULT_LIMITS, maxHeaderBytes: 200, maxHeaderCount: 5 }), smallLimitsArb),
      fc.boolean(),
      fc.boolean(),
      (messages, limits, oneRead, large) => {
        const expected = freshEach(messages, limits);
        // Each message in a read of its own, or all in one: either way every head arrives whole.
        const texts = oneRead ? [messages.map((m) => m.raw).join("")] : messages.map((m) => m.raw);
        // Reads of their own, as a socket delivers them, or slices of larger buffers.
        assert.deepEqual(feedPieces(texts.map(large ? inLarge : read), limits).outcome.events, expected);
      },
    ),
    { numRuns: 1500, includeErrorInReport: true },
  );
  t.notOk(details.failed, `${details.numRuns} runs${details.failed ? `\n${fc.defaultReportMessage(details) ?? ""}` : ""}`);
  t.end();
});

t.test("context the memory cannot know is judged for every head", (t) => {
  const limits = { ...DEFAULT_LIMITS, maxHeaderBytes: 40 };
  const first = "GET / HTTP/1.1\r\nHost: h\r\nX-Twenty-Bytes: 0123\r\n\r\n";
  // The same field line in the same place, but with less room before it: 431, as a fresh parser says.
  const second = "GET / HTTP/1.1\r\nHost: hhhhhhhhhhhhhhhhhhhhhh\r\nX-Twenty-Bytes: 0123\r\n\r\n";
  const { outcome } = feedAt(bytes(first + second), [first.length], limits);
  t.same(outcome.events.slice(2), freshEach([{ raw: second }], limits));
  t.equal(errorOf(outcome)?.code, "HEADERS_TOO_LARGE");

  // A second Content-Length line, remembered in its place from a head where it was the only one: refused.
  const once = "POST / HTTP/1.1\r\nHost: h\r\nX: y\r\nContent-Length: 1\r\n\r\nb";
  const twice = "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nb";
  const again = feedAt(bytes(once + twice), [once.length], DEFAULT_LIMITS).outcome;
  t.same(again.events.slice(2), freshEach([{ raw: twice }], DEFAULT_LIMITS));
  t.equal(errorOf(again)?.code, "REPEATED_CONTENT_LENGTH");
  t.end();
});
