// A list's body, produced in pieces from keyset pages of the store, so that a
// list of any length costs one batch of memory and never holds the event
// loop for more than one piece (src/http/connection/send-body.ts sends the pieces,
// under back-pressure, as they are asked for).
//
// The bytes are exactly those of serializing the whole wrapper at once:
// JSON.stringify({posts: [...]}) for JSON, js-yaml's dump of it for YAML
// (a few items at a time are serialized as an array of their own, whose
// members or entries are what the whole array would hold: in YAML written
// by js-yaml nested under the wrapper's key, src/representation/yaml.ts; the
// tests hold the two equal for arbitrary values), so a client cannot tell
// a streamed list from one built whole. A YAML list of posts is joined from
// each post's entry as the store keeps it instead (yamlListBody,
// src/store/yaml-entry.ts), the same bytes; listBody still writes the facts'
// YAML.

import { setImmediate as nextTurn } from "node:timers/promises";
import { yamlSequencePart, yamlSequenceStart } from "../representation/yaml.js";
import type { JsonPage, Page, PageQuery, Position, YamlPage } from "../store/types.js";
import { joinedEntries, type YamlListSource } from "./yaml-entries.js";
import type { Format } from "../representation/negotiate.js";

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
/**
 * One batch from the store: at most MAX_BATCH items, and no more once their
 * text reaches BATCH_CHARS (the store stops after the item that crosses it),
 * so a batch is about 128 KiB of text whatever the items' sizes. The first
 * is smaller, so that the first byte goes out soon.
 */
export const BATCH_CHARS = 128 * 1024;
export const MAX_BATCH = 256;
export const FIRST_BATCH = 32;
export const FIRST_BATCH_CHARS = 32 * 1024;
/**
 * The longest the producer works before it gives the event loop a turn of its
 * own (besides the engine's, every 64 KiB sent): js-yaml writes about 5 to 15
 * MB/s, so 64 KiB of YAML could otherwise hold the loop for 10 ms or more.
 */
export const TURN_MS = 4;
/**
 * About how much text one call of the serializer writes. Items are
 * serialized a few at a time: one call per small item costs about half as
 * much again in JSON, and twice as much in YAML, as one call for many.
 */
const GROUP_CHARS: Readonly<Record<Format, number>> = { json: 16 * 1024, yaml: 8 * 1024 };
const MAX_GROUP = 64;

/** Items as members of the wrapper's array: JSON.stringify of an array is its members' joined by ",", in brackets. */
function jsonMembers(items: readonly unknown[]): string {
  return JSON.stringify(items).slice(1, -1);
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
  let batch = { limit: FIRST_BATCH, maxChars: FIRST_BATCH_CHARS };
  let count = 0;
  let piece = yaml ? "" : `{${JSON.stringify(wrapper)}:[`;
  let turnStarted = performance.now();
  let averageChars = 512;
  for (;;) {
    const page = await source.page(through === undefined ? { after, ...batch } : { after, ...batch, through });
    const items = page.items;
    // An empty batch is the end: a shorter one may only have reached maxChars.
    if (page.last === undefined) break;
    for (let i = 0; i < items.length; ) {
      const group = items.slice(i, i + Math.max(1, Math.min(MAX_GROUP, Math.floor(GROUP_CHARS[format] / averageChars))));
      let text = yaml ? yamlSequencePart(wrapper, group, count === 0) : jsonMembers(group);
      if (!yaml && count > 0) text = "," + text;
      averageChars = Math.max(1, text.length / group.length);
      i += group.length;
      count += group.length;
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
    after = page.last;
    batch = { limit: MAX_BATCH, maxChars: BATCH_CHARS };
  }
  if (yaml) piece += count === 0 ? yamlSequencePart(wrapper, [], true) : "";
  else piece += "]}";
  yield piece;
}

/** Where a JSON list's items come from: pages of JSON text (a PagedCollection has this). */
export interface JsonListSource {
  pageJson(query: PageQuery): Promise<JsonPage>;
}

/** The batch a JSON list reads at a time. */
export const JSON_BATCH = { limit: MAX_BATCH, maxChars: BATCH_CHARS } as const;

/**
 * The first batch of a whole JSON list: read by the handler itself, before
 * the list's body is paced by the engine's turns (send-body.ts), so it is
 * kept small. Fifty clients asking at once for a list of 30 KB posts each
 * made the handler read a full batch (about 2 ms) in the same turn of the
 * loop, and a status request waited 100 to 300 ms behind them. A page keeps
 * JSON_BATCH for its first read: a page that fits one batch is answered
 * whole from it, and a page's limit bounds it anyway.
 */
export const FIRST_JSON_BATCH = { limit: FIRST_BATCH, maxChars: FIRST_BATCH_CHARS } as const;

/**
 * The batch after `page`: still at most BATCH_CHARS, and as many items as
 * the ones just read say fit in it. Asking for about what fits lets the
 * store read the batch in one pass (a batch that overflows its maxChars is
 * cut with a second, costlier one, see the SQLite store); the maxChars
 * bound, and so the memory a list holds, stays the same.
 */
export function nextJsonBatch(page: { readonly members: Uint8Array | string; readonly count: number }): { readonly limit: number; readonly maxChars: number } {
  if (page.count === 0) return JSON_BATCH;
  const perItem = byteLength(page.members) / page.count;
  return { limit: Math.max(1, Math.min(MAX_BATCH, Math.floor(BATCH_CHARS / perItem))), maxChars: BATCH_CHARS };
}

/**
 * A JSON list whose first batch is already read (the handler needed it for
 * the head): that batch, then the following ones, each as one piece of
 * bytes, until a batch says nothing more follows (no empty batch is read to
 * learn it). The items are the store's JSON text in UTF-8, joined as
 * JSON.stringify joins the members of an array; nothing is parsed,
 * serialized or encoded here. Every piece is written into the same buffer
 * (PieceBuffer): a piece is taken before the next is asked for
 * (src/http/message/stream-body.ts). Between batches only that buffer and
 * where the next batch starts are held: a batch's bytes are let go as soon
 * as they are copied into it (a page kept in a generator's frame would hold
 * a second and third batch per client, and a client that stops reading
 * holds its generator).
 */
export function jsonListBody(source: JsonListSource, first: JsonPage, options: { readonly wrapper: string; readonly through?: Position }): AsyncGenerator<Uint8Array, void, undefined> {
  const pieces = new PieceBuffer();
  pieces.add(Buffer.from(`{${JSON.stringify(options.wrapper)}:[`));
  pieces.add(first.members);
  return laterBatches(source, pieces, readAfter(first, first.count), options.through);
}

/**
 * The buffer a list's pieces are written into, one per list and reused for
 * every piece. Why: a list sent to 50 clients that stop reading passes some
 * 4 MB per client through the process before the kernel's buffers are full
 * (docs/reliability.md), and a new buffer per batch was as much garbage
 * again for V8 to find. It grows when a batch needs more: about BATCH_CHARS
 * and one item.
 */
export class PieceBuffer {
  private buffer = Buffer.allocUnsafeSlow(0);
  private used = 0;

  /** The piece written so far: a view of the buffer, valid until the next start(). */
  get piece(): Buffer {
    return this.buffer.subarray(0, this.used);
  }

  /** The next piece starts empty, over the last one's bytes. */
  start(): void {
    this.used = 0;
  }

  /** Appends text (as UTF-8) or bytes. */
  add(text: Uint8Array | string): void {
    const need = this.used + byteLength(text);
    if (need > this.buffer.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(need, this.buffer.length + (this.buffer.length >> 1)));
      this.buffer.copy(grown, 0, 0, this.used);
      this.buffer = grown;
    }
    if (typeof text === "string") this.buffer.write(text, this.used);
    else this.buffer.set(text, this.used);
    this.used = need;
  }
}

/** What is kept of the batches read so far: where the next starts, how large to ask for it, how many items came. */
interface ReadSoFar {
  readonly more: boolean;
  readonly last: Position | undefined;
  readonly next: { readonly limit: number; readonly maxChars: number };
  readonly count: number;
}

function readAfter(page: JsonPage, count: number): ReadSoFar {
  return { more: page.more, last: page.last, next: nextJsonBatch(page), count };
}

/** The next batch written into `pieces` as its piece (its members after a comma when items came before), and what is kept of it. */
async function nextPiece(source: JsonListSource, pieces: PieceBuffer, read: ReadSoFar, after: Position, through: Position | undefined): Promise<ReadSoFar> {
  // As text: V8 collects a string with its young generation, a store's Buffer only once it counts tens of MiB of them (PageQuery.text).
  const page = await source.pageJson(through === undefined ? { after, ...read.next, text: true } : { after, ...read.next, through, text: true });
  pieces.start();
  if (read.count > 0 && page.count > 0) pieces.add(COMMA);
  pieces.add(page.members);
  return readAfter(page, read.count + page.count);
}

// `read` is reassigned in place: a generator's frame keeps its parameters, and a copy kept there would hold a batch for the whole list.
async function* laterBatches(source: JsonListSource, pieces: PieceBuffer, read: ReadSoFar, through: Position | undefined): AsyncGenerator<Uint8Array, void, undefined> {
  while (read.more && read.last !== undefined) {
    yield pieces.piece;
    read = await nextPiece(source, pieces, read, read.last, through);
  }
  pieces.add(LIST_END);
  yield pieces.piece;
}

const COMMA = Buffer.from(",");
const LIST_END = Buffer.from("]}");

/** The opening of a YAML list under `wrapper` before its entries (yamlSequenceStart), written by js-yaml once per wrapper. */
const yamlStarts = new Map<string, Buffer>();
function yamlStart(wrapper: string): Buffer {
  let start = yamlStarts.get(wrapper);
  if (start === undefined) yamlStarts.set(wrapper, (start = Buffer.from(yamlSequenceStart(wrapper, false))));
  return start;
}

/**
 * A YAML list of posts joined from their stored entries (the store's
 * YamlPage, src/api/yaml-entries.ts): the wrapper's key line, then each
 * batch's entries as the store joined them, each batch one piece written
 * into the list's PieceBuffer, under back-pressure like the JSON list
 * (jsonListBody), holding between batches only that buffer and where the
 * next batch starts. The bytes are js-yaml's dump of the whole wrapper (the
 * tests hold them equal). A batch with posts whose entry is not stored yet
 * has them made as it is written (joinedEntries), giving the event loop a
 * turn whenever it has worked TURN_MS. Nothing is read until the first
 * piece is asked for (HEAD reads nothing).
 */
export async function* yamlListBody(source: YamlListSource, options: { readonly wrapper: string; readonly after?: Position; readonly through?: Position }): AsyncGenerator<Uint8Array, void, undefined> {
  const pieces = new PieceBuffer();
  let read: ReadSoFar = { more: true, last: options.after ?? 0, next: { limit: FIRST_BATCH, maxChars: FIRST_BATCH_CHARS }, count: 0 };
  for (;;) {
    read = await nextYamlPiece(source, pieces, read, options.wrapper, options.through);
    if (!read.more || read.last === undefined) break;
    yield pieces.piece;
  }
  yield pieces.piece;
}

/**
 * A page of posts as YAML, whole, from one read of their entries (the
 * revision in the same snapshot): the stored entries joined, as the JSON
 * page is the stored texts joined. Undefined when the page does not fit in
 * one batch (BATCH_CHARS of JSON): then it is streamed (yamlListBody).
 */
export async function yamlPageWhole(
  source: YamlListSource,
  wrapper: string,
  query: { readonly after?: Position; readonly limit: number },
): Promise<{ readonly body: Buffer | string; readonly page: Omit<YamlPage, "entries" | "items"> } | undefined> {
  const page = await source.pageYaml({ ...(query.after === undefined ? {} : { after: query.after }), limit: query.limit, maxChars: BATCH_CHARS });
  if (page.count < query.limit && page.more) return undefined;
  const { entries: _entries, items: _items, ...end } = page;
  if (page.count === 0) return { body: yamlSequenceStart(wrapper, true), page: end };
  const entries = await joinedEntries(page, source, TURN_MS, nextTurn);
  return { body: typeof entries === "string" ? yamlStart(wrapper).toString() + entries : Buffer.concat([yamlStart(wrapper), entries]), page: end };
}

/** The next batch's entries written into `pieces` as its piece (after the key line when it is the first), and what is kept of it. */
async function nextYamlPiece(source: YamlListSource, pieces: PieceBuffer, read: ReadSoFar, wrapper: string, through: Position | undefined): Promise<ReadSoFar> {
  const after = read.last ?? 0;
  // As text after the first batch, as the JSON list reads it (PageQuery.text).
  const text = read.count > 0;
  const page = await source.pageYaml(through === undefined ? { after, ...read.next, text } : { after, ...read.next, through, text });
  const entries = await joinedEntries(page, source, TURN_MS, nextTurn);
  pieces.start();
  if (read.count === 0) pieces.add(page.count === 0 ? yamlSequenceStart(wrapper, true) : yamlStart(wrapper));
  pieces.add(entries);
  // A post's YAML is about its JSON's size: as many posts as the ones just read say fit in BATCH_CHARS.
  return { more: page.more, last: page.last, next: nextJsonBatch({ members: entries, count: page.count }), count: read.count + page.count };
}

/** A JSON list held whole: the wrapper around members that are already JSON text. */
export function jsonList(wrapper: string, members: Uint8Array | string): Buffer {
  const head = `{${JSON.stringify(wrapper)}:[`;
  return typeof members === "string" ? Buffer.from(head + members + "]}") : Buffer.concat([Buffer.from(head), members, LIST_END]);
}

const byteLength = (text: Uint8Array | string) => (typeof text === "string" ? Buffer.byteLength(text) : text.length);
