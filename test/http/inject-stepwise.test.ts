// inject() in stepwise mode: chunks delivered only when the connection is
// quiet, each exchange on its own turn of the event loop, and an output limit
// after which nothing more runs.

import t from "tap";
import type { Handler } from "../../src/http/connection/service.js";
import { inject } from "../../src/http/connection/inject.js";
import type { Request } from "../../src/http/message/request.js";

const get = (path: string, extra = "") => `GET ${path} HTTP/1.1\r\nHost: x\r\n${extra}\r\n`;

/** Answers after a turn of the event loop, and records what ran when. */
function recording(body: (r: Request) => string = (r) => `answer to ${r.target}`) {
  const events: string[] = [];
  let running = 0;
  let most = 0;
  const handler: Handler = (request) => {
    running++;
    most = Math.max(most, running);
    events.push(`start ${request.target}`);
    return new Promise((resolve) =>
      setImmediate(() => {
        running--;
        events.push(`end ${request.target}`);
        resolve({ status: 200, headers: { "Content-Type": "text/plain" }, body: body(request) });
      }),
    );
  };
  return { handler, events, most: () => most };
}

t.test("chunks cut at request ends run one request at a time, in order, with other work between them", async (t) => {
  const { handler, events, most } = recording();
  let ticks = 0;
  let ticking = true;
  const tick = () => {
    ticks++;
    events.push(`tick ${ticks}`);
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  const result = await inject(handler, [get("/a"), get("/b"), get("/c")], { stepwise: true });
  ticking = false;
  t.equal(most(), 1, "never two handlers at once");
  t.same(result.exchanges.map((e) => e.target), ["/a", "/b", "/c"]);
  t.equal(result.written, result.output.length);
  const between = events.slice(events.indexOf("end /a"), events.indexOf("start /b"));
  t.ok(between.some((e) => e.startsWith("tick")), `the event loop turned between /a's answer and /b: ${between.join(", ")}`);
});

t.test("the same answers as the plain mode: a closing request, an unfinished one, a parse error", async (t) => {
  const { handler } = recording();
  const inputs = [
    [get("/a"), get("/b", "Connection: close\r\n"), get("/never")],
    [get("/a"), "POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nshort"],
    [get("/a"), "GET /b HTTP/1.1\r\nHost : x\r\n\r\n"],
    ["GET /unfinished HT"],
  ];
  for (const input of inputs) {
    const plain = await inject(handler, input.join(""));
    const stepwise = await inject(handler, input, { stepwise: true });
    // The half-close comes later in stepwise mode (after the last answer, not while it is being made), so the
    // last answer before it may lack the Connection: close the plain mode adds; nothing else may differ.
    const strip = (b: Buffer) => b.toString("latin1").replace(/Date: [^\r]*/g, "Date: -").replace(/Connection: close\r\n/g, "");
    t.equal(strip(stepwise.output), strip(plain.output), JSON.stringify(input));
  }
});

t.test("keepBytes: the first bytes are kept, all are counted, and no request runs after the limit", async (t) => {
  const { handler, events } = recording((r) => (r.target === "/big" ? "x".repeat(100_000) : "small"));
  const result = await inject(handler, [get("/small"), get("/big"), get("/after"), get("/after2")], { keepBytes: 1000 });
  t.same(result.exchanges.map((e) => e.target), ["/small", "/big"], "the response that crossed the limit was the last");
  t.notOk(events.includes("start /after"), "the requests after it never reached the handler");
  t.ok(result.written > 100_000, `every byte written is counted (${result.written})`);
  t.ok(result.output.length >= 1000 && result.output.length < 1000 + 8 * 1024, `about the limit is kept (${result.output.length})`);
  t.match(result.output.toString("latin1"), /HTTP\/1\.1 200 OK\r\n[\s\S]*Content-Length: 100000\r\n\r\nxxx/, "with the head of the response that crossed it");
});

t.test("a streamed body holds the next request and the half-close back until its last piece is written", async (t) => {
  const events: string[] = [];
  const handler: Handler = async (request) => {
    events.push(`start ${request.target}`);
    if (request.target !== "/stream") return { status: 200, headers: { "Content-Type": "text/plain" }, body: "after" };
    async function* pieces() {
      for (let i = 0; i < 5; i++) {
        // Each piece on a later turn: a stream takes a while, with nothing written in between.
        await new Promise((resolve) => setImmediate(resolve));
        events.push(`piece ${i}`);
        yield `piece ${i};`;
      }
    }
    return { status: 200, headers: { "Content-Type": "text/plain" }, body: pieces() };
  };
  const result = await inject(handler, [get("/stream"), get("/next")], { stepwise: true });
  t.same(events, ["start /stream", "piece 0", "piece 1", "piece 2", "piece 3", "piece 4", "start /next"], "the next request waits for the stream's end");
  const text = result.output.toString("latin1");
  t.match(text, /Transfer-Encoding: chunked\r\n\r\n[\s\S]*piece 4;\r\n0\r\n\r\nHTTP\/1\.1 200 OK\r\n/, "the stream whole, then the next response");
  t.notMatch(text, /Connection: close/, "the half-close came after both: no response says the connection closes");
  t.same(result.exchanges.map((e) => e.target), ["/stream", "/next"]);
});
