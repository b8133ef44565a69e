// Runs every case of the table three ways (whole, split in two at every byte
// position, one byte at a time) and requires the same outcome from each, and
// that outcome to be the one the case expects.
//
// A few cases prove the default limits with inputs of 8 and 16 KiB; splitting
// those at every one of their 16,000 positions costs seconds and shows nothing
// that their small-limit twins (the same rules at 32 or 64 bytes, split at
// every position) do not. Past LONG bytes, a case is split at every position
// near its start, its end and each line break, and at a stride in between.

import t, { type Test } from "tap";
import { PROTOCOL_ERRORS } from "../../src/http/parse/errors.js";
import { CASES, type Case } from "./fixtures/cases.js";
import { bytes, carryBound, errorOf, feedAt, feedBytewise, feedWhole, limitsWith, requestsOf, shapeProblems, type Outcome } from "./fixtures/helpers.js";

t.test("the table is large enough and its names are unique and cite a rule", async (t) => {
  t.ok(CASES.length >= 120, `${CASES.length} cases`);
  const names = new Set(CASES.map((c) => c.name));
  t.equal(names.size, CASES.length, "case names are unique");
  for (const c of CASES) t.match(c.name, /^(RFC \d+ §[\d.]+|docs\/protocol\.md)/, `cites a rule: ${c.name}`);
  for (const c of CASES) {
    if (c.error !== undefined) t.equal(PROTOCOL_ERRORS[c.error.code].status, c.error.status, `status matches the code: ${c.name}`);
  }
});

function checkExpected(t: Test, c: Case, outcome: Outcome): void {
  t.same(shapeProblems(outcome), [], "the outcome is well-formed");
  const requests = requestsOf(outcome);
  t.equal(requests.length, c.requests.length, "number of requests delivered");
  c.requests.forEach((expected, i) => {
    const actual = requests[i];
    if (actual === undefined) return;
    for (const [key, value] of Object.entries(expected)) {
      t.same(actual[key as keyof typeof actual], value, `request ${i + 1}: ${key}`);
    }
  });
  const error = errorOf(outcome);
  if (c.error === undefined) {
    t.equal(error, undefined, `no error (got ${error?.code ?? "none"}: ${error?.detail ?? ""})`);
    const heads = outcome.events.filter((e) => e.kind === "head").length;
    if (c.incomplete === true) {
      t.equal(heads, requests.length + 1, "the last head has been delivered");
      t.notOk(outcome.idle || outcome.closed, "still waiting for the rest of the request");
    } else {
      t.equal(heads, requests.length, "every head was followed by its request");
      t.ok(outcome.idle || outcome.closed, "nothing is left half-parsed");
    }
  } else {
    t.same(error === undefined ? undefined : { status: error.status, code: error.code }, c.error, `error (detail: ${error?.detail ?? "none"})`);
    if (c.offset !== undefined) t.equal(error?.offset, c.offset, "error offset");
  }
}

const LONG = 2048;
const NEAR = 64;
const STRIDE = 61; // prime, so the sampled positions drift across any repeating pattern

/** The positions (1 .. length-1) at which a case is split in two. */
function splitPoints(input: Buffer): number[] {
  const points: number[] = [];
  if (input.length <= LONG) {
    for (let at = 1; at < input.length; at++) points.push(at);
    return points;
  }
  const near = new Uint8Array(input.length);
  const mark = (centre: number): void => {
    for (let at = Math.max(1, centre - NEAR); at < Math.min(input.length, centre + NEAR); at++) near[at] = 1;
  };
  mark(0);
  mark(input.length);
  for (let at = input.indexOf(0x0a); at !== -1; at = input.indexOf(0x0a, at + 1)) mark(at);
  for (let at = 1; at < input.length; at++) if (near[at] === 1 || at % STRIDE === 0) points.push(at);
  return points;
}

for (const c of CASES) {
  t.test(c.name, (t) => {
    const input = bytes(c.raw);
    const limits = limitsWith(c.limits);
    const bound = carryBound(limits);

    const whole = feedWhole(input, limits);
    checkExpected(t, c, whole.outcome);
    const expected = JSON.stringify(whole.outcome);

    const bytewise = feedBytewise(input, limits);
    t.equal(JSON.stringify(bytewise.outcome), expected, "one byte at a time gives the same outcome");
    t.ok(bytewise.maxCarry <= bound, `buffers at most ${bound} bytes of a line (saw ${bytewise.maxCarry})`);

    let disagreements = 0;
    let first = "";
    let maxCarry = 0;
    for (const at of splitPoints(input)) {
      const split = feedAt(input, [at], limits);
      maxCarry = Math.max(maxCarry, split.maxCarry);
      const got = JSON.stringify(split.outcome);
      if (got !== expected) {
        if (disagreements === 0) first = `split at ${at}: ${got}`;
        disagreements++;
      }
    }
    t.equal(disagreements, 0, `every two-way split tried gives the same outcome${first === "" ? "" : ` (first: ${first})`}`);
    t.ok(maxCarry <= bound, `two-way splits buffer at most ${bound} bytes of a line (saw ${maxCarry})`);
    t.end();
  });
}

// The table holds the default body limit's head only (splitting a 1 MiB body at
// every position would take hours); here the body itself is sent, in a few chunkings.
t.test("docs/protocol.md limits: a 1 MiB body (the default limit) is received whole, however it is cut", (t) => {
  const limits = limitsWith({});
  const size = 1024 * 1024;
  const data = Buffer.alloc(size, 0x61);
  data[0] = 0x0d;
  data[size - 1] = 0x0a;
  const byLength = Buffer.concat([bytes(`PUT /big HTTP/1.1\r\nHost: h\r\nContent-Length: ${size}\r\n\r\n`), data, bytes(`GET /next HTTP/1.1\r\nHost: h\r\n\r\n`)]);
  const chunkedBody = Buffer.concat([
    bytes(`PUT /big HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n${(size - 10).toString(16)}\r\n`),
    data.subarray(0, size - 10),
    bytes("\r\na\r\n"),
    data.subarray(size - 10),
    bytes("\r\n0\r\n\r\nGET /next HTTP/1.1\r\nHost: h\r\n\r\n"),
  ]);
  for (const [name, input] of [
    ["Content-Length", byLength],
    ["chunked", chunkedBody],
  ] as const) {
    const whole = feedWhole(input, limits);
    const requests = requestsOf(whole.outcome);
    t.equal(requests.length, 2, `${name}: both requests`);
    t.equal(requests[0]?.body.length, size, `${name}: the body is 1 MiB`);
    t.ok(requests[0]?.body === data.toString("latin1"), `${name}: the body is the bytes sent`);
    t.equal(requests[1]?.path, "/next", `${name}: the next request follows`);
    const expected = JSON.stringify(whole.outcome);
    const cuttings: number[][] = [
      Array.from({ length: Math.floor(input.length / 65536) }, (_, i) => (i + 1) * 65536),
      Array.from({ length: Math.floor(input.length / 1000) }, (_, i) => (i + 1) * 1000 + (i % 7)),
      [1, 60, 61, 62, 63, 64, 65, size, size + 60, input.length - 5],
    ];
    for (const cuts of cuttings) {
      const r = feedAt(input, cuts.filter((c) => c < input.length), limits);
      t.ok(JSON.stringify(r.outcome) === expected, `${name}: same outcome cut in ${cuts.length + 1} pieces`);
      t.ok(r.maxBody <= limits.maxBodyBytes, `${name}: at most 1 MiB of body held (saw ${r.maxBody})`);
    }
  }
  t.end();
});
