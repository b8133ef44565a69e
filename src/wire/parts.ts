// The parts of a message in the wire view: byte ranges with their text, made
// within the answer's budget (budget.ts). A part that does not fit whole
// shows its first bytes and says how many it leaves out; once nothing more
// fits, the rest of a message becomes one "omitted" stretch, so the parts
// still tile the bytes and no text past the budget is ever decoded.

import { fitText, fittingBytes, jsonBytes, left, notShown, partsLeft, sizeText, type Budget, type Side } from "./budget.js";

export type PartKind =
  | "empty-line"
  | "request-line"
  | "field"
  | "blank-line"
  | "body"
  | "chunk-size"
  | "chunk-data"
  | "chunk-end"
  | "last-chunk"
  | "trailer"
  | "status-line"
  | "incomplete"
  | "unread"
  | "omitted";

export interface WirePart {
  readonly kind: PartKind;
  /** For people: "Header field Content-Type", "Body (27 bytes)". */
  readonly label: string;
  /** Byte offsets in the stream: start inclusive, end exclusive. */
  readonly start: number;
  readonly end: number;
  /** The part's bytes with their line ending: head lines as Latin-1 (byte for character), bodies as UTF-8. */
  readonly text: string;
  /** What the parser made of it. */
  readonly note?: string;
  /** The protocol error was found in this part. */
  readonly error?: true;
  /**
   * Bytes at the end of the part that `text` leaves out: the answer's budget was spent, or (the unread bytes past
   * the request limit) they follow the first PAST_LIMIT_SHOWN (requests.ts).
   */
  readonly omitted?: number;
}

export type Decode = (bytes: Buffer, start: number, end: number) => string;

export const latin1: Decode = (bytes, start, end) => bytes.toString("latin1", start, end);
export const utf8: Decode = (bytes, start, end) => bytes.toString("utf8", start, end);

/** Below this much room, a part is not worth starting: the rest is omitted. */
const MIN_ROOM = 512;

export interface PartMaker {
  /** The part bytes[start, end), whole, cut, or omitted, as the budget allows (bytes past the buffer's end count as not kept). */
  part(kind: PartKind, label: string, start: number, end: number, note?: string, decode?: Decode): WirePart;
  /** Appends `p`, merging it into an omitted stretch just before it. */
  push(parts: WirePart[], p: WirePart): void;
  /** Nothing more will be shown: what follows may join one omitted stretch without a part per piece. */
  exhausted(): boolean;
}

/** Parts of `bytes`, charged to `budget` (null: no limit, for tools and tests). */
export function partMaker(bytes: Buffer, budget: Budget | null, side: Side): PartMaker {
  const omittedLabel = budget === null ? "" : `Not shown: the wire view's output budget (${sizeText(budget.limit)}, ${budget.partLimit} parts of answer) was spent`;
  const spend = (p: WirePart, cost: number): WirePart => {
    if (budget !== null) {
      budget.spent += cost;
      budget.parts++;
    }
    return p;
  };
  return {
    part(kind, label, start, end, note, decode = latin1) {
      const len = end - start;
      const omitted = (why: string): WirePart => {
        if (budget !== null) notShown(budget, side, len);
        return { kind: "omitted", label: why, start, end, text: "", omitted: len };
      };
      if (kind === "omitted") return omitted(label || omittedLabel);
      const kept = Math.min(end, bytes.length);
      const withNote = note === undefined ? {} : { note };
      if (budget === null && kept === end) return { kind, label, start, end, text: decode(bytes, start, end), ...withNote };
      if (budget !== null && partsLeft(budget) === 0) return omitted(omittedLabel);
      const room = budget === null ? Infinity : left(budget);
      if (kept === end && len <= room) {
        // Whole, if its text fits with the rest of the part: its cost read off the bytes, decoded once, and only then.
        const overhead = jsonBytes({ kind, label, start, end, text: "", ...withNote });
        const fit = fittingBytes(bytes, start, end, room - overhead, decode !== utf8);
        if (fit.n === len) {
          const text = decode(bytes, start, end);
          // Invalid UTF-8 decodes to U+FFFD, three bytes for one: only then is the cost counted again.
          const cost = decode === utf8 && text.includes("\uFFFD") ? overhead + jsonBytes(text) - 3 : overhead + fit.cost;
          if (cost <= room) return spend({ kind, label, start, end, text, ...withNote }, cost);
        }
      }
      if (room >= MIN_ROOM) {
        const cutNote = (shown: number) =>
          `${note === undefined ? "" : `${note}. `}Cut: the first ${shown} of these ${len} bytes are shown${budget === null ? "" : `; the wire view's output budget (${sizeText(budget.limit)} of answer) was spent`}`;
        const overhead = jsonBytes({ kind, label, start, end, text: "", note: cutNote(len), omitted: len });
        const { text, shown, cost } = fitText(bytes, start, kept, Math.max(0, room - overhead + 3), decode, decode === utf8);
        const cut: WirePart = { kind, label, start, end, text, note: cutNote(shown), omitted: len - shown };
        if (budget !== null) notShown(budget, side, len - shown);
        // The overhead was counted with the longest note and omitted count these can have.
        return spend(cut, overhead + cost - 3);
      }
      return omitted(omittedLabel);
    },
    push(parts, p) {
      const last = parts[parts.length - 1];
      if (p.kind === "omitted" && last?.kind === "omitted" && last.end === p.start) {
        parts[parts.length - 1] = { ...last, end: p.end, omitted: last.omitted! + p.omitted!, ...(p.error === true ? { error: true } : {}) };
        return;
      }
      if (p.kind === "omitted") spend(p, jsonBytes(p));
      parts.push(p);
    },
    exhausted: () => budget !== null && (left(budget) < MIN_ROOM || partsLeft(budget) === 0),
  };
}
