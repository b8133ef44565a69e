// A YAML page's entries joined, as a list sends them. The store keeps each
// post's entry beside its JSON text (src/store/yaml-entry.ts), so a page is
// nearly always joined by the store already, in the statement that reads it.
// A page holding posts that have no entry yet (written before the store kept
// YAML, or whose long text's entry a write is still making off the loop) is
// joined here: the missing entries are made from the texts read with the
// page, and given to the store (keepYaml), which keeps each only where the
// post still has the text it was made from. So the next read of those posts
// finds them joined, in every process.

import { entryOf } from "../store/yaml-entry.js";
import type { PostStore, YamlEntry, YamlPage } from "../store/types.js";

/** Where a YAML list's posts come from: pages of their entries, and where entries made for them are kept (a PostStore has both). */
export type YamlListSource = Pick<PostStore, "pageYaml" | "keepYaml">;

/**
 * The page's entries joined: the store's, or made now where missing (a long
 * text's on js-yaml's own thread) and kept. The event loop gets a turn of
 * its own whenever this has worked `turnMs`, so a page of posts never made
 * into YAML before holds it no longer than one small post's YAML takes.
 */
export async function joinedEntries(page: YamlPage, source: YamlListSource, turnMs: number, nextTurn: () => Promise<unknown>): Promise<Uint8Array | string> {
  if (page.entries !== undefined) return page.entries;
  let text = "";
  const made: YamlEntry[] = [];
  let turnStarted = performance.now();
  for (const item of page.items) {
    if (item.yaml !== null) text += item.yaml;
    else {
      const entry = entryOf(item.json);
      const yaml = typeof entry === "string" ? entry : await entry;
      made.push({ id: item.id, tag: item.tag, yaml });
      text += yaml;
    }
    if (performance.now() - turnStarted >= turnMs) {
      await nextTurn();
      turnStarted = performance.now();
    }
  }
  // A store that cannot write now (a busy lock, a database away) loses nothing but this shortcut: the list is sent as made.
  if (made.length > 0) await source.keepYaml(made).catch(() => undefined);
  return text;
}
