// The wire view and a socket run one parser path: for every case of the case
// table, the same bytes are sent over loopback sockets to a server as
// production runs it and to one whose parsers report their spans to a trace
// (as TRACE=1 does), and read by the wire view (src/wire/); all must
// agree on the outcome: the responses' statuses, the error's code, detail
// and offsets, the parts the bytes were read as, and where reading stopped.
//
// A socket's parser reports to no one unless TRACE=1 is on; the wire view's
// always has a span listener. A rule that only one of those paths applies
// (the parser has read whole lines on a fast path it leaves when spans
// are wanted) would show here as a case whose answers differ. Shown to fail: a
// fast path that skipped the header section's byte count, and an error
// offset moved by one only when spans are on, each fail cases of this test.

import net from "node:net";
import { once } from "node:events";
import t from "tap";
import type { RequestStreamAccount } from "../../src/wire/requests.js";
import { accountOfRequests } from "../../src/wire/run.js";
import type { ConnectionTrace } from "../../src/http/connection/trace-hook.js";
import type { SpanKind } from "../../src/http/parse/spans.js";
import type { ParserLimits } from "../../src/http/parse/parser.js";
import { CASES } from "./fixtures/cases.js";
import { limitsWith } from "./fixtures/helpers.js";
import { listen, splitResponses, type Running } from "../helpers/wire.js";

/** What the socket's parser reported through the connection's trace. */
interface SocketSeen {
  spans: [SpanKind, number, number][];
  closed: Promise<void>;
}

/** The part kind the wire view makes of each kind of line span (the spans inside a line make no part). */
const PART_OF: Partial<Record<SpanKind, string>> = {
  "empty-line": "empty-line",
  "request-line": "request-line",
  "field-line": "field",
  "blank-line": "blank-line",
  body: "body",
  "chunk-size-line": "chunk-size",
  "last-chunk": "last-chunk",
  "chunk-data": "chunk-data",
  "chunk-end": "chunk-end",
  "trailer-line": "trailer",
  "trailer-end": "blank-line",
};

/** A server whose connections report to the trace of the connection opened last. */
async function tracedServer(limits: ParserLimits): Promise<{ running: Running; next: () => SocketSeen }> {
  let current: SocketSeen | null = null;
  let resolveClosed: () => void = () => {};
  const running = await listen(() => ({ status: 200, body: "ok" }), {
    limits,
    trace: (): ConnectionTrace => {
      const seen = current!;
      return {
        span: (kind, start, end) => seen.spans.push([kind, start, end]),
        received: () => {},
        head: () => {},
        request: () => {},
        error: () => {},
        response: () => {},
        closed: () => resolveClosed(),
      };
    },
  });
  return {
    running,
    next: () => {
      const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
      current = { spans: [], closed };
      return current;
    },
  };
}

/** The line parts, with the pieces of one body (however the reads cut it) as one. */
function socketParts(spans: readonly [SpanKind, number, number][]): [string, number, number][] {
  const parts: [string, number, number][] = [];
  for (const [kind, start, end] of spans) {
    const part = PART_OF[kind];
    if (part === undefined) continue;
    const last = parts[parts.length - 1];
    if ((part === "body" || part === "chunk-data") && last !== undefined && last[0] === part && last[2] === start) last[2] = end;
    else parts.push([part, start, end]);
  }
  return parts;
}

/**
 * The wire view's parts made from the parser's spans. Left out: the line it
 * shows around an error (the parser refused that line, so it made no span of
 * it; only a head refused as a whole is refused at a blank line it did
 * report), and bytes that never ended a line (unfinished).
 */
function wireParts(account: RequestStreamAccount): [string, number, number][] {
  return account.requests.flatMap((r) =>
    r.parts.filter((p) => p.kind !== "incomplete" && !(p.error === true && p.kind !== "blank-line")).map((p): [string, number, number] => [p.kind, p.start, p.end]),
  );
}

const byLimits = new Map<string, { limits: ParserLimits; cases: typeof CASES }>();
for (const c of CASES) {
  const limits = limitsWith(c.limits);
  const key = JSON.stringify(limits);
  const group = byLimits.get(key) ?? { limits, cases: [] };
  group.cases.push(c);
  byLimits.set(key, group);
}

/** Sends `bytes` and half-closes: the server answers what it read, then closes. Returns what came back. */
async function exchange(port: number, bytes: Buffer): Promise<Buffer> {
  const socket = net.connect(port, "127.0.0.1");
  await once(socket, "connect");
  const received: Buffer[] = [];
  socket.on("data", (d: Buffer) => received.push(d));
  socket.end(bytes);
  await once(socket, "close");
  return Buffer.concat(received);
}

/** The final responses' statuses (an interim 100 is the connection's, not the parser's outcome), and the problem body's error. */
function answered(bytes: Buffer): { statuses: number[]; error: { code: string; offset: number; detail: string } | null } {
  const responses = splitResponses(bytes).filter((r) => r.status >= 200);
  const last = responses[responses.length - 1];
  const problem = last?.headers["content-type"] === "application/problem+json" ? (JSON.parse(last.body) as { code: string; offset: number; detail: string }) : null;
  return { statuses: responses.map((r) => r.status), error: problem === null ? null : { code: problem.code, offset: problem.offset, detail: problem.detail } };
}

t.test("every case: a socket and the wire view read the bytes alike", async (t) => {
  let compared = 0;
  for (const { limits, cases } of byLimits.values()) {
    // One server as production runs it (no listener on its parsers), one whose parsers report their spans (TRACE=1).
    const plain = await listen(() => ({ status: 200, body: "ok" }), { limits });
    const { running: traced, next } = await tracedServer(limits);
    try {
      for (const c of cases) {
        const bytes = Buffer.from(c.raw, "latin1");
        const wire = await accountOfRequests(bytes, limits);
        const socket = answered(await exchange(plain.port, bytes));
        const seen = next();
        const tracedAnswer = answered(await exchange(traced.port, bytes));
        await seen.closed;

        const complete = wire.requests.filter((r) => r.state === "complete").length;
        const expected = {
          statuses: [...Array<number>(complete).fill(200), ...(wire.error === null ? [] : [wire.error.status])],
          error: wire.error === null ? null : { code: wire.error.code, offset: wire.error.offsetInRequest, detail: wire.error.detail },
        };
        t.same(socket, expected, `${c.name}: what the socket answered (statuses, error code, offset, detail)`);
        t.same(tracedAnswer, socket, `${c.name}: a traced socket answers the same`);
        const errorSpan = seen.spans.find(([kind]) => kind === "error");
        t.equal(errorSpan?.[1], wire.error?.offset, `${c.name}: the error's place in the stream`);
        t.same(socketParts(seen.spans), wireParts(wire), `${c.name}: the parts`);
        // What was never read: the wire view's unread bytes begin where the socket's parser last took a byte.
        if (wire.unread !== null && wire.error === null) {
          const lastEnd = seen.spans.reduce((end, [, , e]) => Math.max(end, e), 0);
          t.equal(wire.unread.start, lastEnd, `${c.name}: reading stopped at the same byte`);
        }
        compared++;
      }
    } finally {
      await plain.close();
      await traced.close();
    }
  }
  t.equal(compared, CASES.length, "every case of the table was compared");
});
