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

const YAML_OPTIONS = { noRefs: true, lineWidth: -1 } as const;

/** One item as an entry of the wrapper's sequence, as dump({wrapper: [...]}) writes it: indented two spaces. */
function yamlEntry(item: unknown): string {
  const lines = dumpYaml([item], YAML_OPTIONS).split("\n");
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
  for (;;) {
    const page = await source.page(through === undefined ? { after, limit } : { after, limit, through });
    let chars = 0;
    for (const item of page.items) {
      let text: string;
      if (yaml) text = (count === 0 ? `${wrapper}:\n` : "") + yamlEntry(item);
      else text = (count === 0 ? "" : ",") + JSON.stringify(item);
      count++;
      chars += text.length;
      piece += text;
      if (piece.length >= PIECE_CHARS) {
        yield piece;
        piece = "";
      }
    }
    if (page.items.length < limit || page.last === undefined) break;
    after = page.last;
    limit = nextBatch(chars, page.items.length);
  }
  if (yaml) piece += count === 0 ? `${wrapper}: []\n` : "";
  else piece += "]}";
  yield piece;
}
