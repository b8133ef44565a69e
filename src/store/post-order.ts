// The memory store's posts in position order, which is what pages are cut
// from: each entry is a position and the id of the post that holds it.
//
// Deleting a post must not cost time in proportion to the store's size (a
// client that deletes many posts would otherwise cost time quadratic in it),
// so a delete moves nothing: it leaves its entry in place as a tombstone.
// Entries keep their positions, tombstones too, so a cursor is still found by
// binary search. Two things then keep every read bounded:
//
// - A count of the live entries, kept in a Fenwick tree (each node counts the
//   live entries of a block of indices, blocks halving from the root), finds
//   the first live entry at or after any index in O(log n), however many
//   tombstones lie between. Stepping through tombstones one by one would not
//   do: a run of them can be as long as half the store, and a client could
//   read the page that crosses it again and again.
// - Compaction drops the tombstones once they outnumber the live entries.
//   It costs O(n) for the n entries held, and then more than n / 2 of them
//   are tombstones, each made by one delete since the last compaction (which
//   left none): under 2 entries moved per delete, amortized O(1). It also
//   keeps the memory held to at most twice the live entries (plus one).
//
// So: append O(log n); delete O(log n) amortized (binary search, tree
// update, its share of compaction); the first item of a page O(log n), each
// next one O(1) when the entry after it is live and O(log n) at worst, so a
// page of k items costs O((k + 1) log n) whatever the tombstones, n being the
// entries held (at most 2 live + 1).
//
// Indices change only in `remove` (when it compacts); a page is read within
// one synchronous call, so no index is held across a compaction, and cursors
// are positions, which compaction keeps.

import type { Position } from "./types.js";

export interface PostOrder {
  /** Adds the post at `position`, above every position held so far. */
  append(position: Position, id: string): void;
  /** Deletes the post at `position`, which must be held and live. */
  remove(position: Position): void;
  /** The index of the first live entry whose position is above `after`; `end()` when there is none. */
  firstAfter(after: Position): number;
  /** The index of the first live entry after index `i`; `end()` when there is none. */
  next(i: number): number;
  /** The index past the last entry: where walks end. */
  end(): number;
  positionAt(i: number): Position;
  /** The id of the live entry at index `i`. */
  idAt(i: number): string;
  /** Read-only statistics, for tests: entries held (tombstones included), and compactions so far. */
  held(): number;
  compactions(): number;
}

/** The lowest set bit of `j`: the size of the block Fenwick node `j` counts. */
const lowBit = (j: number) => j & -j;

export function createPostOrder(): PostOrder {
  let positions: Position[] = [];
  /** undefined marks a tombstone. */
  let ids: (string | undefined)[] = [];
  /**
   * Fenwick tree, 1-based: node j counts the live entries at indices
   * j - lowBit(j) to j - 1. Node 0 is unused.
   */
  let tree: number[] = [0];
  let dead = 0;
  let compactions = 0;

  /** Live entries at indices below `n`. */
  function liveBelow(n: number): number {
    let sum = 0;
    for (let j = n; j > 0; j -= lowBit(j)) sum += tree[j]!;
    return sum;
  }

  /** The index of the `rank`-th live entry (1 for the first); ids.length when there are fewer. */
  function indexOfRank(rank: number): number {
    let j = 0;
    let rest = rank;
    // Descend from the largest block: j ends as the longest prefix holding fewer than `rank` live entries.
    for (let step = 2 ** Math.floor(Math.log2(Math.max(ids.length, 1))); step > 0; step >>= 1) {
      if (j + step <= ids.length && tree[j + step]! < rest) {
        j += step;
        rest -= tree[j]!;
      }
    }
    return j;
  }

  /** The first live index at or after `i`: O(1) when `i` is live, else one rank lookup. */
  function liveFrom(i: number): number {
    if (i >= ids.length) return ids.length;
    if (ids[i] !== undefined) return i;
    return indexOfRank(liveBelow(i) + 1);
  }

  /** The index of the first entry (live or not) whose position is above `after`. */
  function indexAfter(after: Position): number {
    let lo = 0;
    let hi = positions.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (positions[mid]! <= after) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  function compact(): void {
    const keep = ids.flatMap((id, i) => (id === undefined ? [] : [i]));
    positions = keep.map((i) => positions[i]!);
    ids = keep.map((i) => ids[i]!);
    // Every entry is live now, so each node counts its whole block.
    tree = Array.from({ length: ids.length + 1 }, (_, j) => lowBit(j));
    dead = 0;
    compactions++;
  }

  return {
    append(position, id) {
      positions.push(position);
      ids.push(id);
      // The new node's block ends with the new entry: its live count is the
      // entry itself plus the live entries of the rest of the block.
      const j = ids.length;
      tree.push(1 + liveBelow(j - 1) - liveBelow(j - lowBit(j)));
    },
    remove(position) {
      const i = indexAfter(position - 1);
      if (positions[i] !== position || ids[i] === undefined) throw new Error(`no live post at position ${position}`);
      ids[i] = undefined;
      for (let j = i + 1; j < tree.length; j += lowBit(j)) tree[j]!--;
      dead++;
      if (dead > ids.length - dead) compact();
    },
    firstAfter: (after) => liveFrom(indexAfter(after)),
    next: (i) => liveFrom(i + 1),
    end: () => ids.length,
    positionAt: (i) => positions[i]!,
    idAt: (i) => ids[i]!,
    held: () => ids.length,
    compactions: () => compactions,
  };
}
