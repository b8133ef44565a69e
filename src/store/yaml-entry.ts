// Each post's YAML as the stores keep it: its entry in a YAML list
// (src/representation/yaml.ts, yamlEntry), js-yaml's own text, made from the
// post's JSON text and stored beside it, so that a YAML list or page is the
// stored entries joined, as a JSON one is the stored texts joined, and costs
// about its bytes whether or not responses are kept.
//
// An entry is a function of the JSON text alone. A write stores the new
// text's entry with the text, in the same statement, or none (NULL) when the
// text is too long to write YAML for on the event loop; a row migrated from
// before entries were stored has none either. A missing entry is made when
// it is first needed (by the write itself, off the loop, once it has
// committed, or by the first YAML read of the post) and stored with keepYaml,
// only where the post still has the tag it was made from. So no stored entry
// is ever another text's, in any process, and a read never serves stale YAML.

import { yamlDocumentOffLoop } from "../representation/yaml-thread.js";
import { entryOfDocument, yamlEntry } from "../representation/yaml.js";
import { postFromJson } from "./representation.js";
import type { Post, PostStore, Representation } from "./types.js";

/**
 * From this much JSON text, a post's YAML is written on js-yaml's own thread
 * (yaml-thread.ts) rather than on the event loop: js-yaml writes plain text
 * at some 20 to 50 MB/s but escaped control characters at 2 to 5, so 16 KiB
 * of JSON is at most a few milliseconds on the loop, and past it a post
 * could take tens of them. (A message to the thread costs about 50 µs, more
 * than js-yaml takes for a small post.)
 */
export const OFF_LOOP_CHARS = 16 * 1024;

/** The entry of `post`, whose JSON text is `json`, when it is short enough to be made on the loop (inside a write's transaction); null otherwise. */
export function entryNow(post: Post, json: string): string | null {
  return json.length < OFF_LOOP_CHARS ? yamlEntry(post) : null;
}

/** The entry of the post whose JSON text is `json`: at once when it is short, else a promise of js-yaml's thread. */
export function entryOf(json: string): string | Promise<string> {
  if (json.length < OFF_LOOP_CHARS) return yamlEntry(postFromJson(json));
  return yamlDocumentOffLoop(json).then(entryOfDocument);
}

/**
 * After a write that stored no entry (`stored` null: the text was too long
 * to make it in the transaction), the entry made on js-yaml's thread and
 * stored under the written tag, before the write is acknowledged, so that
 * reads find it. If that fails (the thread failed, the store is unreachable
 * for a moment), the write still stands: the post's first YAML read makes
 * the entry instead.
 */
export async function keepAfterWrite(posts: Pick<PostStore, "keepYaml">, id: string, representation: Representation, stored: string | null): Promise<void> {
  if (stored !== null) return;
  try {
    await posts.keepYaml([{ id, tag: representation.tag, yaml: await entryOf(representation.json) }]);
  } catch {
    // Nothing is lost: the row holds no entry, and a read makes one.
  }
}
