// POST /api/wire: raw request bytes run through the real connection code, and
// the parser's account of every part, with byte offsets, in both directions.

import { Ajv2020 } from "ajv/dist/2020.js";
import fc from "fast-check";
import t, { type Test } from "tap";
import { ConfigError } from "../../src/config-error.js";
import { loadConfig } from "../../src/config.js";
import { PAST_LIMIT_SHOWN, type WirePart } from "../../src/wire/requests.js";
import { accountOfRequests, runRequests, SLICE } from "../../src/wire/run.js";
import { MAX_WIRE_REQUESTS } from "../../src/wire/route.js";
import { createBudget, jsonBytes } from "../../src/wire/budget.js";
import { wireViewSchema } from "../../src/wire/schema.js";
import { DEFAULT_LIMITS, RequestParser } from "../../src/http/parse/parser.js";
import type { SpanKind } from "../../src/http/parse/spans.js";
import { ADMIN, docsApp, request, wire } from "../helpers/app.js";
import { listen, splitResponses, talk } from "../helpers/wire.js";

const ajv = new Ajv2020({ strict: true, allErrors: true });
const isWireView = ajv.compile(wireViewSchema);

/** Every part of the account, in order: requests' parts, then what was never read. */
function allParts(account: any): WirePart[] {
  return [...account.requests.flatMap((r: any) => r.parts), ...(account.unread === null ? [] : [account.unread])];
}

t.test("a plain GET: every part with its bytes, the framing and keep-alive decisions, and the response", async (t) => {
  const { app } = await docsApp();
  const raw = "GET /api/v2/status HTTP/1.1\r\nHost: example\r\nAccept: application/json\r\n\r\n";
  const { status, body, response } = await wire(app, raw);
  t.equal(status, 200);
  t.equal(response.headers["content-type"], "application/json");
  t.equal(response.headers["cache-control"], "no-store");
  t.ok(isWireView(body), `matches the documented schema ${JSON.stringify(isWireView.errors)}`);
  const [req] = body.request.requests;
  t.equal(body.request.bytes, raw.length);
  t.equal(req.state, "complete");
  t.same(
    req.parts.map((p: WirePart) => [p.kind, p.start, p.end, p.text]),
    [
      ["request-line", 0, 29, "GET /api/v2/status HTTP/1.1\r\n"],
      ["field", 29, 44, "Host: example\r\n"],
      ["field", 44, 70, "Accept: application/json\r\n"],
      ["blank-line", 70, 72, "\r\n"],
    ],
  );
  t.equal(req.framing.kind, "none");
  t.equal(req.keepAlive.value, true);
  t.equal(body.request.error, null);
  const out = body.response;
  t.match(out.raw, /^HTTP\/1\.1 200 OK\r\nDate: .*\r\n\r\n\{"response":"The server is up\."\}$/s);
  t.equal(out.bytes, Buffer.byteLength(out.raw));
  const [res] = out.responses;
  t.equal(res.status, 200);
  t.equal(res.statusLine, "HTTP/1.1 200 OK");
  t.equal(res.answers, 0);
  t.same(res.parts.map((p: WirePart) => p.kind), ["status-line", "field", "field", "field", "field", "field", "blank-line", "body"]);
  t.equal(res.parts.at(-1).text, '{"response":"The server is up."}');
  t.same(res.fields.map((f: any) => f.name), ["Date", "X-Content-Type-Options", "Content-Type", "Cache-Control", "Content-Length"]);
  t.equal(res.parts.map((p: WirePart) => p.text).join(""), out.raw, "the response parts tile its bytes");
});

t.test("a parse error: the rule, the byte offset, the part it is in; the response is the parser's 400", async (t) => {
  const { app } = await docsApp();
  const raw = "GET /api/v2/status HTTP/1.1\r\nHost : x\r\n\r\n";
  const { body } = await wire(app, raw);
  const error = body.request.error;
  t.match(error, { code: "WHITESPACE_BEFORE_COLON", status: 400, rule: "RFC 9112 §5.1", offset: 33, request: 0, offsetInRequest: 33 });
  t.equal(raw[error.offset], " ", "the offset points at the space before the colon");
  const bad = allParts(body.request).filter((p) => p.error);
  t.equal(bad.length, 1);
  t.match(bad[0], { kind: "field", start: 29, end: 39 });
  t.equal(body.request.requests[0].state, "error");
  t.match(body.request.unread, { kind: "unread", start: 39, end: 41 });
  const [res] = body.response.responses;
  t.equal(res.status, 400);
  const problem = JSON.parse(res.parts.at(-1).text);
  t.equal(problem.code, error.code);
  t.equal(problem.offset, error.offsetInRequest, "the same offset the problem body gives");
});

t.test("offsets count from the start of the input across pipelined requests", async (t) => {
  const { app } = await docsApp();
  const first = "GET /api/v2/status HTTP/1.1\r\nHost: x\r\n\r\n";
  const second = "GET /api/v2/status HTTP/1.1\r\nHost: x\r\nX-Bad: a\x01b\r\n\r\n";
  const { body } = await wire(app, first + second);
  t.equal(body.request.requests.length, 2);
  t.equal(body.request.requests[1].start, first.length);
  t.match(body.request.error, { code: "INVALID_FIELD_VALUE", request: 1 });
  t.equal(body.request.error.offset, first.length + body.request.error.offsetInRequest);
  t.equal((first + second)[body.request.error.offset], "\x01");
  t.same(body.response.responses.map((r: any) => [r.status, r.answers]), [[200, 0], [400, 1]]);
});

t.test("chunked bodies: sizes, data, the CR LF after each, the last chunk, trailers", async (t) => {
  const { app, store } = await docsApp();
  const raw =
    "POST /api/v2/facts HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n" +
    "7;note=1\r\nChunked\r\n15\r\n bodies end with 0.  \r\n0\r\nX-Checksum: 1\r\n\r\n";
  const { body } = await wire(app, raw);
  const req = body.request.requests[0];
  t.equal(req.framing.kind, "chunked");
  t.same(
    req.parts.slice(5).map((p: WirePart) => [p.kind, p.text]),
    [
      ["chunk-size", "7;note=1\r\n"],
      ["chunk-data", "Chunked"],
      ["chunk-end", "\r\n"],
      ["chunk-size", "15\r\n"],
      ["chunk-data", " bodies end with 0.  "],
      ["chunk-end", "\r\n"],
      ["last-chunk", "0\r\n"],
      ["trailer", "X-Checksum: 1\r\n"],
      ["blank-line", "\r\n"],
    ],
  );
  t.match(req.parts[5].label, /0x7 = 7 bytes/);
  t.match(req.parts[5].note, /Extension ;note=1/);
  t.equal(req.parts[8].note, undefined, "a chunk without an extension shows none, not the one before it");
  t.equal(body.response.responses[0].status, 201);
  t.ok((await store.facts.list()).some((f) => f.text === "Chunked bodies end with 0."), "the request really ran");
});

t.test("Connection: close leaves the rest unread; HEAD gets no body; 100-continue comes first", async (t) => {
  const { app } = await docsApp();
  const raw =
    "\r\nHEAD /api/v2/status HTTP/1.1\r\nHost: x\r\n\r\n" +
    "POST /api/v2/facts HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nExpect: 100-continue\r\nContent-Length: 10\r\n\r\nTen bytes." +
    "GET /api/v2/status HTTP/1.0\r\n\r\n" +
    "GET /api/v2/status HTTP/1.1\r\nHost: x\r\n\r\n";
  const { body } = await wire(app, raw);
  const [head, post, old] = body.request.requests;
  t.equal(head.parts[0].kind, "empty-line", "an empty line before a request is ignored, and shown");
  t.equal(head.method, "HEAD");
  t.equal(post.framing.length, 10);
  t.equal(old.keepAlive.value, false, "HTTP/1.0 closes");
  t.match(old.keepAlive.reason, /HTTP\/1\.0 without Connection: keep-alive/);
  t.match(body.request.unread, { text: "GET /api/v2/status HTTP/1.1\r\nHost: x\r\n\r\n" });
  t.match(body.request.unread.label, /closes the connection/);
  const responses = body.response.responses;
  t.same(responses.map((r: any) => [r.status, r.answers]), [[200, 0], [100, null], [201, 1], [200, 2]]);
  t.same(responses[0].parts.at(-1), { kind: "body", label: responses[0].parts.at(-1).label, start: responses[0].end, end: responses[0].end, text: "" }, "HEAD: no body");
  t.ok(responses[0].fields.some((f: any) => f.name === "Content-Length" && f.value === "32"), "but GET's Content-Length");
});

t.test("an unfinished request: shown, marked incomplete, unanswered", async (t) => {
  const { app } = await docsApp();
  const { body } = await wire(app, "POST /api/v2/facts HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 20\r\n\r\nshort");
  const [req] = body.request.requests;
  t.equal(req.state, "incomplete");
  t.match(req.parts.at(-1), { kind: "body", text: "short", label: /5 of the 20 bytes/ });
  t.same(body.response.responses, []);
  const partial = await wire(app, "GET /api/v2/sta");
  const [unfinished] = partial.body.request.requests;
  t.match(unfinished, { state: "incomplete", start: 0, end: 15 });
  t.equal(unfinished.method, undefined, "no method: the parser has not read a request line yet");
  t.same(
    unfinished.parts.map((p: WirePart) => [p.kind, p.label, p.text]),
    [["incomplete", "Request line (unfinished)", "GET /api/v2/sta"]],
  );
  // Lines the parser has read of a head it never finished are shown as it read them.
  const head = await wire(app, "\r\n\r\nGET /api/v2/status HTTP/1.1\r\nHost: x\r\nAcc");
  const [open] = head.body.request.requests;
  t.match(open, { state: "incomplete", method: "GET", target: "/api/v2/status" });
  t.same(
    open.parts.map((p: WirePart) => [p.kind, p.text]),
    [
      ["empty-line", "\r\n"],
      ["empty-line", "\r\n"],
      ["request-line", "GET /api/v2/status HTTP/1.1\r\n"],
      ["field", "Host: x\r\n"],
      ["incomplete", "Acc"],
    ],
  );
});

t.test("authorization and limits apply as on a socket", async (t) => {
  const { app, store } = await docsApp({ limits: { maxBodyBytes: 64 } });
  const patch = '{"title": "Changed through the wire"}';
  const update = (auth: string) =>
    `UPDATE /api/v1/artigo/2 HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: ${patch.length}\r\n\r\n${patch}`;
  const anonymous = await wire(app, update(""));
  t.equal(anonymous.body.response.responses[0].status, 401);
  t.not((await store.articles.get("2"))!.title, "Changed through the wire");
  const admin = await wire(app, update(`Authorization: Bearer ${ADMIN}\r\n`));
  t.equal(admin.body.response.responses[0].status, 200);
  t.equal((await store.articles.get("2"))!.title, "Changed through the wire");
  const big = "x".repeat(65);
  const tooLarge = await wire(app, `POST /api/v2/facts HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: ${big.length}\r\n\r\n${big}`);
  t.match(tooLarge.body.request.error, { code: "CONTENT_TOO_LARGE", status: 413 });
  t.equal(tooLarge.body.response.responses[0].status, 413, "the server's MAX_BODY_BYTES applies inside");
});

t.test("what the wire view refuses", async (t) => {
  const { app } = await docsApp();
  const json = await wire(app, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", "application/json");
  t.equal(json.status, 415);
  t.equal(json.response.headers["accept-post"], "message/http");
  const plain = await wire(app, "GET /api/v2/status HTTP/1.1\r\nHost: x\r\n\r\n", "text/plain");
  t.equal(plain.status, 415, "text/plain is refused: a cross-site page could send it without a preflight");
  t.match(plain.body.detail, /cross-site request forgery/);
  t.equal((await wire(app, "GET /api/v2/status HTTP/1.1\r\nHost: x\r\n\r\n", "message/http")).status, 200, "message/http is accepted");
  t.equal((await request(app, "POST", "/api/wire", { "Content-Type": "message/http" }, "")).status, 400, "an empty body");
  const nested = await wire(app, "POST /api/wire HTTP/1.1\r\nHost: x\r\nContent-Type: message/http\r\nContent-Length: 3\r\n\r\nabc");
  t.equal(nested.status, 200);
  t.equal(nested.body.response.responses[0].status, 403, "a request through the wire view cannot ask for the wire view");
});

const fact = (i: number) => {
  const text = `Fact number ${i}.`;
  return `POST /api/v2/facts HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: ${text.length}\r\n\r\n${text}`;
};
/** The cut's byte counts are written with thousands separators. */
const digits = (n: number) => n.toLocaleString("en-US");

/**
 * Checks the answer to `facts` (more than MAX_WIRE_REQUESTS fact POSTs) and
 * the store after it: the first MAX_WIRE_REQUESTS ran and are shown with
 * their responses, and the bytes from the head of the next one on are
 * shown as not run (the unread part), none of them stored.
 */
async function checkPastLimit(t: Test, body: any, facts: readonly string[], stored: Set<string>): Promise<void> {
  const raw = facts.join("");
  const start = facts.slice(0, MAX_WIRE_REQUESTS).join("").length;
  t.ok(isWireView(body), `matches the documented schema ${JSON.stringify(isWireView.errors)}`);
  t.same(
    facts.map((_, i) => stored.has(`Fact number ${i}.`)),
    facts.map((_, i) => i < MAX_WIRE_REQUESTS),
    "the requests before the limit ran (stored); the one past it, and those after, did not",
  );
  const requests = body.request.requests;
  t.same(
    requests.map((r: any) => [r.state, r.method, r.start, r.end, r.notRun]),
    facts.slice(0, MAX_WIRE_REQUESTS).map((_, i) => ["complete", "POST", facts.slice(0, i).join("").length, facts.slice(0, i + 1).join("").length, undefined]),
    "the requests that ran are in the account, as any others, and only they",
  );
  const responses = body.response.responses;
  t.same(
    responses.map((r: any) => [r.status, r.answers]),
    facts.slice(0, MAX_WIRE_REQUESTS).map((_, i) => [201, i]),
    "and each one's response is shown",
  );
  t.same(
    responses.map((r: any) => JSON.parse(r.parts.at(-1).text).text),
    facts.slice(0, MAX_WIRE_REQUESTS).map((_, i) => `Fact number ${i}.`),
    "their bodies are the facts they stored",
  );
  t.equal(body.response.bytes, Buffer.byteLength(body.response.raw), "every byte they wrote is in raw");
  const unread = body.request.unread;
  t.same([unread.kind, unread.start, unread.end], ["unread", start, raw.length], "from the head past the limit to the end: the unread part");
  t.equal(unread.text, raw.slice(start), "its bytes are shown");
  t.equal(
    unread.label,
    `Not run: the wire view runs at most ${MAX_WIRE_REQUESTS} requests of one body, and stopped at the head of request ${MAX_WIRE_REQUESTS + 1}, which begins here; send it and what follows in another body`,
    "and said why, and what to do",
  );
  t.equal([...requests.flatMap((r: any) => r.parts), unread].map((p: WirePart) => p.text).join(""), raw, "the parts and the unread bytes tile the input");
  const cut = body.cut;
  t.equal(cut.pastRequestLimit, start, "cut says where the request past the limit begins");
  t.same(cut.requestsNotRun, [], "no request before it was left out");
  t.same([cut.requestBytesNotShown, cut.responseBytesNotShown, cut.rawBytesNotShown], [0, 0, 0], "and nothing was cut for the budget");
  t.equal(
    cut.detail,
    `The body holds more than ${MAX_WIRE_REQUESTS} requests, and the wire view runs at most ${MAX_WIRE_REQUESTS} of one body: it stopped at the head of request ${MAX_WIRE_REQUESTS + 1} ` +
      `(byte ${digits(start)}), and neither that request nor anything after it was run (their bytes are request.unread, which shows at most the first 16 KiB of them); ` +
      "send them in another body.",
    "its detail says so, and what to do",
  );
}

t.test(`more than ${MAX_WIRE_REQUESTS} requests: the ${MAX_WIRE_REQUESTS} that ran are shown with their responses; from the next head on, nothing runs`, async (t) => {
  const facts = Array.from({ length: MAX_WIRE_REQUESTS + 2 }, (_, i) => fact(i));
  const { app, store } = await docsApp();
  const { status, body } = await wire(app, facts.join(""));
  t.equal(status, 200, "the normal answer: what ran is never hidden");
  await checkPastLimit(t, body, facts, new Set((await store.facts.list()).map((f) => f.text)));

  // Exactly the limit: nothing is cut.
  const { app: exact, store: exactStore } = await docsApp();
  const ten = await wire(exact, facts.slice(0, MAX_WIRE_REQUESTS).join(""));
  t.equal(ten.status, 200);
  t.equal(ten.body.request.requests.length, MAX_WIRE_REQUESTS);
  t.equal(ten.body.request.unread, null, `${MAX_WIRE_REQUESTS} requests: nothing unread`);
  t.equal(ten.body.cut, null, "and nothing cut");
  const storedTen = new Set((await exactStore.facts.list()).map((f) => f.text));
  t.ok(
    facts.slice(0, MAX_WIRE_REQUESTS).every((_, i) => storedTen.has(`Fact number ${i}.`)),
    `all ${MAX_WIRE_REQUESTS} stored`,
  );
});

t.test(`more than ${MAX_WIRE_REQUESTS} requests over a real socket: the same answer`, async (t) => {
  const facts = Array.from({ length: MAX_WIRE_REQUESTS + 2 }, (_, i) => fact(i));
  const { app, store } = await docsApp();
  const running = await listen(app);
  t.teardown(() => running.close());
  const inner = Buffer.from(facts.join(""), "latin1");
  const out = await talk(running.port, [
    `POST /api/wire HTTP/1.1\r\nHost: x\r\nContent-Type: message/http\r\nContent-Length: ${inner.length}\r\nConnection: close\r\n\r\n`,
    inner,
  ]);
  const [answer] = splitResponses(out);
  t.equal(answer!.status, 200);
  await checkPastLimit(t, JSON.parse(answer!.body), facts, new Set((await store.facts.list()).map((f) => f.text)));
});

t.test("a megabyte of tiny requests: the run stops reading at the head past the limit, and costs no account beyond it", async (t) => {
  const { app, store } = await docsApp();
  const before = (await store.facts.list()).length;
  const tiny = "POST /api/v2/facts HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 1\r\n\r\nx";
  const megabyte = Buffer.from(tiny.repeat(Math.floor((1024 * 1024) / tiny.length)), "latin1"); // within the server's body limit (1 MiB)
  // What the parser that reads the inner bytes is given (told apart by its first bytes, as in wire-once.test.ts).
  const first = new WeakMap<object, boolean>();
  let read = 0;
  const receive = RequestParser.prototype.receive;
  RequestParser.prototype.receive = function (this: RequestParser, chunk: Buffer) {
    if (!first.has(this) && chunk.length > 0) first.set(this, chunk.subarray(0, tiny.length).equals(megabyte.subarray(0, tiny.length)));
    if (first.get(this) === true) read += chunk.length;
    return receive.call(this, chunk);
  };
  let answer: Awaited<ReturnType<typeof wire>>;
  try {
    answer = await wire(app, megabyte);
  } finally {
    RequestParser.prototype.receive = receive;
  }
  const { status, body, response } = answer;
  t.equal(status, 200);
  t.ok(isWireView(body), `matches the documented schema ${JSON.stringify(isWireView.errors)}`);
  t.ok(read > 0 && read <= SLICE, `the connection read ${read} bytes: the one read that holds the head past the limit, not the ${megabyte.length}`);
  t.equal((await store.facts.list()).length, before + MAX_WIRE_REQUESTS, `${MAX_WIRE_REQUESTS} facts stored, not one more`);
  t.equal(body.request.requests.length, MAX_WIRE_REQUESTS, "the account holds the requests that ran, and no other");
  t.same(
    body.response.responses.map((r: any) => r.status),
    Array(MAX_WIRE_REQUESTS).fill(201),
    "each with its response",
  );
  const start = MAX_WIRE_REQUESTS * tiny.length;
  const unread = body.request.unread;
  t.same([unread.kind, unread.start, unread.end], ["unread", start, megabyte.length], "the rest is one unread part");
  t.equal(unread.text, megabyte.toString("utf8", start, start + PAST_LIMIT_SHOWN), `whose text is its first ${PAST_LIMIT_SHOWN} bytes`);
  t.equal(unread.omitted, megabyte.length - start - PAST_LIMIT_SHOWN, "and which says how many it leaves out");
  t.equal(unread.note, `The first ${PAST_LIMIT_SHOWN} of these ${megabyte.length - start} bytes are shown: the wire view shows at most 16 KiB of the bytes it did not run`, "and why");
  t.equal(body.cut.pastRequestLimit, start);
  t.equal(body.cut.requestBytesNotShown, unread.omitted, "cut counts them as not shown");
  t.match(body.cut.detail, /which shows at most the first 16 KiB of them\); send them in another body\.$/, "and says why, not blaming the budget");
  // Ten requests, their responses and 16 KiB of text: what follows the limit costs no more, however long.
  t.ok(Buffer.byteLength(response.body) < 64 * 1024, `the answer is ${Buffer.byteLength(response.body)} bytes`);
});

t.test("the head past the limit is given back what its parts cost: the budget counts only what the answer holds", async (t) => {
  const requests = Array.from({ length: MAX_WIRE_REQUESTS + 1 }, (_, i) => `GET /api/v2/status?n=${i} HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\nX-Filler: ${"f".repeat(40)}\r\n\r\n`);
  const service = { handle: () => ({ status: 200, body: "ok" }) };
  const run = async (raw: string, limit = 1024 * 1024) => {
    const budget = createBudget(limit);
    const result = await runRequests(Buffer.from(raw, "latin1"), { service, limits: DEFAULT_LIMITS, budget, maxRequests: MAX_WIRE_REQUESTS });
    return { budget, run: result };
  };
  const ten = await run(requests.slice(0, MAX_WIRE_REQUESTS).join(""));
  const past = await run(requests.join("") + "trailing bytes");
  t.equal(ten.run.pastLimit, null);
  t.same(past.run.pastLimit, { start: requests.slice(0, MAX_WIRE_REQUESTS).join("").length, notShown: 0 });
  t.same(past.run.requests.requests, ten.run.requests.requests, "the same account of the requests before the limit");
  const unread = past.run.requests.unread!;
  t.equal(unread.text, requests.at(-1) + "trailing bytes");
  t.equal(past.budget.parts, ten.budget.parts + 1, "parts: those of the ten, and the unread one; none for the head past the limit");
  t.equal(past.budget.spent, ten.budget.spent + jsonBytes(unread), "bytes: the same, and the unread part's");

  // A head past the limit that the budget cuts short: the bytes it left out are not counted as left out, as it is not shown.
  const big = `GET /api/v2/status HTTP/1.1\r\nHost: x\r\nX-Filler: ${"f".repeat(5000)}\r\n\r\n`;
  const cut = await run(requests.slice(0, MAX_WIRE_REQUESTS).join("") + big, ten.budget.spent + 2000);
  const cutUnread = cut.run.requests.unread!;
  t.ok(cutUnread.omitted! > 0, "the unread bytes are cut short by the budget");
  t.equal(cut.budget.requestBytesNotShown, cutUnread.omitted, "and only they count as not shown");
  t.equal(cut.run.pastLimit!.notShown, 0, "none of them past the first 16 KiB");

  // More than PAST_LIMIT_SHOWN past the limit, and the budget spent before those: both counted, each where it belongs.
  const long = requests.slice(0, MAX_WIRE_REQUESTS).join("") + big.repeat(5);
  const both = await run(long, ten.budget.spent + 2000);
  const bothUnread = both.run.requests.unread!;
  const beyond = long.length - PAST_LIMIT_SHOWN - both.run.pastLimit!.start;
  t.equal(both.run.pastLimit!.notShown, beyond, "the bytes after the first 16 KiB are left out for the limit");
  t.equal(both.budget.requestBytesNotShown + beyond, bothUnread.omitted, "the rest of what the part leaves out, for the budget");
  t.equal(bothUnread.end, long.length);
  t.equal(Buffer.byteLength(bothUnread.text, "utf8"), PAST_LIMIT_SHOWN - both.budget.requestBytesNotShown, "its text is what neither left out");
  t.match(bothUnread.note, /the wire view shows at most 16 KiB of the bytes it did not run, and its output budget was spent before those$/);
  t.ok(both.budget.spent >= ten.budget.spent + jsonBytes(bothUnread), "the budget is charged for the part as sent, its note and count included");

  // The first 16 KiB end inside a UTF-8 sequence: the text stops before it, and shows no character the input lacks.
  const head = "POST /api/v2/facts HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 40000\r\n\r\n";
  const pad = (PAST_LIMIT_SHOWN - head.length) % 2 === 0 ? "a" : "";
  const accented = Buffer.from(requests.slice(0, MAX_WIRE_REQUESTS).join("") + head + pad + "é".repeat(20_000), "utf8");
  const split = (await runRequests(accented, { service, limits: DEFAULT_LIMITS, budget: createBudget(1024 * 1024), maxRequests: MAX_WIRE_REQUESTS })).requests.unread!;
  t.notOk(split.text.includes("\uFFFD"), "no replacement character");
  t.equal(Buffer.byteLength(split.text, "utf8"), PAST_LIMIT_SHOWN - 1, "one byte short of 16 KiB: the split character is left out whole");
  t.equal(Buffer.byteLength(split.text, "utf8") + split.omitted!, split.end - split.start, "shown + omitted = the bytes");
});

t.test("WIRE_VIEW=0: the route is not served (404), not documented, not offered by the page", async (t) => {
  const { app } = await docsApp({ wireView: false });
  const r = await request(app, "POST", "/api/wire", { "Content-Type": "message/http" }, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  t.equal(r.status, 404);
  t.equal(JSON.parse(r.body).type, "/problems/not-found", "a plain 404, not an unknown API version");
  const doc = JSON.parse((await request(app, "GET", "/api/openapi.json")).body);
  t.notOk(doc.paths["/api/wire"]);
  const page = await request(app, "GET", "/");
  t.match(page.body, 'data-wire="0"');
  t.notMatch(page.body, 'id="raw"');
});

t.test("the WIRE_VIEW setting and --no-wire-view", async (t) => {
  t.equal(loadConfig({}, []).wireView, true, "on by default");
  t.equal(loadConfig({ WIRE_VIEW: "0" }, []).wireView, false);
  t.equal(loadConfig({ WIRE_VIEW: "false" }, []).wireView, false);
  t.equal(loadConfig({ WIRE_VIEW: "1" }, []).wireView, true);
  t.equal(loadConfig({}, ["--no-wire-view"]).wireView, false);
  t.throws(() => loadConfig({ WIRE_VIEW: "off" }, []), ConfigError);
  t.throws(() => loadConfig({ WIRE_VIEW: "off" }, []), /WIRE_VIEW must be 1 or 0/);
});

// Pieces of requests, good and bad, to assemble streams from.
const PIECES = [
  "GET /api/v2/status HTTP/1.1\r\n", "POST /api/v2/facts HTTP/1.1\r\n", "HEAD / HTTP/1.0\r\n", "GET  / HTTP/1.1\r\n", "GET / HTTP/2.0\r\n",
  "Host: x\r\n", "Host : x\r\n", "Content-Length: 3\r\n", "Content-Length: 99\r\n", "Transfer-Encoding: chunked\r\n", "Connection: close\r\n",
  "X: a\rb\r\n", " folded\r\n", "\r\n", "\n", "abc", "3\r\nabc\r\n", "0\r\n\r\n", "zz\r\n", "\xff",
];

t.test("property: the parts tile the input exactly, and an error lies in the one part flagged", async (t) => {
  const details = await fc.check(
    fc.asyncProperty(fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 14 }), fc.boolean(), async (pieces, bareLf) => {
      const bytes = Buffer.from(pieces.join(""), "latin1");
      const account = await accountOfRequests(bytes, { ...DEFAULT_LIMITS, allowBareLf: bareLf });
      const parts = allParts(account);
      let at = 0;
      for (const p of parts) {
        if (p.start !== at) throw new Error(`part ${p.kind} starts at ${p.start}, expected ${at}`);
        if (p.text !== bytes.toString(p.kind.endsWith("data") || p.kind === "body" || p.kind === "unread" ? "utf8" : "latin1", p.start, p.end)) {
          throw new Error(`part ${p.kind} text differs from its bytes`);
        }
        at = p.end;
      }
      if (at !== bytes.length) throw new Error(`parts end at ${at}, input at ${bytes.length}`);
      const flagged = parts.filter((p) => p.error);
      if (account.error === null) {
        if (flagged.length !== 0) throw new Error("a part is flagged without an error");
      } else {
        if (flagged.length !== 1) throw new Error(`${flagged.length} parts flagged`);
        const p = flagged[0]!;
        const offset = account.error.offset;
        if (!(offset >= p.start && (offset < p.end || (offset === p.end && p.kind === "incomplete")))) {
          throw new Error(`error at ${offset} outside its part [${p.start}, ${p.end})`);
        }
      }
    }),
    { numRuns: 800 },
  );
  t.notOk(details.failed, `${details.numRuns} runs${details.failed ? `\n${fc.defaultReportMessage(details)}` : ""}`);
});

/** The parser's own spans over `bytes`, as wire-view part kinds: lines, and body pieces merged. */
function parserSpans(bytes: Buffer, limits: typeof DEFAULT_LIMITS, before: number): { parts: string[]; error: number | null } {
  const KINDS: Partial<Record<SpanKind, string>> = {
    "empty-line": "empty-line", "request-line": "request-line", "field-line": "field", "blank-line": "blank-line", body: "body",
    "chunk-size-line": "chunk-size", "chunk-data": "chunk-data", "chunk-end": "chunk-end", "last-chunk": "last-chunk",
    "trailer-line": "trailer", "trailer-end": "blank-line",
  };
  const spans: [string, number, number][] = [];
  let error: number | null = null;
  const parser = new RequestParser(limits, {
    span(kind, start, end) {
      if (kind === "error") error = start;
      const k = KINDS[kind];
      if (k === undefined) return;
      const last = spans[spans.length - 1];
      if ((k === "body" || k === "chunk-data") && last?.[0] === k && last[2] === start) last[2] = end;
      else spans.push([k, start, end]);
    },
  });
  parser.receive(bytes);
  while (parser.next().kind !== "need-data");
  return { parts: spans.filter(([, s]) => s < before).map(([k, s, e]) => `${k} ${s}-${e}`), error };
}

t.test("property: every part the parser read is one of its spans, and every span is a part", async (t) => {
  const details = await fc.check(
    fc.asyncProperty(fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 14 }), fc.boolean(), async (pieces, bareLf) => {
      const bytes = Buffer.from(pieces.join(""), "latin1");
      const limits = { ...DEFAULT_LIMITS, allowBareLf: bareLf };
      const account = await accountOfRequests(bytes, limits);
      // Empty lines after the last request are shown as one unread part.
      const spans = parserSpans(bytes, limits, account.unread?.start ?? Infinity);
      // What the parser refused (the flagged line), ran out in (incomplete) or never read (unread) has no span of its own.
      const read = allParts(account).filter((p) => p.kind !== "incomplete" && p.kind !== "unread" && !(p.error && !spans.parts.includes(`${p.kind} ${p.start}-${p.end}`)));
      const shown = read.map((p) => `${p.kind} ${p.start}-${p.end}`);
      if (JSON.stringify(shown) !== JSON.stringify(spans.parts)) throw new Error(`parts ${JSON.stringify(shown)}\nspans ${JSON.stringify(spans.parts)}`);
      if ((account.error?.offset ?? null) !== spans.error) throw new Error(`error at ${account.error?.offset}, the parser's at ${spans.error}`);
    }),
    { numRuns: 800 },
  );
  t.notOk(details.failed, `${details.numRuns} runs${details.failed ? `\n${fc.defaultReportMessage(details)}` : ""}`);
});

t.test("property: within a budget, parts still tile the input, show a prefix of their bytes, and cost what was charged", async (t) => {
  const details = await fc.check(
    fc.asyncProperty(fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 14 }), fc.boolean(), fc.integer({ min: 0, max: 4000 }), async (pieces, bareLf, limit) => {
      const bytes = Buffer.from(pieces.join(""), "latin1");
      const budget = createBudget(limit);
      const account = await accountOfRequests(bytes, { ...DEFAULT_LIMITS, allowBareLf: bareLf }, budget);
      const parts = allParts(account);
      let at = 0;
      for (const p of parts) {
        if (p.start !== at) throw new Error(`part ${p.kind} starts at ${p.start}, expected ${at}`);
        const shown = p.end - p.start - (p.omitted ?? 0);
        if (shown < 0 || (p.kind === "omitted" && shown !== 0)) throw new Error(`part ${p.kind} omits ${p.omitted} of ${p.end - p.start} bytes`);
        const utf8 = p.kind.endsWith("data") || p.kind === "body" || p.kind === "unread";
        if (p.text !== bytes.toString(utf8 ? "utf8" : "latin1", p.start, p.start + shown)) throw new Error(`part ${p.kind} text is not its first ${shown} bytes`);
        at = p.end;
      }
      if (at !== bytes.length) throw new Error(`parts end at ${at}, input at ${bytes.length}`);
      const flagged = parts.filter((p) => p.error);
      if (account.error !== null && flagged.length !== 1) throw new Error(`${flagged.length} parts flagged`);
      const size = Buffer.byteLength(JSON.stringify(account));
      if (size > budget.spent + 200) throw new Error(`the account is ${size} bytes, but only ${budget.spent} were charged`);
      const omitted = parts.reduce((n, p) => n + (p.omitted ?? 0), 0);
      if (budget.requestBytesNotShown !== omitted) throw new Error(`${budget.requestBytesNotShown} bytes counted as not shown, ${omitted} omitted`);
    }),
    { numRuns: 800 },
  );
  t.notOk(details.failed, `${details.numRuns} runs${details.failed ? `\n${fc.defaultReportMessage(details)}` : ""}`);
});

t.test("property: the account is the same fed whole or slice by slice", async (t) => {
  const details = await fc.check(
    fc.asyncProperty(fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 14 }), fc.boolean(), fc.integer({ min: 1, max: 24 }), async (pieces, bareLf, slice) => {
      const bytes = Buffer.from(pieces.join(""), "latin1");
      const limits = { ...DEFAULT_LIMITS, allowBareLf: bareLf };
      const whole = JSON.stringify(await accountOfRequests(bytes, limits));
      const sliced = JSON.stringify(await accountOfRequests(bytes, limits, null, slice));
      if (whole !== sliced) throw new Error(`slices of ${slice} bytes: ${sliced} instead of ${whole}`);
    }),
    { numRuns: 300 },
  );
  t.notOk(details.failed, `${details.numRuns} runs${details.failed ? `\n${fc.defaultReportMessage(details)}` : ""}`);
});
