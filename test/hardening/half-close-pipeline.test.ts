// A client that half-closes after its requests gets an answer to every one
// it completed (docs/protocol.md, "Connections"; RFC 9112 §9.6 leaves the
// reading side open). Found over a socket against `npm start`: 65 pipelined
// GETs written with end() got 64 answers, 100 got 64, 1,000 got 128; and of
// 200 clients arriving at once, each writing one GET then FIN, a few got no
// answer at all. The requests past a turn's 64 (or those of a connection
// waiting for its turn while others arrive) wait in the paused parser, and
// the client's FIN ('end', which node emits even on a paused socket) stops
// the parser, dropping them though they were complete.

import t from "tap";
import { inject } from "../../src/http/connection/inject.js";
import type { Handler } from "../../src/http/connection/service.js";
import { listen, talk } from "../helpers/wire.js";

const handler: Handler = (request) => ({ status: 200, body: request.target });
const requests = (n: number) => Array.from({ length: n }, (_, i) => `GET /${i} HTTP/1.1\r\nHost: t\r\n\r\n`).join("");
const answered = (bytes: Buffer) => bytes.toString("latin1").split("HTTP/1.1 200 OK\r\n").length - 1;

t.test("over a socket: pipelined requests, then FIN: every complete request is answered, in order", async (t) => {
  const s = await listen(handler);
  t.teardown(s.close);
  for (const n of [64, 65, 100, 1000]) {
    const bytes = await talk(s.port, [requests(n)], { halfClose: true });
    t.equal(answered(bytes), n, `${n} requests then FIN: ${n} answers`);
    t.match(bytes.toString("latin1"), new RegExp(`/${n - 1}$`), "the last one last");
  }
});

t.test("in process: the same, through inject()", async (t) => {
  for (const n of [65, 1000]) {
    const { output } = await inject(handler, requests(n));
    t.equal(answered(output), n, `${n} requests then the end of input: ${n} answers`);
  }
});
