// The terminal trace (TRACE=1): every part of every exchange, as the parser
// read it and the server wrote it. In process here, over a real socket to a
// server with a trace of its own; test/trace/process.test.ts runs the real
// server with TRACE=1.

import fc from "fast-check";
import net from "node:net";
import { once } from "node:events";
import { Writable } from "node:stream";
import t from "tap";
import { DEFAULT_LIMITS, RequestParser } from "../../src/http/parse/parser.js";
import { createTrace, useColor } from "../../src/trace/index.js";
import { Tracer } from "../../src/trace/tracer.js";
import { painter } from "../../src/trace/text.js";
import { docsApp } from "../helpers/app.js";
import { listen, readUntil } from "../helpers/wire.js";
import { httpishArb, limitsArb, mutate, mutationArb, pipelineArb } from "../parser/fixtures/generators.js";

/** A stream that keeps what is written, and tells when a line matching `re` has arrived. */
function collector() {
  let text = "";
  const waiters: { re: RegExp; resolve: () => void }[] = [];
  const out = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      text += chunk.toString("utf8");
      for (const w of [...waiters]) if (w.re.test(text)) waiters.splice(waiters.indexOf(w), 1), w.resolve();
      callback();
    },
  });
  return {
    out,
    text: () => text,
    seen: (re: RegExp) => new Promise<void>((resolve) => (re.test(text) ? resolve() : waiters.push({ re, resolve }))),
  };
}

async function tracedServer(color: boolean, bodyBytes = 256) {
  const { app } = await docsApp();
  const c = collector();
  const server = await listen(app, { trace: createTrace({ out: c.out, color, bodyBytes }) });
  return { ...c, server };
}

async function exchange(port: number, raw: string, until: string): Promise<string> {
  const socket = net.connect(port, "127.0.0.1");
  await once(socket, "connect");
  const answer = readUntil(socket, until);
  socket.write(Buffer.from(raw, "latin1"));
  const text = await answer;
  socket.destroy();
  return text;
}

t.test("colour on a terminal: ANSI escapes, with the offending byte marked; useColor says when", async (t) => {
  const s = await tracedServer(true);
  t.teardown(() => s.server.close());
  await exchange(s.server.port, "GET /api/v2/status HTTP/1.1\r\nHost : x\r\n\r\n", "Connection: close");
  await s.seen(/closes after it/);
  t.match(s.text(), /\x1b\[2m\\r\x1b\[0m\x1b\[2m\\n\x1b\[0m/, "CR LF dimmed");
  t.match(s.text(), /Host\x1b\[1;7;31m \x1b\[0m: x/, "the space before the colon, marked");
  t.equal(useColor({ isTTY: true }, undefined), true);
  t.equal(useColor({ isTTY: true }, ""), true, "NO_COLOR empty: colour");
  t.equal(useColor({ isTTY: true }, "1"), false, "NO_COLOR set: plain");
  t.equal(useColor({ isTTY: false }, undefined), false, "not a terminal: plain");
  t.equal(useColor({}, undefined), false);
});

t.test("bodies are cut after TRACE_BODY_BYTES, both ways, and say how much is left out", async (t) => {
  const s = await tracedServer(false, 8);
  t.teardown(() => s.server.close());
  const fact = "Traces cut long bodies.";
  const head = `POST /api/v2/facts HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: ${fact.length}\r\n\r\n`;
  await exchange(s.server.port, head + fact, "}");
  await s.seen(/response 201/);
  t.match(s.text(), `> ${`${head.length}-${head.length + 22}`.padEnd(11)} body            Traces c ... (15 more bytes)  (23 bytes)\n`);
  t.match(s.text(), /< \{"id":"3 \.\.\. \(\d+ more bytes\)\n/);
});

t.test("a head its route refuses: answered from it alone, said so, and counted as refused at the close", async (t) => {
  const s = await tracedServer(false);
  t.teardown(() => s.server.close());
  // The facts route takes text/plain only: the service refuses this head (415) before its body is read.
  const json = '{"text": "A fact."}';
  await exchange(s.server.port, `POST /api/v2/facts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${json.length}\r\n\r\n${json}`, "}");
  await s.seen(/connection closed after/);
  t.match(s.text(), /\* request 1: answered from its head alone: its body, and all after it, is never read/);
  t.match(s.text(), /response 415: Connection: close/);
  t.match(s.text(), /1 request head read whole, request 1 refused\n/);
  t.notMatch(s.text(), /body            /, "no byte of the body is shown as read");
});

t.test("a client's bytes cannot drive the operator's terminal: every control byte is escaped", async (t) => {
  const s = await tracedServer(false);
  t.teardown(() => s.server.close());
  // In a body (the handler refuses it: a fact has no control characters), and in a field value (the parser refuses it).
  const evil = "\x1b[2J\x1b]0;owned\x07\u202e";
  await exchange(
    s.server.port,
    `POST /api/v2/facts HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(evil)}\r\n\r\n${Buffer.from(evil).toString("latin1")}`,
    "}",
  );
  await s.seen(/response 422/);
  await exchange(s.server.port, "GET /api/v2/status HTTP/1.1\r\nHost: x\r\nX-Evil: a\x1bb\r\n\r\n", "}");
  await s.seen(/response 400/);
  t.notMatch(s.text(), /[\x00-\x09\x0b-\x1f\x7f\u202e]/, "no control byte, escape or bidi override in the output");
  t.match(s.text(), /X-Evil: a\\x1bb\\r\\n/);
  t.match(s.text(), /\\x1b\[2J\\x1b\]0;owned\\x07\\u\{202e\}/);
});

t.test("property: whatever the bytes, tracing them never throws and prints no control byte", (t) => {
  const trace = (raw: string, limits = DEFAULT_LIMITS) => {
    let out = "";
    const tracer = new Tracer("#1", { write: (s) => void (out += s), paint: painter(false), bodyBytes: 16 });
    const parser = new RequestParser(limits, tracer);
    const bytes = Buffer.from(raw, "latin1");
    // Fed in pieces of 7, as a socket might cut them.
    for (let at = 0; at < bytes.length && !parser.closed; at += 7) {
      const piece = bytes.subarray(at, at + 7);
      tracer.received(piece);
      parser.receive(piece);
      for (let event = parser.next(); event.kind !== "need-data"; event = parser.next()) {
        if (event.kind === "head") tracer.head(event.head);
        else if (event.kind === "request") tracer.request(event.request);
        else if (event.kind === "error") tracer.error(event.error);
      }
    }
    tracer.response("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n", raw.slice(0, 40), false);
    tracer.closed();
    const bad = out.split("\n").find((l) => /[\x00-\x09\x0b-\x1f\x7f-\x9f]/.test(l));
    if (bad !== undefined) throw new Error(`a control byte in ${JSON.stringify(bad)}`);
  };
  for (const [name, property] of [
    ["HTTP-ish", fc.property(httpishArb, limitsArb, (raw, limits) => trace(raw, limits))],
    ["mutated", fc.property(pipelineArb, fc.array(mutationArb, { minLength: 1, maxLength: 3 }), ({ raw }, m) => trace(mutate(raw, m)))],
    ["random bytes", fc.property(fc.uint8Array({ maxLength: 300 }), (b) => trace(Buffer.from(b).toString("latin1")))],
  ] as const) {
    const details = fc.check(property as fc.IProperty<unknown[]>, { numRuns: 400, includeErrorInReport: true });
    t.notOk(details.failed, `${name}: ${details.numRuns} runs${details.failed ? `\n${fc.defaultReportMessage(details)}` : ""}`);
  }
  t.end();
});

t.test("what a learner reads: a space in a field name, a repeated Content-Length, and the count at the close", async (t) => {
  const s = await tracedServer(false);
  t.teardown(() => s.server.close());
  const trace = async (raw: string) => {
    const before = s.text().length;
    await exchange(s.server.port, raw, "Connection: close");
    await s.seen(new RegExp(`[\\s\\S]{${before}}[\\s\\S]*connection closed after`));
    return s.text().slice(before);
  };

  // No colon at all: the words must not promise one.
  const broken = await trace("GET /api/v2/status HTTP/1.1\r\nBroken header\r\n\r\n");
  t.match(broken, /WHITESPACE_BEFORE_COLON at byte 35 \(byte 35 of request 1\): 400 Whitespace in a field name, or before its colon/);
  t.match(broken, /! {3}A space follows "Broken", where only more of the field name or its colon may come\n/);
  t.match(broken, /fix: A field name is a token, so it holds no space or tab, and its colon follows it directly\. If you meant `Name: value`/);
  t.notMatch(broken, /Remove the space/, "no fix that assumes a colon");
  t.match(broken, /connection closed after 46 bytes: 0 request heads read whole, request 1 refused\n/, "the close counts as the error line does");

  const twoWords = await trace("GET /api/v2/status HTTP/1.1\r\nMy Header: v\r\n\r\n");
  t.match(twoWords, /A space follows "My", where only more of the field name or its colon may come/);
  t.match(twoWords, /not `My Header: value` \(a name of several words takes hyphens: `My-Header`\)/);

  // The second Content-Length is refused at its colon; the caret is under that field line's first byte.
  const head = "POST /api/v2/facts HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n";
  const repeated = await trace(`${head}Content-Length: 5\r\n\r\nhello`);
  t.match(repeated, new RegExp(`REPEATED_CONTENT_LENGTH at byte ${head.length} \\(byte ${head.length} of request 1\\)`));
  t.match(repeated, new RegExp(`#\\d+ ! {3}Content-Length: 5\\\\r\\\\n\n#\\d+ ! {3}\\^ byte ${head.length}\n`), "the caret under the C of the second Content-Length");

  // A refusal in the second request of a connection: one head read whole before it.
  const second = await trace("GET /api/v2/status HTTP/1.1\r\nHost: x\r\n\r\nGET /api/v2/status HTTP/1.1\r\nHost : x\r\n\r\n");
  t.match(second, /connection closed after \d+ bytes: 1 request head read whole, request 2 refused\n/);
});
