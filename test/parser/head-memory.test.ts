// The head memory (head-memory.ts): a parser that remembers the last head it
// read must answer exactly what a fresh parser answers for each head, report
// the same parts, whatever repeats, however the reads are cut, whatever the
// limits; and the memory itself recalls a head only when every byte of it
// repeats, whole.

import assert from "node:assert/strict";
import fc from "fast-check";
import t from "tap";
import { HeadMemory, MAX_HEAD_BYTES, MISSES, QUIET, SCRATCH_BYTES } from "../../src/http/parse/head-memory.js";
import { DEFAULT_LIMITS, RequestParser, type ParserLimits } from "../../src/http/parse/parser.js";
import type { RequestLine } from "../../src/http/parse/request-line.js";
import type { Request, RequestHead } from "../../src/http/message/request.js";
import type { SpanKind } from "../../src/http/parse/spans.js";
import { Driver } from "./fixtures/drive.js";
import { bytes, feedPieces, type SeenEvent } from "./fixtures/helpers.js";
import { smallLimitsArb } from "./fixtures/generators.js";

const LINE: RequestLine = { method: "GET", target: "/a", path: "/a", query: "", minor: 1, absoluteHost: null };
const HEAD: Request = { method: "GET", target: "/a", path: "/a", query: "", minor: 1, fields: ["host", "h"], host: "h", framing: { kind: "none" }, keepAlive: true, expectContinue: false, peer: "-", body: Buffer.alloc(0) };

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

/** Keeps buf as a whole head, its empty line its last two bytes, as the parser does at the end of a head it read. */
function keep(memory: HeadMemory, buf: Buffer): void {
  memory.headTaken();
  memory.keep(buf, 0, buf.length, buf.length - 2, LINE, HEAD);
}

/** The parser numbers its reads; here every recall is of a read of its own, unless a test says otherwise. */
let reads = 0;
function recallIn(memory: HeadMemory, buf: Buffer, pos: number): number {
  return memory.recall(buf, pos, ++reads);
}

/** A memory past a connection's first head, when it starts keeping heads. */
function armed(): HeadMemory {
  const memory = new HeadMemory();
  memory.headTaken();
  return memory;
}

t.test("a connection's first head is not kept: one that sends a single request and stays open holds nothing", (t) => {
  const memory = new HeadMemory();
  const head = read("GET /a HTTP/1.1\r\nHost: h\r\n\r\n");
  keep(memory, head);
  t.equal(recallIn(memory, head, 0), 0);
  t.equal((memory as unknown as { bytes: Buffer }).bytes.length, 0, "nothing allocated");
  keep(memory, head);
  t.equal(recallIn(memory, head, 0), head.length, "the second head is kept");
  t.equal(memory.head, HEAD);
  t.equal(memory.line, LINE);
  t.equal(memory.blank, head.length - 2);
  t.end();
});

for (const [kind, make] of [
  ["a read of its own", read],
  ["inside a larger buffer", inLarge],
] as const) {
  t.test(`a head is recalled only when every byte repeats, whole (${kind})`, (t) => {
    const text = "GET /a HTTP/1.1\r\nHost: example.org\r\n\r\n";
    const head = make(text);
    const probe = (buf: Buffer, pos = 0) => {
      const memory = armed();
      keep(memory, head);
      return recallIn(memory, buf, pos);
    };
    t.equal(probe(head), head.length, "the same bytes: recalled, whole");
    t.equal(probe(make(`${text}POST /b HTTP/1.1\r\n`)), head.length, "followed by more");
    t.equal(probe(make(`\r\n${text}`), 2), head.length, "anywhere in a buffer");
    t.equal(probe(head.subarray(0, head.length - 1)), 0, "not when the read ends before the last LF");
    t.equal(probe(bytes("GET /a HTTP/1.1\r\nHost: example.org\r\nX: y\r\n\r\n")), 0, "not when it is longer");
    t.equal(probe(bytes("GET /a HTTP/1.1\r\nHost: example.or\r\n\r\n")), 0, "not when it is shorter");
    // Every byte, wherever the head starts in a word (the compare reads four bytes at a time), in reads short
    // enough to be compared word by word and in ones so long that they are compared byte by byte where they lie.
    for (const before of [0, 1, 2, 3]) {
      for (const after of [0, SCRATCH_BYTES]) {
        const framed = (h: Buffer) => Buffer.concat([Buffer.alloc(before, 0x41), h, Buffer.alloc(after, 0x41)]);
        assert.equal(probe(framed(head), before), head.length, `the same bytes, at ${before}, ${after} after`);
        for (let i = 0; i < head.length; i++) {
          const changed = Buffer.from(head);
          changed[i] = changed[i]! ^ 0x01;
          assert.equal(probe(framed(changed), before), 0, `byte ${i} changed, at ${before}, ${after} after`);
        }
      }
    }
    t.pass("not when any one byte differs, wherever the head lies in the read");
    const memory = armed();
    keep(memory, head);
    const other = make("GET /b HTTP/1.1\r\nHost: example.org\r\n\r\n");
    keep(memory, other);
    t.equal(recallIn(memory, head, 0), 0, "the memory holds the last head kept");
    t.equal(recallIn(memory, other, 0), other.length);
    t.end();
  });
}

t.test("a read is copied once for all the heads it holds, and the copy is never taken for another memory's or another read's", (t) => {
  const text = "GET /a HTTP/1.1\r\nHost: example.org\r\n\r\n";
  const other = "GET /b HTTP/1.1\r\nHost: example.org\r\n\r\n";
  const a = armed();
  const b = armed();
  keep(a, read(text));
  keep(b, read(text));
  // Two heads in one read, the second wherever it starts in a word.
  for (const gap of [0, 1, 2, 3]) {
    const pipelined = read(text + "x".repeat(gap) + text);
    const second = text.length + gap;
    t.equal(a.recall(pipelined, 0, ++reads), text.length, `the first head (gap ${gap})`);
    t.equal(a.recall(pipelined, second, reads), text.length, `the second, from the same copy (gap ${gap})`);
  }
  // Memory a's read holds a head it does not keep after the one it does; b's read, with the same number
  // (each parser counts its own reads), holds the kept head twice. Taken from b's copy, a's second head
  // would be recalled as the head it is not.
  const mine = read(text + other);
  const theirs = read(text + text);
  const n = ++reads;
  t.equal(a.recall(mine, 0, n), text.length);
  t.equal(b.recall(theirs, 0, n), text.length);
  t.equal(a.recall(mine, text.length, n), 0, "another memory's copy is not this read");
  // One buffer handed to two parsers in turn, written again in between, each at its read number n.
  const shared = read(text);
  const m = ++reads;
  t.equal(a.recall(shared, 0, m), text.length);
  shared.write(other, 0, "latin1");
  t.equal(b.recall(shared, 0, m), 0, "another memory's read of the same buffer is copied again");
  // The same buffer, written again and announced as a new read: copied again.
  const reused = read(text + text);
  t.equal(a.recall(reused, text.length, ++reads), text.length);
  reused.write(other, text.length, "latin1");
  t.equal(a.recall(reused, text.length, ++reads), 0, "a new read of the same buffer is copied again");
  t.end();
});

t.test(`heads that differed ${MISSES} times running are left alone for ${QUIET} heads, then tried again`, (t) => {
  const memory = armed();
  const heads = Array.from({ length: MISSES + 1 }, (_, i) => read(`GET /${i} HTTP/1.1\r\n\r\n`));
  keep(memory, heads[0]!);
  // Each head is a new one: a miss, and the new head kept, as the parser does.
  for (let i = 1; i <= MISSES; i++) {
    t.equal(recallIn(memory, heads[i]!, 0), 0, `head ${i}: a miss`);
    keep(memory, heads[i]!);
  }
  const last = heads[MISSES]!;
  for (let i = 0; i < QUIET; i++) {
    if (recallIn(memory, last, 0) !== 0) t.fail(`quiet head ${i}: recalled`);
    keep(memory, last);
  }
  t.pass(`the next ${QUIET} heads: not recalled, though the head repeats`);
  t.equal(recallIn(memory, last, 0), 0, "the first head after them is read...");
  keep(memory, last);
  t.equal(recallIn(memory, last, 0), last.length, "...and kept: the next is recalled again");

  // A repeat in between starts the count again: one odd head does not silence the memory.
  const steady = armed();
  const a = read("GET /a HTTP/1.1\r\n\r\n");
  const b = read("GET /b HTTP/1.1\r\n\r\n");
  keep(steady, a);
  for (let i = 0; i < 10; i++) {
    t.equal(recallIn(steady, b, 0), 0);
    keep(steady, b);
    t.equal(recallIn(steady, b, 0), b.length, `round ${i}: recalled after one odd head`);
    steady.headTaken();
    t.equal(recallIn(steady, a, 0), 0);
    keep(steady, a);
    t.equal(recallIn(steady, a, 0), a.length);
    steady.headTaken();
  }
  t.end();
});

t.test("kept heads are copied: a buffer the caller writes into again is read again", (t) => {
  const memory = armed();
  const text = "GET /a HTTP/1.1\r\nHost: h\r\n\r\n";
  const large = inLarge(text);
  keep(memory, large);
  large.fill(0);
  t.equal(recallIn(memory, bytes(text), 0), text.length, "recalled after the buffer it came in was overwritten");
  t.notOk(
    Object.values(memory).some((v) => Buffer.isBuffer(v) && v.buffer === large.buffer),
    "the memory refers to no buffer of the caller's",
  );

  // One buffer, written and fed four times (a transport that reuses its read buffer):
  // the fourth head, the same length as the first three, is judged, not recalled.
  const reused = Buffer.allocUnsafeSlow(64);
  const heads = [text, text, text, "DEL\x00/b HTTP/1.1\r\nHost: \x01\r\n\r\n"];
  t.equal(heads[3]!.length, text.length);
  const events: unknown[] = [];
  const driver = new Driver(new RequestParser(DEFAULT_LIMITS), { onRequest: (r) => events.push(r.target), onError: (e) => events.push(e.code) });
  for (const head of heads) {
    reused.write(head, "latin1");
    driver.feed(reused.subarray(0, head.length));
  }
  t.same(events, ["/a", "/a", "/a", "INVALID_METHOD"]);
  t.end();
});

t.test(`the memory is bounded: a head of ${MAX_HEAD_BYTES} bytes is kept, a longer one is not`, (t) => {
  const fits = read(`GET /${"x".repeat(MAX_HEAD_BYTES - 18)} HTTP/1.1\r\n\r\n`);
  t.equal(fits.length, MAX_HEAD_BYTES);
  const over = read(`GET /${"x".repeat(MAX_HEAD_BYTES - 17)} HTTP/1.1\r\n\r\n`);
  const memory = armed();
  keep(memory, fits);
  t.equal(recallIn(memory, fits, 0), fits.length, "kept");
  keep(memory, over);
  t.equal(recallIn(memory, over, 0), 0, "not kept");
  t.equal(recallIn(memory, fits, 0), 0, "and the head kept before is let go...");
  const held = memory as unknown as { bytes: Buffer; request: Request | null; requestLine: RequestLine | null };
  t.equal(held.request, null, "...with the request it meant");
  t.equal(held.requestLine, null);

  // The copy grows as longer heads come, but never past the bound.
  const growing = armed();
  keep(growing, read(`GET /${"x".repeat(600 - 18)} HTTP/1.1\r\n\r\n`));
  keep(growing, read(`GET /${"x".repeat(1000 - 18)} HTTP/1.1\r\n\r\n`));
  t.ok((growing as unknown as { bytes: Buffer }).bytes.length <= MAX_HEAD_BYTES, `the copy holds at most ${MAX_HEAD_BYTES} bytes`);
  t.end();
});

t.test("a head sent a byte at a time is read as a fresh parser reads it, and costs the memory nothing", (t) => {
  // A client that sends its heads in pieces of one byte: each head is cut by reads, so none is kept, and each
  // read costs one check of the kept head's length against what the read holds.
  const text = "GET /a HTTP/1.1\r\nHost: h\r\n\r\n";
  const { driver, events } = recording(DEFAULT_LIMITS);
  for (let i = 0; i < 4; i++) for (let j = 0; j < text.length; j++) driver.feed(read(text[j]!));
  t.same(events, freshEach([text, text, text, text], DEFAULT_LIMITS).events);
  const memory = (driver.parser as unknown as { memory: { bytes: Buffer; length: number } }).memory;
  t.equal(memory.length, 0, "no head kept");
  t.equal(memory.bytes.length, 0, "no copy made");
  t.end();
});

// ---- One parser over many heads against a fresh parser for each ----

/** A parser, and a driver that records what it hands out and the parts it reports, and the requests themselves. */
function recording(limits: ParserLimits, onHead: (driver: Driver, head: RequestHead) => void = () => {}, onContinue: () => void = () => {}, onRequest: (driver: Driver) => void = () => {}) {
  const events: SeenEvent[] = [];
  const spans: [SpanKind, number, number][] = [];
  const requests: Request[] = [];
  const parser = new RequestParser(limits, { span: (kind, start, end) => spans.push([kind, start, end]) });
  const driver: Driver = new Driver(
    parser,
    {
      onHead: (head) => {
        // What the connection reads while it answers from the head (a refusal's target, the log line).
        assert.equal(parser.current.method, head.method);
        assert.equal(parser.current.target, head.target);
        events.push({ kind: "head", method: head.method, target: head.target });
        onHead(driver, head);
      },
      onContinue,
      onRequest: (r) => {
        onRequest(driver);
        requests.push(r);
        events.push({ kind: "request", method: r.method, target: r.target, path: r.path, query: r.query, minor: r.minor, host: r.host, keepAlive: r.keepAlive, expectContinue: r.expectContinue, framing: r.framing.kind === "length" ? r.framing.length : r.framing.kind, fields: pairsOf(r.fields), body: r.body.toString("latin1") });
      },
      onError: (e) => events.push({ kind: "error", code: e.code, status: e.status, detail: e.detail, offset: e.offset }),
    },
  );
  return { driver, events, spans, requests };
}

function pairsOf(fields: readonly string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < fields.length; i += 2) out.push([fields[i]!, fields[i + 1]!]);
  return out;
}

t.test("a head that repeats is handed on as what it meant, without being read again", (t) => {
  const text = "GET /api/v1/status HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n";
  const { driver, requests } = recording(DEFAULT_LIMITS);
  for (let i = 0; i < 4; i++) driver.feed(read(text));
  t.equal(requests.length, 4);
  t.not(requests[1]!.fields, requests[0]!.fields, "the first head is read");
  t.equal(requests[2]!.fields, requests[1]!.fields, "the second is read and kept: from the third on, what it meant is handed on again");
  t.equal(requests[3]!.fields, requests[1]!.fields);
  t.same(requests[3], requests[0]);
  t.not(requests[2], requests[1], "each request an object of its own: what one handler attaches to it, no other sees");
  t.not(requests[3], requests[2]);
  t.ok(Object.isFrozen(requests[3]!.fields), "and the fields they share cannot be changed by one of them");
  const changed = read(text.replace("8080", "8081"));
  driver.feed(changed);
  t.not(requests[4]!.fields, requests[3]!.fields, "a head that differs is read");
  t.equal(requests[4]!.host, "127.0.0.1:8081");
  t.end();
});

t.test("what depends on more than the head is asked for every head, recalled or read", (t) => {
  // The handler lowers the body limit for the fourth head only (a route that takes 2 bytes): the 413 comes though the head is recalled.
  const text = "POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n";
  let heads = 0;
  const continued: number[] = [];
  const { driver, events, requests } = recording(
    DEFAULT_LIMITS,
    (d) => {
      heads++;
      if (heads === 4) d.parser.limitBody(2);
    },
    () => continued.push(heads),
  );
  for (let i = 0; i < 4; i++) driver.feed(read(`${text}abc`));
  t.equal(requests.length, 3, "three requests within the limit");
  t.equal(requests[2]!.body.toString(), "abc");
  t.same(continued, [1, 2, 3], "each told to send its body, the refused one never");
  t.match(events.at(-1), { kind: "error", code: "CONTENT_TOO_LARGE", status: 413, detail: /^Content-Length announces 3 bytes; \/p takes at most 2; that limit is this resource's own/, offset: text.length - 2 });
  t.end();
});

const REQUEST_LINES = [
  "GET /api/v1/status HTTP/1.1",
  "GET /api/v1/statuz HTTP/1.1",
  "GET /api/v1/status HTTP/1.0",
  "POST /p?x=1 HTTP/1.1",
  "UPDATE /p HTTP/1.1",
  "OPTIONS * HTTP/1.1",
  "CONNECT example.org:443 HTTP/1.1",
  "GET http://example.org:8080/a?b HTTP/1.1",
];

/** Lines that break nothing alone. */
const SOUND_LINES = ["Accept: */*", "Connection: keep-alive", "Content-Length: 3", "Expect: 100-continue", "X-Empty:", "X-Tab:\tv\t", `X-Long: ${"v".repeat(MAX_HEAD_BYTES - 60)}`];

/** Lines that break a rule alone or beside another, or that end the connection. */
const ODD_LINES = ["Host: 127.0.0.1:8081", "Host: a b", "Content-Length: 03", "Content-Length: 5", "Content-Length: 1,1", "Transfer-Encoding: chunked", "Connection: close", "Connection: close\xa0"];

const HOST_LINES = ["Host: 127.0.0.1:8080", "host:127.0.0.1:8080", "Host: [::1]:80", "Host: a b"];

/** A head from small pools, so that whole heads repeat often; then the body its framing asks for. */
const messageArb: fc.Arbitrary<string> = fc
  .record({
    requestLine: fc.oneof({ arbitrary: fc.constant(REQUEST_LINES[0]!), weight: 4 }, { arbitrary: fc.constantFrom(...REQUEST_LINES), weight: 1 }),
    sound: fc.oneof({ arbitrary: fc.constant([] as string[]), weight: 3 }, { arbitrary: fc.uniqueArray(fc.constantFrom(...SOUND_LINES), { maxLength: 3 }), weight: 1 }),
    odd: fc.option(fc.constantFrom(...ODD_LINES), { freq: 6 }),
    host: fc.option(fc.constantFrom(...HOST_LINES), { freq: 10 }),
  })
  .map(({ requestLine, sound, odd, host }) => {
    const fields = [...sound];
    if (odd !== null) fields.push(odd);
    if (host !== null) fields.unshift(host);
    let body = "";
    const length = fields.find((f) => /^Content-Length: \d+$/.test(f));
    if (fields.includes("Transfer-Encoding: chunked")) body = "1\r\nz\r\n0\r\n\r\n";
    else if (length !== undefined) body = "b".repeat(Number(length.slice("Content-Length: ".length)));
    return `${requestLine}\r\n${fields.map((f) => `${f}\r\n`).join("")}\r\n${body}`;
  });

/** What fresh parsers give for the messages one after the other, up to the first that ends the connection, and the parts they report, placed in the stream. */
function freshEach(messages: readonly string[], limits: ParserLimits): { events: SeenEvent[]; spans: [SpanKind, number, number][] } {
  const events: SeenEvent[] = [];
  const spans: [SpanKind, number, number][] = [];
  let at = 0;
  for (const m of messages) {
    const fresh = recording(limits);
    fresh.driver.feed(bytes(m));
    events.push(...fresh.events);
    for (const [kind, start, end] of fresh.spans) spans.push([kind, at + start, at + end]);
    at += m.length;
    if (fresh.driver.parser.closed) break;
  }
  return { events, spans };
}

/** Body bytes are reported a piece per read: pieces that follow one another are joined, so that reads cut anywhere compare. */
function joined(spans: readonly [SpanKind, number, number][]): [SpanKind, number, number][] {
  const out: [SpanKind, number, number][] = [];
  for (const [kind, start, end] of spans) {
    const last = out.at(-1);
    if (last !== undefined && last[0] === kind && last[2] === start && (kind === "body" || kind === "chunk-data")) last[2] = end;
    else out.push([kind, start, end]);
  }
  return out;
}

t.test("one parser over many heads answers, and reports, what a fresh parser does for each", (t) => {
  let recalled = 0;
  const details = fc.check(
    fc.property(
      // A few messages, sent in a random order: whole heads repeat, in a row and not.
      fc.array(messageArb, { minLength: 1, maxLength: 3 }).chain((pool) => fc.array(fc.constantFrom(...pool), { minLength: 3, maxLength: 10 })),
      fc.oneof(fc.constant(DEFAULT_LIMITS), fc.constant({ ...DEFAULT_LIMITS, maxHeaderBytes: 200, maxHeaderCount: 5 }), smallLimitsArb),
      fc.constantFrom("each", "one", "cut"),
      fc.boolean(),
      fc.array(fc.nat(), { maxLength: 4 }),
      fc.boolean(),
      (messages, limits, reads, large, cutsAt, pausing) => {
        const expected = freshEach(messages, limits);
        const whole = messages.join("");
        let texts: string[];
        if (reads === "each") texts = messages;
        else if (reads === "one") texts = [whole];
        else {
          // Cut anywhere: a head cut by a read, or one with a line carried over, must be read as well as a whole one.
          const cuts = [...new Set(cutsAt.map((c) => c % whole.length))].sort((a, b) => a - b);
          texts = [...cuts, whole.length].map((c, i, all) => whole.slice(i === 0 ? 0 : all[i - 1], c)).filter((s) => s.length > 0);
        }
        // A connection that pauses after each request and resumes once it has answered (its bytes wait in the parser).
        let paused = 0;
        const one = recording(limits, undefined, undefined, (p) => {
          if (!pausing) return;
          p.pause();
          paused++;
        });
        const resumeAll = () => {
          for (let left = paused; left > 0; left = paused) {
            paused = 0;
            one.driver.resume();
          }
        };
        for (const text of texts) {
          one.driver.feed((large ? inLarge : read)(text));
          resumeAll();
        }
        assert.deepEqual(one.events, expected.events);
        assert.deepEqual(joined(one.spans), joined(expected.spans));
        // The same requests from the parser without a span listener, as a socket's is.
        assert.deepEqual(feedPieces(texts.map(read), limits).outcome.events, expected.events);
        for (let i = 1; i < one.requests.length; i++) if (one.requests[i]!.fields === one.requests[i - 1]!.fields) recalled++;
      },
    ),
    { numRuns: 1500, includeErrorInReport: true },
  );
  t.notOk(details.failed, `${details.numRuns} runs${details.failed ? `\n${fc.defaultReportMessage(details) ?? ""}` : ""}`);
  t.ok(recalled > 100, `heads were recalled (${recalled} of the requests), so the runs tried the memory`);
  t.end();
});

t.test("empty lines before a request line are read, and do not count against the memory", (t) => {
  const text = "GET /a HTTP/1.1\r\nHost: h\r\n\r\n";
  // MISSES empty lines before each head, in the read that holds the head: counted as misses, they would silence the memory.
  const messages = Array.from({ length: 3 + MISSES }, (_, i) => (i < 2 ? text : `${"\r\n".repeat(MISSES)}${text}`));
  const { driver, requests, spans, events } = recording(DEFAULT_LIMITS);
  for (const m of messages) driver.feed(read(m));
  t.equal(requests.length, messages.length);
  t.equal(requests.at(-1)!.fields, requests[1]!.fields, "every head after the second recalled, an empty line before each");
  t.same(events, freshEach(messages, DEFAULT_LIMITS).events);
  t.equal(spans.filter(([kind]) => kind === "empty-line").length, MISSES * (messages.length - 2));
  t.end();
});

t.test("a head whose request line was cut by a read is not kept under other bytes", (t) => {
  // The second head's request line is carried over from one read to the next: its bytes are in the parser's copy,
  // not in the read that holds the rest of the head. Were that head kept, the read's bytes would be taken as it.
  const pieces = ["GET / HTTP/1.1\r\nHost: h\r\n\r\n", "GET", " / HTTP/1.1\r\nHost: h\r\n\r\n", " / HTTP/1.1\r\nHost: h\r\n\r\n"];
  const { driver, events } = recording(DEFAULT_LIMITS);
  for (const piece of pieces) driver.feed(read(piece));
  t.same(events, freshEach([pieces.join("")], DEFAULT_LIMITS).events);
  t.equal(events.at(-1)?.kind, "error", "the fourth piece is no request");
  t.end();
});

// Bytes may be received between two asks, while earlier ones are still held (a connection that reads its
// socket while the parser is not asked, a harness replaying bytes from a reaction): they come after every
// byte received before them, as if the client had sent them next. Each stream is fed twice: to a parser
// given the extra bytes right after the head or request of a chosen one, with the rest of that read still
// held, and to one given them as the read after that one. Everything the two report must agree: heads,
// requests, errors, parts.
t.test("bytes received while earlier ones are held come after them, as the client's next read would", (t) => {
  const text = "GET /a HTTP/1.1\r\nHost: h\r\n\r\n";
  const cases: { name: string; reads: string[]; at: number; extra: string }[] = [
    // The extra bytes begin a head the outer read's rest would otherwise end (an earlier bug kept it as GET /x).
    { name: "a head's start, fed before an empty line", reads: [text, text, `${text}\r\n`, `${text}\r\n`, `${text}\r\n`], at: 3, extra: "GET /x HTTP/1.1\r\nHost: h\r\n" },
    { name: "a whole head, between two pipelined ones", reads: [text, text, text + text + text, text], at: 3, extra: "GET /x HTTP/1.1\r\nHost: h\r\n\r\n" },
    { name: "the same head, between two", reads: [text, text, text + text, text], at: 3, extra: text },
    { name: "a field line", reads: [text, text, text + text], at: 3, extra: "X: 1\r\n" },
    { name: "a body's bytes", reads: [text, "POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nab", "c", text], at: 2, extra: "zz" },
  ];
  for (const c of cases) {
    for (const hook of ["onHead", "onRequest"] as const) {
      let seen = 0;
      const feedExtra = (p: Driver) => {
        if (++seen === c.at) p.feed(read(c.extra));
      };
      const nested = recording(DEFAULT_LIMITS, hook === "onHead" ? feedExtra : undefined, undefined, hook === "onRequest" ? feedExtra : undefined);
      // The read in which the c.at-th head (or request) arrives: the extra bytes follow it.
      let current = 0;
      let heads = 0;
      let after = -1;
      const note = () => {
        if (++heads === c.at) after = current;
      };
      const counting = recording(DEFAULT_LIMITS, hook === "onHead" ? note : undefined, undefined, hook === "onRequest" ? note : undefined);
      for (; current < c.reads.length; current++) counting.driver.feed(read(c.reads[current]!));
      assert.ok(after >= 0, `${c.name}: the ${c.at}th ${hook} happens`);
      const sequential = recording(DEFAULT_LIMITS);
      c.reads.forEach((r, i) => {
        sequential.driver.feed(read(r));
        if (i === after) sequential.driver.feed(read(c.extra));
      });
      for (const r of c.reads) nested.driver.feed(read(r));
      t.same(nested.events, sequential.events, `${c.name}, fed from ${hook}: the same heads, requests and errors`);
      t.same(nested.spans, sequential.spans, `${c.name}, fed from ${hook}: the same parts`);
    }
  }
  // The end of the input, said while bytes are held, comes after them too.
  const ended: string[] = [];
  const driver: Driver = new Driver(new RequestParser(DEFAULT_LIMITS), {
    onRequest: (r) => {
      ended.push(r.target);
      if (r.target === "/a") driver.end();
    },
    onError: (e) => ended.push(e.code),
    onInputEnd: () => ended.push("end"),
  });
  driver.feed(read("GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n"));
  t.same(ended, ["/a", "/b", "end"], "the request held when end() was said is read before the end is told");
  t.end();
});

t.test("a parser's limits cannot change under it: what it remembers was judged under them", (t) => {
  const limits = { ...DEFAULT_LIMITS };
  const text = "GET /a HTTP/1.1\r\nHost: h\r\n\r\n";
  const { driver, events } = recording(limits);
  driver.feed(read(text));
  driver.feed(read(text));
  limits.maxHeaderCount = 0;
  driver.feed(read(text));
  driver.feed(read("GET /b HTTP/1.1\r\nHost: h\r\n\r\n"));
  t.same(events.filter((e) => e.kind === "request").length, 4, "the limits the parser was made with hold, for recalled heads and read ones");
  t.throws(() => {
    (DEFAULT_LIMITS as { maxHeaderCount: number }).maxHeaderCount = 0;
  }, TypeError, "the defaults are frozen");
  t.end();
});
