// A full list holds about one batch, however long the collection: with a
// client that takes the bytes slowly, the store is never read far ahead of
// what the connection has taken. Counted in items, not measured in time or
// bytes of heap, so the result does not depend on the machine.

import t from "tap";
import { Duplex } from "node:stream";
import { load } from "js-yaml";
import { createApp } from "../../src/app.js";
import { MAX_BATCH } from "../../src/api/list-body.js";
import { Connection } from "../../src/http/connection/connection.js";
import { DEFAULT_CONNECTION_OPTIONS } from "../../src/http/connection/options.js";
import { DEFAULT_LIMITS } from "../../src/http/parse/parser.js";
import { makePost } from "../../src/store/records.js";
import { createMemoryStore } from "../../src/store/memory.js";
import { representationOf } from "../../src/store/representation.js";
import type { Post } from "../../src/store/types.js";
import { yamlEntry } from "../../src/representation/yaml.js";
import { dechunk } from "../helpers/wire.js";

// Ten times what the bound allows ahead (2 * MAX_BATCH): a list read ahead of its client shows at once.
const ITEMS = 5_000;

const postAt = (position: number): Post =>
  makePost(`post-${position}`, { title: `Post ${position}`, body: `The body of post ${position}: `.padEnd(250, "x") }, "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z");

/** An app whose posts are made only when a page of them is read, counting how many were made. */
function lazyApp() {
  const store = createMemoryStore();
  const made = { count: 0 };
  store.posts.page = async ({ after = 0, limit, through = ITEMS }) => {
    const items: Post[] = [];
    for (let p = after + 1; p <= Math.min(ITEMS, through) && items.length < limit; p++) items.push(postAt(p));
    made.count += items.length;
    return items.length === 0 ? { items } : { items, last: after + items.length };
  };
  store.posts.revision = async () => ({ epoch: "0123456789abcdef", n: ITEMS });
  store.posts.pageJson = async ({ after = 0, limit, through = ITEMS, maxChars = Infinity }) => {
    const texts: string[] = [];
    let chars = 0;
    for (let p = after + 1; p <= Math.min(ITEMS, through) && texts.length < limit && chars < maxChars; p++) {
      texts.push(JSON.stringify(postAt(p)));
      chars += texts.at(-1)!.length;
    }
    made.count += texts.length;
    const last = after + texts.length;
    const revision = { epoch: "0123456789abcdef", n: ITEMS };
    return texts.length === 0
      ? { members: Buffer.alloc(0), count: 0, more: false, revision }
      : { members: Buffer.from(texts.join(",")), count: texts.length, last, more: last < Math.min(ITEMS, through), revision };
  };
  // A YAML list reads the posts' stored YAML entries, joined, as the JSON list reads their texts.
  store.posts.pageYaml = async ({ after = 0, limit, through = ITEMS, maxChars = Infinity }) => {
    const entries: string[] = [];
    let chars = 0;
    for (let p = after + 1; p <= Math.min(ITEMS, through) && entries.length < limit && chars < maxChars; p++) {
      const post = postAt(p);
      entries.push(yamlEntry(post));
      chars += representationOf(post).json.length;
    }
    made.count += entries.length;
    const last = after + entries.length;
    const revision = { epoch: "0123456789abcdef", n: ITEMS };
    return entries.length === 0
      ? { entries: "", count: 0, more: false, revision }
      : { entries: entries.join(""), count: entries.length, last, more: last < Math.min(ITEMS, through), revision };
  };
  return { app: createApp({ store }), made };
}

/**
 * Runs one request on a connection whose client takes one write per turn of
 * the event loop, with a socket-sized buffer (16 KiB) in between: after each
 * write, how many items the store had made and how many had reached the
 * client. Resolves with everything written once the server ends the connection.
 */
function slowClient(app: ReturnType<typeof lazyApp>, request: string, marker: string): Promise<{ output: Buffer; mostAhead: number; delivered: number }> {
  return new Promise((resolve) => {
    const written: Buffer[] = [];
    let delivered = 0;
    let tail = "";
    let mostAhead = 0;
    const wire = new Duplex({
      allowHalfOpen: true,
      writableHighWaterMark: 16 * 1024,
      read() {},
      write(chunk: Buffer, _encoding, callback) {
        // A copy, as a kernel takes one: once the write is acknowledged, its producer may reuse the bytes.
        written.push(Buffer.from(chunk));
        // Items whose start has reached the client (a marker split across two writes is counted once).
        const text = tail + chunk.toString("latin1");
        delivered += text.split(marker).length - 1;
        tail = text.slice(-(marker.length - 1));
        mostAhead = Math.max(mostAhead, app.made.count - delivered);
        setImmediate(callback); // taken on a later turn: the client is slow
      },
      final(callback) {
        callback();
        resolve({ output: Buffer.concat(written), mostAhead, delivered });
      },
    });
    new Connection(wire, app.app.handle, { ...DEFAULT_CONNECTION_OPTIONS, limits: DEFAULT_LIMITS }, { onExchange: () => {}, onHandlerError: () => {}, onClose: () => {} });
    wire.push(request);
  });
}

for (const [format, marker] of [
  ["json", '{"id":"'],
  ["yaml", "\n  - id: "],
] as const) {
  t.test(`a full ${format} list of ${ITEMS} posts is read from the store about one batch ahead of the client`, async (t) => {
    const app = lazyApp();
    const { output, mostAhead, delivered } = await slowClient(app, `GET /api/v1/posts HTTP/1.1\r\nHost: x\r\nAccept: application/${format}\r\nConnection: close\r\n\r\n`, marker);
    t.equal(app.made.count, ITEMS, "every post was read, once");
    t.equal(delivered, ITEMS, "and reached the client");
    // One batch, the piece being filled and the 16 KiB the transport buffers: a few hundred posts, never thousands.
    t.ok(mostAhead <= 2 * MAX_BATCH, `at most ${mostAhead} posts read ahead of the client (bound ${2 * MAX_BATCH}, of ${ITEMS})`);
    const head = output.indexOf("\r\n\r\n");
    const body = dechunk(output, head + 4).content.toString("utf8");
    const value = (format === "json" ? JSON.parse(body) : load(body)) as { posts: Post[] };
    t.equal(value.posts.length, ITEMS);
    t.strictSame(value.posts[ITEMS - 1], postAt(ITEMS), "the document is whole");
  });
}
