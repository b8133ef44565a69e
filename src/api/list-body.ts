// A list's body, produced in pieces from keyset pages of the store, so that a
// list of any length costs one batch of memory and never holds the event
// loop for more than one piece (src/http/stream-body.ts sends the pieces,
// under back-pressure, as they are asked for).
//
// The bytes are exactly those of serializing the whole wrapper at once:
// JSON.stringify({posts: [...]}) for JSON, js-yaml's dump of it for YAML
// (each item is dumped as a one-entry sequence and indented under the
// wrapper's key, which is what dump does when it nests the sequence; the
// tests hold the two equal on tricky strings), so a client cannot tell a
// streamed list from one built whole.

import { setImmediate as nextTurn } from "node:timers/promises";
import { dump as dumpYaml } from "js-yaml";
import type { Page, PageQuery, Position } from "../store/types.js";
import type { Format } from "./negotiate.js";

/** Where the items come from: pages by position (a PagedCollection has this). */
export interface ListSource<T> {
  page(query: PageQuery): Promise<Page<T>>;
}

export interface ListBodyOptions {
  /** The wrapper's one key: "posts" in {"posts": [...]}. */
  readonly wrapper: string;
  readonly format: Format;
  /** Start after this position (the cursor of the request). */
  readonly after?: Position;
  /** Stop at this position (the end of a page, fixed before the head was sent). */
  readonly through?: Position;
}

/** About how much text one piece holds before it is handed on: a few milliseconds of YAML at most. */
export const PIECE_CHARS = 32 * 1024;
/** About how much text one batch from the store should make; batch sizes follow the items' sizes. */
export const BATCH_TARGET_CHARS = 128 * 1024;
/** The first batch is small, so the first byte goes out soon; later ones hold at most this many items. */
export const FIRST_BATCH = 32;
export const MAX_BATCH = 256;
/**
 * The longest the producer works before it gives the event loop a turn of its
 * own (besides the engine's, every 64 KiB sent): js-yaml writes about 5 to 15
 * MB/s, so 64 KiB of YAML could otherwise hold the loop for 10 ms or more.
 */
export const TURN_MS = 4;
/** About how much YAML one call of dump writes: one call per item costs twice as much for small items. */
const YAML_GROUP_CHARS = 8 * 1024;

const YAML_OPTIONS = { noRefs: true, lineWidth: -1 } as const;

/**
 * Items as entries of the wrapper's sequence, as dump({wrapper: [...]})
 * writes them: a top-level sequence's entries are written one after the
 * other, so dumping a few items at once gives the same text as dumping each,
 * and nesting under the key indents every line two spaces.
 */
function yamlEntries(items: readonly unknown[]): string {
  const lines = dumpYaml(items, YAML_OPTIONS).split("\n");
  // Only "\n" ends a line here (dump escapes the other line breaks); empty lines stay empty, as dump leaves them.
  for (let i = 0; i < lines.length; i++) if (lines[i] !== "") lines[i] = "  " + lines[i];
  return lines.join("\n");
}

/** The next batch's size, from the size of the last one's items. */
function nextBatch(chars: number, items: number): number {
  const average = Math.max(1, chars / Math.max(1, items));
  return Math.min(MAX_BATCH, Math.max(1, Math.floor(BATCH_TARGET_CHARS / average)));
}

/**
 * The wrapper and its items, in pieces of about PIECE_CHARS. Nothing is read
 * until the first piece is asked for (so HEAD, which never asks, reads
 * nothing); nothing is held between batches but a position, so a client that
 * leaves (the iterable is closed) releases nothing but this generator.
 */
export async function* listBody<T>(source: ListSource<T>, options: ListBodyOptions): AsyncGenerator<string, void, undefined> {
  const { wrapper, format } = options;
  const yaml = format === "yaml";
  const through = options.through;
  let after = options.after ?? 0;
  let limit = FIRST_BATCH;
  let count = 0;
  let piece = yaml ? "" : `{${JSON.stringify(wrapper)}:[`;
  let turnStarted = performance.now();
  let averageChars = 512;
  for (;;) {
    const page = await source.page(through === undefined ? { after, limit } : { after, limit, through });
    let chars = 0;
    const items = page.items;
    for (let i = 0; i < items.length; ) {
      let text: string;
      if (yaml) {
        const group = Math.max(1, Math.min(64, Math.floor(YAML_GROUP_CHARS / averageChars)));
        text = (count === 0 ? `${wrapper}:\n` : "") + yamlEntries(items.slice(i, i + group));
        const taken = Math.min(group, items.length - i);
        averageChars = Math.max(1, text.length / taken);
        i += taken;
        count += taken;
      } else {
        text = (count === 0 ? "" : ",") + JSON.stringify(items[i]);
        i++;
        count++;
      }
      chars += text.length;
      piece += text;
      if (piece.length >= PIECE_CHARS) {
        yield piece;
        piece = "";
      }
      if (performance.now() - turnStarted >= TURN_MS) {
        if (piece !== "") yield piece;
        piece = "";
        await nextTurn();
        turnStarted = performance.now();
      }
    }
    if (items.length < limit || page.last === undefined) break;
    after = page.last;
    limit = nextBatch(chars, items.length);
  }
  if (yaml) piece += count === 0 ? `${wrapper}: []\n` : "";
  else piece += "]}";
  yield piece;
}
