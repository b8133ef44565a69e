// Each post's YAML as js-yaml wrote it, kept: a YAML list is the posts'
// entries joined (src/representation/yaml.ts, yamlEntry), so once a post's
// entry is made, a list that holds it costs the bytes, as the JSON list does.
//
// An entry is keyed by the tag of the post's JSON text (the SHA-256 of those
// bytes, made when the post was written, types.ts Representation): the YAML
// is made from that text and nothing else, so an entry found under a tag is
// the YAML of the post as it is now, in any process and after any write (a
// changed post has another tag). Nothing here needs the store's revision.

import { yamlEntry } from "../representation/yaml.js";
import { postFromJson } from "../store/representation.js";
import type { Representation } from "../store/types.js";
import { Kept, stringBytes } from "./kept.js";

/** A post's entry in a YAML list, from what is kept or made now (and then kept). */
export type YamlEntryOf = (representation: Representation) => string;

/** The entries within `budget` bytes (0: none is kept, each is made when a list needs it). */
export function yamlEntries(budget: number): YamlEntryOf {
  const kept = new Kept<string>(budget);
  return (representation) => {
    const found = kept.get(representation.tag);
    if (found !== undefined) return found;
    const entry = yamlEntry(postFromJson(representation.json));
    kept.set(representation.tag, entry, stringBytes(entry) + 64);
    return entry;
  };
}
