// The echo as YAML, written here rather than by js-yaml. js-yaml spends some
// microseconds on every value it writes (it builds a tree, then picks a style
// for each scalar), and the echo of one request may hold thousands of them:
// an 8 KiB target of `a=1&` is 1,900 query pairs, which took js-yaml 12 ms
// against 0.3 ms for JSON.stringify, and a 64 KiB body of control bytes
// 15 ms; a few clients pipelining such requests held a status request
// 300 ms. The echo is plain data (mappings, sequences, strings, numbers,
// booleans), so it is written in block style with every string
// double-quoted: JSON's escapes, which YAML 1.2 reads alike, plus the
// characters YAML does not allow raw in a document (the C1 controls, DEL,
// U+2028, U+2029, U+FEFF, U+FFFE, U+FFFF), escaped as \uXXXX, the same ones
// echo-body.ts escapes in a body sent in pieces.

const NOT_RAW_IN_YAML = /[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]/g;
const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Plain words a YAML reader takes for null or a boolean (YAML 1.2's core schema, and 1.1's yes/no/on/off), not for a string. */
const NOT_A_STRING = /^(?:null|Null|NULL|true|True|TRUE|false|False|FALSE|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF|y|Y|n|N)$/;

/** A double-quoted YAML scalar of `s`. */
export function quoted(s: string): string {
  return JSON.stringify(s).replace(NOT_RAW_IN_YAML, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

function key(k: string): string {
  return PLAIN_KEY.test(k) && !NOT_A_STRING.test(k) ? k : quoted(k);
}

function scalar(v: unknown): string | undefined {
  if (typeof v === "string") return quoted(v);
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (v === null) return "null";
  if (Array.isArray(v) && v.length === 0) return "[]";
  if (typeof v === "object" && Object.keys(v).length === 0) return "{}";
  return undefined;
}

/** The lines of a mapping's members, each starting with `indent` (the first with `first`, which may be a sequence's "- "). */
function mapping(o: Record<string, unknown>, indent: string, first: string, out: string[]): void {
  let lead = first;
  for (const [k, v] of Object.entries(o)) {
    if (v === undefined) continue;
    const s = scalar(v);
    if (s !== undefined) out.push(`${lead}${key(k)}: ${s}`);
    else {
      out.push(`${lead}${key(k)}:`);
      value(v, `${indent}  `, out);
    }
    lead = indent;
  }
}

/** A sequence or a mapping that is not empty, its lines indented by `indent`. */
function value(v: unknown, indent: string, out: string[]): void {
  if (!Array.isArray(v)) return mapping(v as Record<string, unknown>, indent, indent, out);
  for (const item of v) {
    const s = scalar(item);
    if (s !== undefined) out.push(`${indent}- ${s}`);
    else if (Array.isArray(item)) {
      out.push(`${indent}-`);
      value(item, `${indent}  `, out);
    } else mapping(item as Record<string, unknown>, `${indent}  `, `${indent}- `, out);
  }
}

/** `echo` (plain data: an object of mappings, sequences, strings, numbers and booleans) as one YAML document. */
export function echoYaml(echo: object): string {
  const out: string[] = [];
  value(echo, "", out);
  return out.join("\n") + "\n";
}
