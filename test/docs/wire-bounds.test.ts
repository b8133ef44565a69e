// The wire view's bounds: a bounded answer whatever the requests inside ask
// for, other clients served while it works, and no cross-site use.

import { Ajv2020 } from "ajv/dist/2020.js";
import net from "node:net";
import { once } from "node:events";
import t from "tap";
import { createApp } from "../../src/app.js";
import type { RequestAccount } from "../../src/wire/requests.js";
import { createBudget } from "../../src/wire/budget.js";
import { accountOfResponses } from "../../src/wire/responses.js";
import { wireViewSchema } from "../../src/wire/schema.js";
import type { Exchange } from "../../src/http/connection/options.js";
import { createMemoryStore } from "../../src/store/memory.js";
import { seed } from "../../src/store/seed.js";
import type { Store } from "../../src/store/types.js";
import { docsApp, request, wire } from "../helpers/app.js";
import { inject } from "../../src/http/connection/inject.js";
import { listen, readUntil, splitResponses } from "../helpers/wire.js";

const MiB = 1024 * 1024;
/** What the wire view promises to stay within; the answer's own `cut.budget` must say the same. */
const BUDGET = 4 * MiB;
const isWireView = new Ajv2020({ strict: true, allErrors: true }).compile(wireViewSchema);

const LIST = "GET /api/v1/posts HTTP/1.1\r\nHost: x\r\n\r\n";
const deleteRequest = (id: string) => `DELETE /api/v1/post/${id} HTTP/1.1\r\nHost: x\r\n\r\n`;

/** 20 posts of 100,000 characters: each GET /api/v1/posts answers about 2 MB. */
async function bigPosts(store: Store, fill = "x"): Promise<void> {
  for (let i = 0; i < 20; i++) {
    const created = await store.posts.create({ id: `big-${i}`, title: `Big ${i}`, body: fill.repeat(100_000) });
    if (created.kind !== "created") throw new Error(`big-${i} exists`);
  }
}

t.test("the output budget: 10 big lists answer within it, say what was cut, and nothing runs after it", async (t) => {
  // Nothing kept: each list is streamed from the store (a kept one would go whole, with a Content-Length).
  const { app, store } = await docsApp({ kept: { responseBytes: 0 } });
  await bigPosts(store);
  const fact = "POST /api/v2/facts HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 22\r\n\r\nSent after the budget.";
  const raw = LIST.repeat(4) + fact + LIST.repeat(5);
  const { status, body, response } = await wire(app, raw);
  t.equal(status, 200);
  const answerBytes = Buffer.byteLength(response.body);
  t.ok(answerBytes <= BUDGET, `the answer is ${answerBytes} bytes, at most ${BUDGET}`);
  t.ok(isWireView(body), `matches the documented schema ${JSON.stringify(isWireView.errors)}`);
  t.equal(body.request.requests.length, 10, "every request is still described");

  const cut = body.cut;
  t.ok(cut !== null && typeof cut === "object", "the answer says it was cut");
  t.equal(cut.budget, BUDGET);
  const ran = body.response.responses.length;
  t.ok(ran >= 1 && ran < 4, `the first lists ran (${ran}), the budget stopped the rest`);
  t.same(cut.requestsNotRun, Array.from({ length: 10 - ran }, (_, i) => ran + i), "the requests after the budget, by index");
  t.ok(cut.requestsNotRun.includes(4), "the fact is among them");
  t.notOk((await store.facts.list()).some((f) => f.text === "Sent after the budget."), "and really did not run");
  for (const i of cut.requestsNotRun) t.match(body.request.requests[i].notRun, /budget/, `request ${i} is marked as not run, with why`);
  t.equal(body.request.requests[0].notRun, undefined, "a request that ran is not marked");
  t.match(cut.detail, /4 MiB/);
  t.match(cut.detail, /budget/);
  t.match(cut.detail, new RegExp(`${10 - ran} of the 10 requests`));

  // The last response that ran (a streamed list, chunked) is cut inside its body: its parts still run to the
  // last byte written, and say how many bytes they leave out.
  const last = body.response.responses[ran - 1];
  t.ok(last.fields.some((f: any) => f.name === "Transfer-Encoding" && f.value === "chunked"), "the list was streamed");
  const blank = last.parts.findIndex((p: any) => p.kind === "blank-line");
  const bodyParts = last.parts.slice(blank + 1);
  let at = last.parts[blank].end;
  let tiled = true;
  for (const p of bodyParts) {
    tiled &&= p.start === at;
    at = p.end;
  }
  t.ok(tiled && at === last.end, "the body's parts tile it, to its end in the stream");
  const shown = bodyParts.reduce((n: number, p: any) => n + Buffer.byteLength(p.text, p.kind === "chunk-data" ? "utf8" : "latin1"), 0);
  const omitted = bodyParts.reduce((n: number, p: any) => n + (p.omitted ?? 0), 0);
  t.ok(omitted > 0, "and say how many of its bytes are not shown");
  t.equal(shown + omitted, last.end - last.parts[blank].end, "shown + omitted = the body as written");
  t.ok(bodyParts.some((p: any) => p.omitted > 0 && /budget|Not kept/.test(`${p.label} ${p.note ?? ""}`)), "saying why: the budget");
  t.ok(cut.responseBytesNotShown >= omitted);
  t.equal(body.response.bytes, last.end, "response.bytes counts everything the server wrote, shown or not");
  t.equal(Buffer.byteLength(body.response.raw) + cut.rawBytesNotShown, body.response.bytes, "raw: shown + not shown = written");
  t.equal(body.response.raw, body.response.raw.slice(0, Buffer.byteLength(body.response.raw)), "raw is a prefix");
});

t.test("past the request limit and past the budget at once: the answer says both, and neither cut request ran", async (t) => {
  const { app, store } = await docsApp({ kept: { responseBytes: 0 } });
  await bigPosts(store);
  const fact = (text: string) => `POST /api/v2/facts HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: ${text.length}\r\n\r\n${text}`;
  // Ten requests (the fifth a fact the budget leaves no turn to), then an eleventh (a fact) past the limit, and a list.
  const ten = LIST.repeat(4) + fact("Sent after the budget.") + LIST.repeat(5);
  const raw = ten + fact("Sent past the limit.") + LIST;
  const { status, body, response } = await wire(app, raw);
  t.equal(status, 200);
  t.ok(Buffer.byteLength(response.body) <= BUDGET, `the answer is ${Buffer.byteLength(response.body)} bytes, at most ${BUDGET}`);
  t.ok(isWireView(body), `matches the documented schema ${JSON.stringify(isWireView.errors)}`);
  t.equal(body.request.requests.length, 10, "the ten requests before the limit are described");
  const ran = body.response.responses.length;
  t.ok(ran >= 1 && ran < 4, `the first lists ran (${ran}), the budget stopped the rest`);
  const cut = body.cut;
  t.same(cut.requestsNotRun, Array.from({ length: 10 - ran }, (_, i) => ran + i), "the requests after the budget, by index");
  t.equal(cut.pastRequestLimit, ten.length, "and where the request past the limit begins");
  t.same([body.request.unread.kind, body.request.unread.start, body.request.unread.end], ["unread", ten.length, raw.length], "its bytes and those after it are the unread part");
  t.match(cut.detail, /^The body holds more than 10 requests, and the wire view runs at most 10 of one body: it stopped at the head of request 11 \(byte /);
  t.match(cut.detail, new RegExp(`The wire view's output budget is 4 MiB of answer, in at most 4096 parts\\. ${10 - ran} of the 10 requests were not run`));
  const texts = (await store.facts.list()).map((f) => f.text);
  t.notOk(texts.includes("Sent after the budget."), "the fact the budget left no turn to did not run");
  t.notOk(texts.includes("Sent past the limit."), "nor did the one past the limit");
});

t.test("the output budget covers the account of the request too: 1-byte chunks", async (t) => {
  const { app } = await docsApp();
  const count = 170_000; // 1 MiB of input: 3 parts per 6 bytes, each part some 100 bytes of JSON
  // To a route that takes a megabyte (the facts route takes 4 KiB, and would refuse this as its chunks pass that).
  const raw = `POST /api/v1/post/chunks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${"1\r\na\r\n".repeat(count)}0\r\n\r\n`;
  const { status, body, response } = await wire(app, raw);
  t.equal(status, 200);
  t.ok(Buffer.byteLength(response.body) <= BUDGET, `the answer is ${Buffer.byteLength(response.body)} bytes, at most ${BUDGET}`);
  t.ok(isWireView(body), `matches the documented schema ${JSON.stringify(isWireView.errors)}`);
  const [req] = body.request.requests;
  t.equal(req.state, "complete");
  t.equal(req.end, raw.length, "the request still spans the whole input");
  const omitted = req.parts.filter((p: any) => p.kind === "omitted");
  t.equal(omitted.length, 1, "the parts past the budget are one omitted stretch");
  t.equal(omitted[0].end, req.end);
  t.equal(omitted[0].omitted, omitted[0].end - omitted[0].start);
  let at = 0;
  let tiled = true;
  for (const p of req.parts) {
    tiled &&= p.start === at;
    at = p.end;
  }
  t.ok(tiled && at === raw.length, "the parts still tile the input");
  t.ok(body.cut.requestBytesNotShown >= omitted[0].omitted);
  t.equal(body.response.responses[0].status, 400, "the request itself ran (and was refused: the body is not JSON)");
});

t.test("responses cut anywhere (status line, a field, the body, a chunk) still tile what the server wrote, and say what is left out", async (t) => {
  const { app, store } = await docsApp();
  // About 200 KB of list, more than one batch of the store (128 KiB): a streamed list goes out a batch at a time, each a chunk.
  for (let i = 0; i < 200; i++) await store.posts.create({ id: `p-${i}`, title: `Post ${i}`, body: "A streamed list comes in chunks. ".repeat(30) });
  const { output } = await inject(
    app.handle,
    "GET /api/v2/status HTTP/1.1\r\nHost: x\r\n\r\nGET /api/v1/posts HTTP/1.1\r\nHost: x\r\n\r\nGET /api/v1/artigo/1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    { stepwise: true },
  );
  const requests = [{ method: "GET" }, { method: "GET" }, { method: "GET" }] as RequestAccount[];
  const whole = accountOfResponses(output, requests);
  t.equal(whole.length, 3);
  t.ok(whole[1]!.parts.filter((p) => p.kind === "chunk-data").length > 1, "the list came in several chunks");
  const bodyStart = whole[2]!.parts.at(-1)!.start;
  const listCuts = Array.from({ length: 12 }, (_, i) => whole[1]!.start + Math.floor(((i + 1) * (whole[1]!.end - whole[1]!.start)) / 13));
  for (const kept of [5, whole[0]!.end + 20, ...listCuts, bodyStart - 1, bodyStart + 10, output.length - 1]) {
    const budget = createBudget(1 << 20);
    const responses = accountOfResponses(output.subarray(0, kept), requests, budget, output.length);
    const parts = responses.flatMap((r) => r.parts);
    let at = 0;
    let shownRight = true;
    for (const p of parts) {
      if (p.start !== at) break;
      at = p.end;
      const shown = p.end - p.start - (p.omitted ?? 0);
      // (A part that shows nothing, an omitted stretch past the bytes kept, shows nothing past them either.)
      shownRight &&= p.text === output.toString(p.kind === "body" || p.kind === "chunk-data" ? "utf8" : "latin1", p.start, p.start + shown) && (shown === 0 || p.start + shown <= kept);
    }
    t.equal(at, output.length, `kept ${kept}: the parts run to the last byte written`);
    t.ok(shownRight, `kept ${kept}: each part shows its first bytes, none past what was kept`);
    t.equal(responses.at(-1)!.end, output.length);
    const omitted = parts.reduce((n, p) => n + (p.omitted ?? 0), 0);
    t.equal(budget.responseBytesNotShown, omitted, `kept ${kept}: the bytes not shown are those the parts omit`);
    t.ok(omitted >= output.length - kept, `kept ${kept}: every byte not kept is among them`);
  }
});

t.test("cross-site use is refused: Origin of another site, Sec-Fetch-Site, text/plain", async (t) => {
  const { app, store } = await docsApp();
  await store.posts.create({ id: "keep", title: "Keep me", body: "A cross-site page must not delete this." });
  const post = async (headers: Record<string, string>) => request(app, "POST", "/api/wire", headers, deleteRequest("keep"));
  const stillThere = async () => (await store.posts.get("keep")) !== undefined;

  const evil = await post({ "Content-Type": "message/http", Origin: "https://evil.example" });
  t.equal(evil.status, 403);
  t.equal(evil.headers["content-type"], "application/problem+json");
  t.match(JSON.parse(evil.body).detail, /Origin https:\/\/evil\.example/);
  t.ok(await stillThere(), "a cross-site Origin deletes nothing");

  const otherPort = await post({ "Content-Type": "message/http", Origin: "http://127.0.0.1:3000" });
  t.equal(otherPort.status, 403, "another local server's page (same host, another port) is another origin");
  t.equal((await post({ "Content-Type": "message/http", Origin: "null" })).status, 403, "an opaque origin (sandbox, file:) is refused");

  const site = await post({ "Content-Type": "message/http", "Sec-Fetch-Site": "cross-site" });
  t.equal(site.status, 403);
  t.match(JSON.parse(site.body).detail, /Sec-Fetch-Site: cross-site/);
  t.equal((await post({ "Content-Type": "message/http", "Sec-Fetch-Site": "same-site" })).status, 403, "same-site is still another origin");
  t.ok(await stillThere(), "Sec-Fetch-Site: cross-site deletes nothing");

  const plain = await post({ "Content-Type": "text/plain", Origin: "https://evil.example" });
  t.equal(plain.status, 415, "text/plain is refused before anything else is looked at");
  const plainAlone = await post({ "Content-Type": "text/plain; charset=utf-8" });
  t.equal(plainAlone.status, 415, "text/plain is refused even from the same origin");
  t.equal(plainAlone.headers["accept-post"], "message/http");
  const detail = JSON.parse(plainAlone.body).detail;
  t.match(detail, /message\/http/, "the detail says what to send");
  t.match(detail, /preflight/, "and why: text/plain needs no CORS preflight");
  t.ok(await stillThere(), "text/plain deletes nothing");

  const options = await request(app, "OPTIONS", "/api/wire", { Origin: "https://evil.example", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type" });
  t.equal(options.headers["access-control-allow-origin"], undefined, "the preflight grants nothing");
  t.equal(options.headers["access-control-allow-headers"], undefined);

  const same = await post({ "Content-Type": "message/http", Origin: "http://127.0.0.1", "Sec-Fetch-Site": "same-origin" });
  t.equal(same.status, 200, "the page's own origin is served");
  t.equal(JSON.parse(same.body).response.responses[0].status, 200);
  t.notOk(await stillThere(), "and its request ran");
  const tool = await request(app, "POST", "/api/wire", { "Content-Type": "message/http" }, "GET /api/v2/status HTTP/1.1\r\nHost: x\r\n\r\n");
  t.equal(tool.status, 200, "without Origin or Sec-Fetch-Site (curl, scripts) it is served");
  const status = "GET /api/v2/status HTTP/1.1\r\nHost: x\r\n\r\n";
  const viaHost = async (host: string, origin: string) => {
    const head = `POST /api/wire HTTP/1.1\r\nHost: ${host}\r\nOrigin: ${origin}\r\nContent-Type: message/http\r\nContent-Length: ${status.length}\r\nConnection: close\r\n\r\n`;
    return splitResponses((await inject(app.handle, head + status)).output)[0]!.status;
  };
  t.equal(await viaHost("127.0.0.1:80", "http://127.0.0.1"), 200, "Host: h:80 is the origin http://h");
  t.equal(await viaHost("LOCALHOST:8080", "http://localhost:8080"), 200, "host names compare without case");
  t.equal(await viaHost("127.0.0.1:8443", "https://127.0.0.1:8443"), 200, "https origins too (TLS, or a proxy in front)");
  t.equal(await viaHost("127.0.0.1:8080", "http://127.0.0.1:8080, http://evil.example"), 403, "two Origin values are refused");
});

/** An app over a store whose posts.pageJson() (how a JSON list reads its posts) calls `hook` first (once), to see the wire view's work begin. */
async function hookedApp(): Promise<{ app: ReturnType<typeof createApp>; store: Store; onFirstList: (hook: () => void) => void }> {
  const store = createMemoryStore();
  await seed(store);
  let hook: (() => void) | null = null;
  const page = store.posts.pageJson.bind(store.posts);
  (store.posts as { pageJson: typeof page }).pageJson = (query) => {
    const h = hook;
    hook = null;
    h?.();
    return page(query);
  };
  return { app: createApp({ store }), store, onFirstList: (h) => (hook = h) };
}

t.test("over real sockets: a status request sent while a big wire request runs is answered before the wire answer", async (t) => {
  for (let round = 0; round < 5; round++) {
    const { app, store, onFirstList } = await hookedApp();
    await bigPosts(store, round % 2 === 0 ? "x" : '"');
    const order: string[] = [];
    const running = await listen(app.handle, { onExchange: (e: Exchange) => order.push(`${e.method} ${e.target}`) });
    const status = net.connect(running.port, "127.0.0.1");
    await once(status, "connect");
    const wireClient = net.connect(running.port, "127.0.0.1");
    await once(wireClient, "connect");

    // The status request leaves the moment the wire view's first request reaches the store: its work has begun.
    const statusAnswer = new Promise<string>((resolve, reject) => {
      onFirstList(() => {
        readUntil(status, '"The server is up."}').then(resolve, reject);
        status.write("GET /api/v2/status HTTP/1.1\r\nHost: x\r\n\r\n");
      });
    });
    const inner = LIST.repeat(10);
    const received: Buffer[] = [];
    wireClient.on("data", (d: Buffer) => received.push(d));
    const wireClosed = once(wireClient, "close");
    wireClient.write(`POST /api/wire HTTP/1.1\r\nHost: x\r\nContent-Type: message/http\r\nContent-Length: ${inner.length}\r\nConnection: close\r\n\r\n${inner}`);
    await statusAnswer;
    await wireClosed;
    status.destroy();
    const text = Buffer.concat(received).toString("latin1");
    t.match(text, /^HTTP\/1\.1 200 OK\r\n/, `round ${round}: the wire view answered`);
    t.same(order, ["GET /api/v2/status", "POST /api/wire"], `round ${round}: the status request was answered first`);
    await running.close();
  }
});
