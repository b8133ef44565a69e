// The one YAML serializer configuration: every YAML body the server sends (a
// single resource, the OpenAPI document, a list streamed in pieces) is written
// here, by js-yaml, with the same options, so a list streamed a few items at a
// time is byte for byte the document dumped whole.

import { dump } from "js-yaml";

/** No anchors or aliases (a value repeated is written again), and no folding of long lines. */
export const OPTIONS = { noRefs: true, lineWidth: -1 } as const;

/** `value` as one YAML document. */
export function toYaml(value: unknown): string {
  return dump(value, OPTIONS);
}

/**
 * Some items of the sequence under `key` in the document {key: [...items]},
 * as that document holds them, written by js-yaml nested under the key: the
 * first group with the `key:` line, the later ones without it. A block
 * sequence's entries are written one after another, each independent of the
 * others, so the groups joined are the whole document's text.
 */
export function yamlSequencePart(key: string, items: readonly unknown[], first: boolean): string {
  const text = dump({ [key]: items }, OPTIONS);
  return first ? text : text.slice(text.indexOf("\n") + 1);
}

/** Every line but the first that holds something: where a sequence entry's continuation lines are indented. */
const LINE_WITH_TEXT = /\n(?=[^\n])/g;

/**
 * `value` as one entry of a block sequence nested under a mapping's key,
 * exactly as js-yaml writes it inside {key: [..., value, ...]}: its document
 * with "  - " before the first line and four spaces before every later line
 * that holds text (js-yaml indents no empty line, in a block scalar either).
 * With lineWidth -1 nothing js-yaml chooses for a mapping's values depends
 * on how deep the mapping sits, so the document written once at the top
 * level is the entry's text, indented; the tests hold the joined entries
 * equal to the whole document's, for posts of every awkward kind. This lets
 * a list keep each post's YAML as it keeps its JSON text, and make a list
 * by joining them (yamlSequenceStart, then the entries).
 */
export function yamlEntry(value: object): string {
  return entryOfDocument(dump(value, OPTIONS));
}

/** yamlEntry from the value's document as js-yaml wrote it with OPTIONS (on another thread, say: yaml-thread.ts). */
export function entryOfDocument(document: string): string {
  return "  - " + document.replace(LINE_WITH_TEXT, "\n    ");
}

/** The opening of the document {key: [...]} when entries (yamlEntry) follow it, or the whole document when there are none. */
export function yamlSequenceStart(key: string, empty: boolean): string {
  const none = dump({ [key]: [] }, OPTIONS);
  return empty ? none : none.replace(/ \[\]\n$/, "\n");
}
