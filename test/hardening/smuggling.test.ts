// Request smuggling, differentially: each ambiguous framing is sent over a
// real socket, followed on the same connection by a second request, to a
// server whose handler records every request it is handed. A front end that
// read the framing the other way would see a different request boundary; the
// bytes are built so that under that other reading an inner request,
// `GET /smuggled`, would start. The checks, for every case:
//
//   - the handler is handed exactly the requests (target and body) the strict
//     RFC 9112 reading gives, and never /smuggled;
//   - the responses are exactly those, in order, then the error (if any) as
//     the last one, with Connection: close, and nothing after it: the second
//     request is not answered once the framing has been refused;
//   - the response stream parses as whole responses, and the server closes;
//   - the same happens whether the bytes arrive in one write or in small pieces.

import t from "tap";
import net from "node:net";
import { once } from "node:events";
import type { Handler } from "../../src/http/connection/service.js";
import { listen, splitResponses, type RawResponse } from "../helpers/wire.js";
import { CASES, SECOND, type Seen } from "./smuggling-cases.js";

// ---------------------------------------------------------------------------

interface Wire {
  readonly bytes: Buffer;
  /** A socket error seen by the client (none is expected). */
  readonly error: string | null;
}

/** Send `data` (in pieces of `piece` bytes, each its own write, or whole), half-close, and read until the server closes. */
async function exchange(port: number, data: Buffer, piece: number): Promise<Wire> {
  const socket = net.connect(port, "127.0.0.1");
  await once(socket, "connect");
  socket.setNoDelay(true);
  const received: Buffer[] = [];
  let error: string | null = null;
  socket.on("data", (d: Buffer) => received.push(d));
  socket.on("error", (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
  const closed = once(socket, "close");
  for (let at = 0; at < data.length; at += piece) socket.write(data.subarray(at, at + piece));
  socket.end();
  await closed;
  return { bytes: Buffer.concat(received), error };
}

const seen: Seen[] = [];
const fieldsSeen: (readonly string[])[] = [];
const recorder: Handler = (req) => {
  seen.push({ target: req.target, body: req.body.toString("latin1") });
  fieldsSeen.push(req.fields);
  return { status: 200, headers: { "Content-Type": "text/plain" }, body: `handled ${req.target}` };
};

t.test("smuggling differentials over a real socket", async (t) => {
  const s = await listen(recorder);
  t.teardown(s.close);
  const refusedCount = CASES.filter((c) => c.error !== undefined && c.handled.length === 0).length;
  t.ok(CASES.length >= 100, `${CASES.length} cases: ${refusedCount} refused outright, ${CASES.length - refusedCount} with requests served`);
  for (const c of CASES) {
    for (const piece of [Infinity, 7]) {
      const how = piece === Infinity ? "one write" : `${piece}-byte writes`;
      await t.test(`${c.name} (${how})`, async (t) => {
        seen.length = 0;
        fieldsSeen.length = 0;
        const wire = await exchange(s.port, Buffer.from(c.first + SECOND, "latin1"), piece);
        t.equal(wire.error, null, "no reset or socket error: the server closed cleanly");
        t.notOk(
          seen.some((r) => r.target === "/smuggled"),
          "the inner request never reaches the handler",
        );
        t.same(seen, c.handled, "the handler was handed exactly the strict reading's requests");
        let responses: RawResponse[] = [];
        t.doesNotThrow(() => (responses = splitResponses(wire.bytes)), "the bytes written are whole responses");
        const interim = responses.filter((r) => r.status < 200);
        const finals = responses.filter((r) => r.status >= 200);
        t.equal(interim.length, c.interim ?? 0, "interim responses");
        const expected = [...c.handled.map(() => 200), ...(c.error ? [c.error.status] : [])];
        t.same(
          finals.map((r) => r.status),
          expected,
          "one response per handled request, then the error, and nothing after it",
        );
        finals.forEach((r, i) => {
          if (i < c.handled.length) t.equal(r.body, `handled ${c.handled[i]!.target}`, `response ${i + 1} answers its request`);
        });
        t.notMatch(wire.bytes.toString("latin1"), /smuggled/, "nothing the server wrote mentions the inner request");
        if (c.error !== undefined) {
          const last = finals[finals.length - 1];
          t.equal(last?.headers.connection, "close", "the error closes the connection");
          t.equal(last?.headers["content-type"], "application/problem+json");
          t.equal(last === undefined ? undefined : JSON.parse(last.body).code, c.error.code, "the parser's named error");
        }
        for (const name of c.absentFields ?? []) {
          t.notOk(fieldsSeen[0]?.includes(name), `the handler does not see a ${name} field`);
        }
      });
    }
  }
});
