// Each post's YAML as js-yaml wrote it, kept: a YAML list is the posts'
// entries joined (src/representation/yaml.ts, yamlEntry), so once a post's
// entry is made, a list that holds it costs the bytes, as the JSON list does.
//
// An entry is keyed by the tag of the post's JSON text (the SHA-256 of those
// bytes, made when the post was written, types.ts Representation): the YAML
// is made from that text and nothing else, so an entry found under a tag is
// the YAML of the post as it is now, in any process and after any write (a
// changed post has another tag). Nothing here needs the store's revision.

import { entryOfDocument, yamlEntry } from "../representation/yaml.js";
import { yamlDocumentOffLoop } from "../representation/yaml-thread.js";
import { postFromJson } from "../store/representation.js";
import type { Representation } from "../store/types.js";
import { Kept, stringBytes } from "./kept.js";

/**
 * A post's entry in a YAML list, from what is kept or made now (and then
 * kept): at once, or as a promise when js-yaml writes it on its own thread.
 */
export type YamlEntryOf = ((representation: Representation) => string | Promise<string>) & {
  /** The entry kept under `tag`, if one is: nothing is made. */
  readonly kept: (tag: string) => string | undefined;
};

/**
 * From this much JSON text, a post's YAML is written on js-yaml's own thread
 * (yaml-thread.ts) rather than on the event loop: js-yaml writes plain text
 * at some 20 to 50 MB/s but escaped control characters at 2 to 5, so 16 KiB
 * of JSON is at most a few milliseconds on the loop, and past it a post
 * could take tens of them. (A message to the thread costs about 50 µs, more
 * than js-yaml takes for a small post.)
 */
export const OFF_LOOP_CHARS = 16 * 1024;

/** The entries within `budget` bytes (0: none is kept, each is made when a list needs it). */
export function yamlEntries(budget: number): YamlEntryOf {
  const kept = new Kept<string>(budget);
  const keep = (tag: string, entry: string) => {
    kept.set(tag, entry, stringBytes(entry) + 64);
    return entry;
  };
  const entryOf = (representation: Representation) => {
    const found = kept.get(representation.tag);
    if (found !== undefined) return found;
    if (representation.json.length < OFF_LOOP_CHARS) return keep(representation.tag, yamlEntry(postFromJson(representation.json)));
    return yamlDocumentOffLoop(representation.json).then((document) => keep(representation.tag, entryOfDocument(document)));
  };
  return Object.assign(entryOf, { kept: (tag: string) => kept.get(tag) });
}
