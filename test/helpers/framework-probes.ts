// What the framework tests (test/node/express, koa, fastify) ask of each
// app on startline/node in the same way: a file to stream out, and the
// probes over real sockets that do not depend on the framework (a file read
// back whole, keep-alive then pipelining in order, a client that leaves
// mid-response). Each file keeps what is its framework's own.

import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Test } from "tap";
import { readUntil, splitResponses, talk } from "./wire.js";

/** A file holding `bytes`, in a directory of its own removed when `t` ends. */
export async function fileToServe(t: Test, name: string, bytes: Buffer): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), `startline-${name}-`));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, "big.txt");
  await writeFile(file, bytes);
  return file;
}

/** What an app's slow route records when its client leaves: the events, and `left()` to call from the response's 'close'. */
export interface Leaving {
  readonly events: string[];
  readonly left: () => void;
  readonly clientLeft: Promise<void>;
}

export function leaving(): Leaving {
  let left!: () => void;
  const clientLeft = new Promise<void>((resolve) => (left = resolve));
  return { events: [], left, clientLeft };
}

/** GET /file comes back chunked, byte for byte the file. */
export async function fileStreamedOut(t: Test, port: number, fileBytes: Buffer): Promise<void> {
  const [r] = splitResponses(await talk(port, ["GET /file HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"]));
  t.equal(r!.headers["transfer-encoding"], "chunked");
  t.equal(r!.body.length, fileBytes.length);
  t.ok(Buffer.from(r!.body).equals(fileBytes));
}

/** One request on a kept-alive connection, then two written at once: their answers in the order asked. `hello(name)` is the app's target that answers {"hello": name}. */
export async function pipelinedInOrder(t: Test, port: number, hello: (name: string) => string): Promise<void> {
  const socket = net.connect(port, "127.0.0.1");
  await once(socket, "connect");
  socket.write(`GET ${hello("one")} HTTP/1.1\r\nHost: a\r\n\r\n`);
  await readUntil(socket, '"hello":"one"');
  socket.write(`GET ${hello("two")} HTTP/1.1\r\nHost: a\r\n\r\nGET ${hello("three")} HTTP/1.1\r\nHost: a\r\n\r\n`);
  const both = await readUntil(socket, '"hello":"three"');
  t.ok(both.indexOf('"hello":"two"') < both.indexOf('"hello":"three"'), "in the order asked, on the same connection");
  socket.destroy();
}

/** A client that resets the connection once GET /slow has written its first part: 'close' on the request and on the unfinished response. */
export async function leavesMidResponse(t: Test, port: number, watch: Leaving): Promise<void> {
  const socket = net.connect(port, "127.0.0.1");
  await once(socket, "connect");
  socket.write("GET /slow HTTP/1.1\r\nHost: a\r\n\r\n");
  await readUntil(socket, "part");
  socket.resetAndDestroy();
  await watch.clientLeft;
  t.same(watch.events.sort(), ["req close", "res close, finished false"]);
}
