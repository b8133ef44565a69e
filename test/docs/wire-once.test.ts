// The wire view parses once, on the connection's path: the bytes it is sent
// are read by exactly one parser, the one of the connection that serves the
// requests inside (src/wire/run.ts), and its account of them is that run's
// trace. A second pass over the bytes (a parser of its own to count the
// requests, or to make the account before they are run) would read them
// through another parser, and fails this test.
//
// Each parser is told apart by the first bytes it receives: the parser of the
// connection that carries POST /api/wire itself begins with that request,
// and any parser that reads the inner bytes from their start begins with
// them. (Bytes a parser holds while it is not asked stay in that parser.)

import t from "tap";
import { RequestParser } from "../../src/http/parse/parser.js";
import { docsApp, wire } from "../helpers/app.js";
import { listen, talk, splitResponses } from "../helpers/wire.js";

/** Counts, while `during` runs, the parsers whose first bytes are the start of `inner`. */
async function parsersOf(inner: Buffer, during: () => Promise<void>): Promise<number> {
  const first = new WeakMap<object, Buffer>();
  const receive = RequestParser.prototype.receive;
  let readers = 0;
  RequestParser.prototype.receive = function (this: RequestParser, chunk: Buffer) {
    if (!first.has(this) && chunk.length > 0) {
      first.set(this, chunk);
      const n = Math.min(chunk.length, inner.length);
      if (chunk.subarray(0, n).equals(inner.subarray(0, n))) readers++;
    }
    return receive.call(this, chunk);
  };
  try {
    await during();
  } finally {
    RequestParser.prototype.receive = receive;
  }
  return readers;
}

const fact = (text: string) => `POST /api/v2/facts HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: ${text.length}\r\n\r\n${text}`;
const STATUS = "GET /api/v2/status HTTP/1.1\r\nHost: x\r\n\r\n";

const INPUTS: Record<string, string> = {
  "one request": STATUS,
  "pipelined requests, one with a body": STATUS + fact("Parsed once.") + STATUS,
  "a head its route refuses, and bytes never read": `POST /api/v2/facts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}${STATUS}`,
  "a protocol error": `${STATUS}GET /api/v2/status HTTP/1.1\r\nHost : x\r\n\r\n`,
  "more requests than the wire view runs": STATUS.repeat(12),
};

t.test("in process: the inner bytes are read by one parser, the one that runs them", async (t) => {
  for (const [name, raw] of Object.entries(INPUTS)) {
    const { app } = await docsApp();
    const inner = Buffer.from(raw, "latin1");
    let status = 0;
    const readers = await parsersOf(inner, async () => {
      status = (await wire(app, inner)).status;
    });
    t.equal(readers, 1, `${name} (answered ${status}): one parser read the bytes`);
  }
});

t.test("over a real socket: the same, and the answer says what that one reading found", async (t) => {
  const { app } = await docsApp();
  const running = await listen(app);
  t.teardown(() => running.close());
  const inner = Buffer.from(STATUS + fact("Parsed once, over a socket.") + STATUS, "latin1");
  let out: Buffer = Buffer.alloc(0);
  const readers = await parsersOf(inner, async () => {
    out = await talk(running.port, [
      `POST /api/wire HTTP/1.1\r\nHost: x\r\nContent-Type: message/http\r\nContent-Length: ${inner.length}\r\nConnection: close\r\n\r\n`,
      inner,
    ]);
  });
  t.equal(readers, 1, "one parser read the inner bytes");
  const [answer] = splitResponses(out);
  t.equal(answer!.status, 200);
  const body = JSON.parse(answer!.body);
  t.same(
    body.request.requests.map((r: { state: string; method: string }) => `${r.state} ${r.method}`),
    ["complete GET", "complete POST", "complete GET"],
  );
  t.same(
    body.response.responses.map((r: { status: number }) => r.status),
    [200, 201, 200],
  );
});
