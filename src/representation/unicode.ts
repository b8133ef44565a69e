// Well-formed Unicode in JSON bodies. A JSON string may spell a lone
// surrogate as an escape ("x\udfffy", RFC 8259 §8.2 allows the syntax but
// gives it no meaning); a JavaScript string holds it, but UTF-8 cannot: the
// SQLite and PostgreSQL stores would write U+FFFD in its place, and the
// record served later would not be the one acknowledged (nor match its ETag).
// So such strings are refused, never stored.

/** Where a lone surrogate can come from in JSON text that is valid UTF-8: an escape \uD800 to \uDFFF. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/**
 * A surrogate code unit that is not half of a pair: with the u flag a pair is
 * one code point, so \p{Cs} matches only the lone ones (what
 * String.prototype.isWellFormed, ES2024, tests; this project targets ES2023).
 */
const LONE_SURROGATE = /\p{Cs}/u;
const LONE_SURROGATES = /\p{Cs}/gu;
const wellFormed = (s: string) => !LONE_SURROGATE.test(s);

interface Pending {
  readonly value: unknown;
  /** How to name this value's place: its key or index, under its parent's place. */
  readonly key: string | undefined;
  readonly parent: Pending | undefined;
}

/** The place as "tags/2"; a lone surrogate in a member name is shown as its escape, so the answer is well-formed too. */
function pathOf(entry: Pending): string {
  const keys: string[] = [];
  for (let e: Pending | undefined = entry; e?.key !== undefined; e = e.parent) keys.push(e.key);
  return keys
    .reverse()
    .join("/")
    .replace(LONE_SURROGATES, (unit) => `\\u${unit.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * The place of the first string (or member name) in `value`, parsed from the
 * JSON `text`, that is not well-formed Unicode: "title", "tags/2", or "" for
 * the top level; undefined if there is none. Linear in the size of `value`,
 * with no recursion, however deep it nests; and free when the text holds no
 * surrogate escape at all, as nearly every body does.
 */
export function illFormedPlace(text: string, value: unknown): { readonly path: string; readonly what: "value" | "name" } | undefined {
  if (!SURROGATE_ESCAPE.test(text)) return undefined;
  const stack: Pending[] = [{ value, key: undefined, parent: undefined }];
  while (stack.length > 0) {
    const entry = stack.pop()!;
    const v = entry.value;
    if (typeof v === "string") {
      if (!wellFormed(v)) return { path: pathOf(entry), what: "value" };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], key: String(i), parent: entry });
    } else if (typeof v === "object" && v !== null) {
      const keys = Object.keys(v);
      for (const key of keys) if (!wellFormed(key)) return { path: pathOf({ value: undefined, key, parent: entry }), what: "name" };
      for (let i = keys.length - 1; i >= 0; i--) stack.push({ value: (v as Record<string, unknown>)[keys[i]!], key: keys[i]!, parent: entry });
    }
  }
  return undefined;
}
