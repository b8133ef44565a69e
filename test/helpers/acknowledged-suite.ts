// The checks of test/scaling/acknowledged-sqlite.test.ts (WORKERS=2 on one
// SQLite file, fast tier) and acknowledged-postgres.test.ts (two instances on
// one PostgreSQL database, external tier): nothing acknowledged is lost when
// several processes share one database.
// What one process acknowledged, any other serves, byte for byte under the
// same ETag (so a string that UTF-8 cannot hold is refused, never altered);
// and of writes racing on one record, none is lost.
//
// Each round opens two connections first and only then writes both requests,
// back to back, so the two handlers run at the same moment in different
// processes (the cluster hands consecutive connections to different workers;
// the PostgreSQL instances are two ports). No sleeps: a round is over when
// both responses are in. What a round reads and writes around its race (the
// tag to race with, the stored result) goes over one kept-alive connection
// per port: with a connection of its own each time, a third of the
// connections the cluster's primary handed over raced nothing. A race that
// is lost in any round fails the test. Forty rounds a check are plenty:
// before the store did check-and-write in one step, a third to nine tenths
// of the rounds lost one, and with the SQLite store's check made on a row
// read one event-loop turn before its write (a planted bug), each of the
// four races was lost in 11 to 16 rounds of 40 (51 changes of 160 in the
// merge patches), so forty rounds miss such a bug about once in 300,000
// runs, while a hundred cost WORKERS=2 2.5 s more of CPU.

import type { Test } from "tap";
import http from "node:http";
import net from "node:net";
import { once } from "node:events";
import type { ServerProcess } from "./process.js";
import { splitResponses, type RawResponse } from "./wire.js";

const ROUNDS = 40;
export const ADMIN = "races-admin-token-0123456789";
const MP = { "Content-Type": "application/merge-patch+json" };
const JSON_CT = { "Content-Type": "application/json" };
const AUTH = { Authorization: `Bearer ${ADMIN}` };

/** The raw bytes of one request, closing its connection after the answer. */
function request(method: string, target: string, headers: Readonly<Record<string, string>> = {}, body?: string): Buffer {
  const bytes = body === undefined ? Buffer.alloc(0) : Buffer.from(body, "utf8");
  let head = `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n`;
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  if (body !== undefined) head += `Content-Length: ${bytes.length}\r\n`;
  return Buffer.concat([Buffer.from(`${head}\r\n`, "latin1"), bytes]);
}

/** Opens one connection per request, and once all are open writes every request; the responses in order. */
async function together(requests: readonly (readonly [port: number, bytes: Buffer])[]): Promise<RawResponse[]> {
  const sockets = await Promise.all(
    requests.map(async ([port]) => {
      const socket = net.connect(port, "127.0.0.1");
      await once(socket, "connect");
      return socket;
    }),
  );
  const answers = sockets.map(async (socket) => {
    const chunks: Buffer[] = [];
    socket.on("data", (d: Buffer) => chunks.push(d));
    await once(socket, "close");
    const [response] = splitResponses(Buffer.concat(chunks));
    if (response === undefined) throw new Error("the connection closed without a response");
    return response;
  });
  sockets.forEach((socket, i) => socket.end(requests[i]![1]));
  return Promise.all(answers);
}

async function one(port: number, bytes: Buffer): Promise<RawResponse> {
  return (await together([[port, bytes]]))[0]!;
}

interface Answer {
  readonly status: number;
  readonly etag: string | undefined;
  readonly body: string;
}

/**
 * Requests one at a time over one kept-alive connection per port, for the length of test `t`. Under
 * WORKERS that is one worker throughout: a race's winner is read back by its own worker in some rounds,
 * by the other in the rest.
 */
function keptAlive(t: Test): (port: number, method: string, target: string, headers?: Readonly<Record<string, string>>, body?: string) => Promise<Answer> {
  const agents = new Map<number, http.Agent>();
  t.teardown(() => {
    for (const agent of agents.values()) agent.destroy();
  });
  return (port, method, target, headers = {}, body) => {
    let agent = agents.get(port);
    if (agent === undefined) agents.set(port, (agent = new http.Agent({ keepAlive: true, maxSockets: 1 })));
    return new Promise((resolve, reject) => {
      const sent = http.request({ host: "127.0.0.1", port, method, path: target, headers, agent }, (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => resolve({ status: response.statusCode!, etag: response.headers.etag, body: Buffer.concat(chunks).toString("utf8") }));
        response.on("error", reject);
      });
      sent.on("error", reject);
      sent.end(body);
    });
  };
}

/** Two ports to send the two sides of a race to (the same port twice under WORKERS). */
export interface Deployment {
  readonly ports: readonly [number, number];
}

export function stopAtEnd(t: Test, server: ServerProcess): ServerProcess {
  t.teardown(async () => {
    if (server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill("SIGTERM");
      await server.exited();
    }
  });
  return server;
}

export const portOf = async (server: ServerProcess) => Number(new URL(await server.url()).port);

/** `n` requests at once, made by `make(i)`, sent alternately to the two ports. */
function contend({ ports }: Deployment, n: number, make: (i: number) => Buffer): Promise<RawResponse[]> {
  return together(Array.from({ length: n }, (_, i) => [ports[i % 2]!, make(i)] as const));
}

const CONTENDERS = 4;
const statusesOf = (responses: readonly RawResponse[]) => responses.map((r) => r.status).join(" ");

export async function races(t: Test, deployment: Deployment): Promise<void> {
  const [a, b] = deployment.ports;
  const kept = keptAlive(t);

  await t.test(`${CONTENDERS} PATCHes with one If-Match: exactly one 200, the others 412, and the stored post is the winner's`, async (t) => {
    t.equal((await kept(a, "POST", "/api/v1/post/if-match", JSON_CT, '{"title": "start", "body": "b"}')).status, 201);
    const wrong: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const etag = (await kept(a, "GET", "/api/v1/post/if-match")).etag!;
      const responses = await contend(deployment, CONTENDERS, (i) =>
        request("PATCH", "/api/v1/post/if-match", { ...MP, "If-Match": etag }, JSON.stringify({ title: `round ${round}, contender ${i}` })),
      );
      const winners = responses.filter((r) => r.status === 200);
      if (winners.length !== 1 || responses.some((r) => r.status !== 200 && r.status !== 412)) {
        wrong.push(`round ${round}: ${statusesOf(responses)}`);
        continue;
      }
      const stored = await kept(b, "GET", "/api/v1/post/if-match");
      if (stored.body !== winners[0]!.body || stored.etag !== winners[0]!.headers.etag) wrong.push(`round ${round}: the stored post is not the winner's`);
    }
    t.strictSame(wrong, [], `rounds with other than one winner, of ${ROUNDS}`);
  });

  await t.test(`${CONTENDERS} merge patches to different fields at once: every change is kept`, async (t) => {
    t.equal((await kept(a, "POST", "/api/v1/post/merge", JSON_CT, '{"title": "t", "body": "b", "author": "a", "tags": []}')).status, 201);
    const lost: string[] = [];
    const fields = ["title", "body", "author", "tags"] as const;
    const valueOf = (field: string, round: number) => (field === "tags" ? [`tag ${round}`] : `${field} ${round}`);
    for (let round = 0; round < ROUNDS; round++) {
      const responses = await contend(deployment, fields.length, (i) =>
        request("PATCH", "/api/v1/post/merge", MP, JSON.stringify({ [fields[i]!]: valueOf(fields[i]!, round) })),
      );
      if (responses.some((r) => r.status !== 200)) lost.push(`round ${round}: ${statusesOf(responses)}`);
      const stored = JSON.parse((await kept(a, "GET", "/api/v1/post/merge")).body) as Record<string, unknown>;
      for (const field of fields) if (JSON.stringify(stored[field]) !== JSON.stringify(valueOf(field, round))) lost.push(`round ${round}: ${field}`);
    }
    t.strictSame(lost, [], `acknowledged changes that were lost, of ${fields.length * ROUNDS}`);
  });

  await t.test(`${CONTENDERS} UPDATEs of an article with one If-Match: exactly one 200, the others 412`, async (t) => {
    const wrong: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const etag = (await kept(a, "GET", "/api/v1/artigo/2")).etag!;
      const responses = await contend(deployment, CONTENDERS, (i) =>
        request("UPDATE", "/api/v1/artigo/2", { ...MP, ...AUTH, "If-Match": etag }, JSON.stringify({ title: `round ${round}, contender ${i}` })),
      );
      const winners = responses.filter((r) => r.status === 200);
      if (winners.length !== 1 || responses.some((r) => r.status !== 200 && r.status !== 412)) {
        wrong.push(`round ${round}: ${statusesOf(responses)}`);
        continue;
      }
      const stored = await kept(b, "GET", "/api/v1/artigo/2");
      if (stored.body !== winners[0]!.body) wrong.push(`round ${round}: the stored article is not the winner's`);
    }
    t.strictSame(wrong, [], `rounds with other than one winner, of ${ROUNDS}`);
  });

  await t.test("DELETEs and PATCHes with one If-Match: exactly one of them wins", async (t) => {
    const wrong: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const target = `/api/v1/post/del-${round}`;
      if ((await kept(a, "POST", target, JSON_CT, '{"title": "t", "body": "b"}')).status !== 201) wrong.push(`round ${round}: not published`);
      const etag = (await kept(a, "GET", target)).etag!;
      // DELETE, PATCH, DELETE, PATCH: each kind goes to both ports.
      const responses = await contend(deployment, CONTENDERS, (i) =>
        i % 2 === 0 ? request("DELETE", target, { "If-Match": etag }) : request("PATCH", target, { ...MP, "If-Match": etag }, JSON.stringify({ title: `patch ${i}` })),
      );
      const deletes = responses.filter((_, i) => i % 2 === 0);
      const patches = responses.filter((_, i) => i % 2 === 1);
      const after = await kept(b, "GET", target);
      const won = responses.filter((r) => r.status === 200).length;
      if (won !== 1) wrong.push(`round ${round}: ${won} winners (${statusesOf(responses)})`);
      else if (deletes.some((r) => r.status === 200)) {
        // Gone: the other requests find nothing (404), or were refused before (412).
        if (after.status !== 404) wrong.push(`round ${round}: deleted, yet still served`);
      } else {
        const patched = patches.find((r) => r.status === 200)!;
        if (after.body !== patched.body) wrong.push(`round ${round}: the stored post is not the winning PATCH's`);
        if (deletes.some((r) => r.status !== 412)) wrong.push(`round ${round}: a DELETE with a stale tag got ${statusesOf(deletes)}`);
      }
    }
    t.strictSame(wrong, [], `rounds with other than one winner, of ${ROUNDS}`);
  });
}

export async function storedAsSent(t: Test, { ports: [a, b] }: Deployment): Promise<void> {
  await t.test("a lone surrogate is refused with 422 naming the field; a pair is served back as acknowledged", async (t) => {
    const lone = await one(a, request("POST", "/api/v1/post/text", JSON_CT, '{"title": "x\\udfffy", "body": "b"}'));
    t.equal(lone.status, 422);
    t.match(JSON.parse(lone.body).detail, /^"title" holds a lone surrogate/);
    t.equal((await one(b, request("GET", "/api/v1/post/text"))).status, 404, "nothing was stored");
    const article = await one(a, request("UPDATE", "/api/v1/artigo/3", { ...MP, ...AUTH }, '{"author": "\\ud800"}'));
    t.equal(article.status, 422);
    t.match(JSON.parse(article.body).detail, /^"author" holds a lone surrogate/);

    t.equal((await one(a, request("POST", "/api/v1/post/text", JSON_CT, '{"title": "\\ud83d\\ude80", "body": "b", "tags": ["\\ud834\\udd1e"]}'))).status, 201);
    const patched = await one(a, request("PATCH", "/api/v1/post/text", MP, '{"body": "escaped \\ud83d\\ude80, raw 🚀"}'));
    t.equal(patched.status, 200);
    const served = await one(b, request("GET", "/api/v1/post/text"));
    t.equal(served.body, patched.body, "another process serves what was acknowledged");
    t.equal(served.headers.etag, patched.headers.etag, "under the ETag it was acknowledged with");
    const conditional = await one(b, request("PATCH", "/api/v1/post/text", { ...MP, "If-Match": patched.headers.etag! }, '{"title": "next"}'));
    t.equal(conditional.status, 200, "so the acknowledged ETag works as If-Match");
  });
}
