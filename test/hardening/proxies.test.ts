// The smuggling corpus (./smuggling-cases.ts) through the proxies people put
// in front of startline: nginx (proxy_http_version 1.1, request buffering off,
// so that a body streams through as it arrives) and HAProxy (HTTP mode, its
// defaults), each on loopback in front of a startline server whose handler
// records every request it is handed. Between each proxy and startline, a
// byte relay records what the proxy forwarded.
//
// For each case, on one client connection: the case's bytes, the honest
// second request, and a last request with Connection: close (so that every
// connection ends without a half-close, which a proxy may take as an abort);
// then the client reads until the connection closes. The check is agreement:
// the requests startline's handler was handed for that connection are exactly
// the requests the client got startline's answers to, in order. A request
// startline handled that the client got no answer for is a request the proxy
// did not know it sent: a smuggled one.
//
// The same corpus goes straight to startline (through the relay alone), where
// each case must also get its verdict: the strict reading's requests, then its
// error. Per case, the test records whether each proxy forwarded the framing
// as sent, rewrote it, or refused it itself (docs/reliability.md has the table).
//
// Server-side connection reuse is off in both proxies (nginx: no upstream
// keepalive; HAProxy: http-reuse never), so that every backend connection
// belongs to one client connection and closes with it: the test then knows
// when startline has handled all it will for that client.

import t from "tap";
import net from "node:net";
import type { Handler } from "../../src/http/connection/service.js";
import { listen, splitResponses, type RawResponse } from "../helpers/wire.js";
import { startNginx } from "../helpers/nginx.js";
import { startHaproxy } from "../helpers/haproxy.js";
import { startRelay, type Relay } from "../helpers/relay.js";
import { HANG_MS } from "../helpers/hang.js";
import { CASES, SECOND, type SmuggleCase } from "./smuggling-cases.js";

const LAST = "GET /last HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";

/** Targets the handler was handed, in order, since the last case began. */
const handled: string[] = [];
const recorder: Handler = (req) => {
  handled.push(req.target);
  return { status: 200, headers: { "Content-Type": "text/plain" }, body: `handled ${req.target}` };
};

/**
 * Send the case's bytes on one connection and read until the far end closes
 * (a hang fails the case). `halfClose` ends the client's sending after them:
 * for a case that declares a body longer than it sends (the 413 cases), a
 * proxy that streams the body waits for the rest, as does startline when the
 * proxy re-chunks it, and a client that says it has no more is how such an
 * upload ends.
 */
async function exchange(port: number, data: Buffer, halfClose: boolean, relay: Relay): Promise<Buffer> {
  const socket = net.connect(port, "127.0.0.1");
  const received: Buffer[] = [];
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  socket.on("error", () => {}); // a reset ends the exchange like a close; the responses read before it are what counts
  socket.on("data", (d: Buffer) => received.push(d));
  socket.write(data);
  if (halfClose) socket.end();
  try {
    await bounded(closed, "the connection closes");
  } catch (e) {
    socket.destroy();
    throw new Error(`${(e as Error).message}; the client got ${JSON.stringify(Buffer.concat(received).toString("latin1").slice(0, 1000))}; ${relay.open()} backend connections open, handled ${JSON.stringify(handled)}`);
  }
  return Buffer.concat(received);
}

async function bounded<T>(event: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`hang: ${HANG_MS / 1000} s on, this has not happened: ${what}`)), HANG_MS);
  });
  try {
    return await Promise.race([event, hung]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whole responses at the front of `bytes` (a cut-off last one is left out, and said). */
function responsesIn(bytes: Buffer): { responses: RawResponse[]; cut: boolean } {
  try {
    return { responses: splitResponses(bytes), cut: false };
  } catch {
    // Drop bytes from the end until the rest splits: what the client could read whole.
    for (let end = bytes.lastIndexOf("HTTP/1.", bytes.length - 1, "latin1"); end > 0; end = bytes.lastIndexOf("HTTP/1.", end - 1, "latin1")) {
      try {
        return { responses: splitResponses(bytes.subarray(0, end)), cut: true };
      } catch {
        // earlier still
      }
    }
    return { responses: [], cut: bytes.length > 0 };
  }
}

type Treatment = "as sent" | "rewritten" | "refused";

/**
 * How the proxy treated the case's request bytes, from what it forwarded:
 * "refused" when it forwarded nothing (it answered the client itself); "as
 * sent" when startline got every field line but the plain `Host: x`, and the
 * body, byte for byte; "rewritten" otherwise (the proxy normalised the
 * framing, or forwarded part and then refused).
 */
function treatment(c: SmuggleCase, forwarded: Buffer): Treatment {
  if (forwarded.length === 0) return "refused";
  const headEnd = c.first.indexOf("\r\n\r\n");
  const head = headEnd === -1 ? c.first : c.first.slice(0, headEnd);
  const body = headEnd === -1 ? "" : c.first.slice(headEnd + 4);
  const fieldLines = head.split("\r\n").slice(1).filter((l) => l !== "Host: x");
  const got = forwarded.toString("latin1");
  return fieldLines.every((l) => got.includes(`${l}\r\n`)) && got.includes(body) ? "as sent" : "rewritten";
}

/** What straight-to-startline must give: the strict reading's requests, LAST when the connection stays open, then the error. */
function verdict(c: SmuggleCase): { targets: string[]; statuses: number[] } {
  const targets = c.handled.map((s) => s.target);
  if (c.error === undefined && targets[targets.length - 1] === "/second") targets.push("/last");
  return { targets, statuses: [...targets.map(() => 200), ...(c.error ? [c.error.status] : [])] };
}

interface Front {
  readonly name: string;
  readonly port: number;
  readonly direct: boolean;
}

const table = new Map<string, Record<string, Treatment>>();

t.test("the smuggling corpus through nginx and HAProxy: startline handles exactly what the client is answered", async (t) => {
  const s = await listen(recorder);
  t.teardown(s.close);
  const relays: Relay[] = [];
  t.teardown(async () => {
    for (const r of relays) await r.close();
  });
  const relay = async () => {
    const r = await startRelay(s.port);
    relays.push(r);
    return r;
  };
  const directRelay = await relay();
  const nginxRelay = await relay();
  const haproxyRelay = await relay();
  const nginx = await startNginx(t, [nginxRelay.port], {
    replace: [
      ["proxy_http_version 1.1;", "proxy_http_version 1.1;\n      proxy_request_buffering off;"],
      // One backend connection per request, closed with it: no reuse across client connections.
      ["    keepalive 32;\n", ""],
      ["    keepalive_timeout 4s;\n", ""],
    ],
  });
  const haproxy = await startHaproxy(t, haproxyRelay.port, ["http-reuse never"]);
  const fronts: readonly (Front & { readonly relay: Relay })[] = [
    { name: "startline alone", port: directRelay.port, direct: true, relay: directRelay },
    { name: "nginx 1.22", port: nginx.port, direct: false, relay: nginxRelay },
    { name: "HAProxy 2.6", port: haproxy.port, direct: false, relay: haproxyRelay },
  ];
  t.ok(CASES.length >= 42, `${CASES.length} payloads`);
  for (const front of fronts) {
    let disagreements = 0;
    await t.test(front.name, async (t) => {
      for (const c of CASES) {
        await t.test(c.name, async (t) => {
          handled.length = 0;
          front.relay.take();
          const bytes = await exchange(front.port, Buffer.from(c.first + SECOND + LAST, "latin1"), c.error?.status === 413, front.relay);
          // Every backend connection this client connection caused has closed: startline has handled all it got.
          const connections = front.relay.take();
          await bounded(Promise.all(connections.map((k) => k.done)), "every backend connection closes");
          const forwarded = Buffer.concat(connections.flatMap((k) => k.sent));
          const { responses, cut } = responsesIn(bytes);
          const finals = responses.filter((r) => r.status >= 200);
          const answered = finals.filter((r) => r.body.startsWith("handled ")).map((r) => r.body.slice("handled ".length));
          const agree = t.same(handled, answered, "startline handled exactly the requests the client got its answers to", {
            client: bytes.toString("latin1").slice(0, 2000),
            forwarded: forwarded.toString("latin1").slice(0, 2000),
          });
          if (!agree) disagreements++;
          t.notOk(cut && front.direct, "startline's responses are whole");
          if (front.direct) {
            const expected = verdict(c);
            t.same(handled, expected.targets, "the strict reading's requests reach the handler");
            t.same(
              finals.map((r) => r.status),
              expected.statuses,
              "their answers, then the error",
            );
            if (c.error !== undefined) t.equal(finals[finals.length - 1] && JSON.parse(finals[finals.length - 1]!.body).code, c.error.code, "the parser's named error");
          } else {
            const row = table.get(c.name) ?? {};
            row[front.name] = treatment(c, forwarded);
            table.set(c.name, row);
          }
        });
      }
      t.comment(`${front.name}: ${disagreements} disagreements in ${CASES.length} payloads`);
    });
  }
  const counts: Record<string, Record<Treatment, number>> = {};
  for (const [name, row] of table) {
    t.comment(`${name}: ${Object.entries(row).map(([proxy, how]) => `${proxy} ${how}`).join("; ")}`);
    for (const [proxy, how] of Object.entries(row)) {
      counts[proxy] ??= { "as sent": 0, rewritten: 0, refused: 0 };
      counts[proxy]![how]++;
    }
  }
  for (const [proxy, c] of Object.entries(counts)) t.comment(`${proxy}: ${c["as sent"]} passed on as sent, ${c.rewritten} rewritten, ${c.refused} refused by the proxy (nothing forwarded)`);
});
