// The one YAML serializer configuration: every YAML body the server sends (a
// single resource, the OpenAPI document, a list streamed in pieces) is written
// here, by js-yaml, with the same options, so a list streamed a few items at a
// time is byte for byte the document dumped whole.

import { dump } from "js-yaml";

/** No anchors or aliases (a value repeated is written again), and no folding of long lines. */
const OPTIONS = { noRefs: true, lineWidth: -1 } as const;

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
