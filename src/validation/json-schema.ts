// The part of JSON Schema the resource schemas use (src/validation/schemas.ts),
// checked without a library. Ajv did this job, and loading it cost every
// server process, worker and replacement about 100 ms of CPU before it
// listened (a quarter of its start), and its first check compiled the schema
// and the meta-schema beside it; these schemas use nine keywords that
// constrain a value.
//
// The violations come in Ajv's order, with its fields (keyword, instancePath,
// params), so the answers read as they did: per schema, the object rules
// (required in the schema's order, then additionalProperties in the value's,
// then properties in the schema's), the string rules (maxLength, minLength,
// pattern) and the array rules (maxItems, then each item); a value of the
// wrong type gets a `type` violation and none of its type's rules. Lengths count code points, as
// JSON Schema says (and Ajv did), and patterns are Unicode regular
// expressions. test/validation/json-schema.test.ts checks every one of these
// against Ajv (a devDependency now) on drawn values, in both modes.
//
// A schema with any other keyword is refused when first compiled, so that
// no rule is ever passed over in silence.

/** One broken rule, as Ajv reported it: where (a JSON pointer into the value), which keyword, its parameters. */
export interface Violation {
  readonly keyword: "type" | "required" | "additionalProperties" | "maxLength" | "minLength" | "pattern" | "maxItems";
  readonly instancePath: string;
  readonly params: Readonly<Record<string, string | number>>;
}

/** Checks a value: its violations (none when it is valid), all of them or only the first. */
export type Check = (value: unknown, all: boolean) => readonly Violation[];

type JsonType = "string" | "object" | "array";

/** A schema read once: its rules as plain fields, its subschemas compiled. */
interface Compiled {
  readonly type: JsonType | undefined;
  readonly maxLength: number | undefined;
  readonly minLength: number | undefined;
  readonly pattern: { readonly source: string; readonly re: RegExp } | undefined;
  readonly maxItems: number | undefined;
  readonly items: Compiled | undefined;
  readonly required: readonly string[];
  readonly closed: boolean;
  readonly properties: ReadonlyMap<string, Compiled>;
}

/** Keywords that only describe: they change nothing in what is valid. */
const ANNOTATIONS = new Set(["$id", "title", "description"]);
const KEYWORDS = new Set(["type", "maxLength", "minLength", "pattern", "maxItems", "items", "required", "additionalProperties", "properties"]);
const TYPES = new Set<string>(["string", "object", "array"]);

function refuse(path: string, what: string): never {
  throw new Error(`src/validation/json-schema.ts cannot check the schema at ${path || "its root"}: ${what}`);
}

function count(schema: Record<string, unknown>, keyword: string, path: string): number | undefined {
  const n = schema[keyword];
  if (n === undefined) return undefined;
  if (typeof n !== "number" || !Number.isInteger(n) || n < 0) refuse(path, `${keyword} must be a whole number`);
  return n;
}

function compileAt(schema: unknown, path: string): Compiled {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) refuse(path, "a schema must be an object");
  const s = schema as Record<string, unknown>;
  for (const keyword of Object.keys(s)) {
    if (!KEYWORDS.has(keyword) && !ANNOTATIONS.has(keyword)) refuse(path, `the keyword "${keyword}" is not supported`);
  }
  if (s.type !== undefined && !(typeof s.type === "string" && TYPES.has(s.type))) refuse(path, `type must be one of ${[...TYPES].join(", ")}`);
  if (s.additionalProperties !== undefined && s.additionalProperties !== false) refuse(path, "additionalProperties may only be false");
  if (s.pattern !== undefined && typeof s.pattern !== "string") refuse(path, "pattern must be a string");
  const required = s.required ?? [];
  if (!Array.isArray(required) || !required.every((name) => typeof name === "string")) refuse(path, "required must list names");
  const properties = new Map<string, Compiled>();
  if (s.properties !== undefined) {
    if (typeof s.properties !== "object" || s.properties === null) refuse(path, "properties must be an object");
    for (const [name, sub] of Object.entries(s.properties)) properties.set(name, compileAt(sub, `${path}/properties/${name}`));
  }
  return {
    type: s.type as JsonType | undefined,
    maxLength: count(s, "maxLength", path),
    minLength: count(s, "minLength", path),
    pattern: s.pattern === undefined ? undefined : { source: s.pattern as string, re: new RegExp(s.pattern as string, "u") },
    maxItems: count(s, "maxItems", path),
    items: s.items === undefined ? undefined : compileAt(s.items, `${path}/items`),
    required: required as string[],
    closed: s.additionalProperties === false,
    properties,
  };
}

/** Code points in `s` (a lone surrogate counts as one), as JSON Schema's string lengths count. */
function codePoints(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++, n++) {
    const unit = s.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++;
  }
  return n;
}

function typeOf(value: unknown): JsonType | "other" {
  if (typeof value === "string") return "string";
  if (Array.isArray(value)) return "array";
  if (typeof value === "object" && value !== null) return "object";
  return "other";
}

/**
 * Appends `value`'s violations of `schema` to `out`; returns false once it should stop (only the first is
 * wanted and there is one). Recursion follows the schema, never the value, so its depth is the schema's.
 */
function walk(schema: Compiled, value: unknown, at: string, all: boolean, out: Violation[]): boolean {
  const type = typeOf(value);
  if (schema.type !== undefined && schema.type !== type) {
    out.push({ keyword: "type", instancePath: at, params: { type: schema.type } });
    return all;
  }
  const stop = (v: Violation) => {
    out.push(v);
    return !all;
  };
  if (type === "string") {
    const s = value as string;
    // A string of n UTF-16 units holds at most n code points: only a longer one needs counting.
    const length = schema.maxLength !== undefined && s.length > schema.maxLength ? codePoints(s) : undefined;
    if (length !== undefined && length > schema.maxLength! && stop({ keyword: "maxLength", instancePath: at, params: { limit: schema.maxLength! } })) return false;
    if (schema.minLength !== undefined && (length ?? codePoints(s)) < schema.minLength && stop({ keyword: "minLength", instancePath: at, params: { limit: schema.minLength } })) return false;
    if (schema.pattern !== undefined && !schema.pattern.re.test(s) && stop({ keyword: "pattern", instancePath: at, params: { pattern: schema.pattern.source } })) return false;
  } else if (type === "array") {
    const items = value as unknown[];
    if (schema.maxItems !== undefined && items.length > schema.maxItems && stop({ keyword: "maxItems", instancePath: at, params: { limit: schema.maxItems } })) return false;
    if (schema.items !== undefined) {
      for (let i = 0; i < items.length; i++) if (!walk(schema.items, items[i], `${at}/${i}`, all, out)) return false;
    }
  } else if (type === "object") {
    const object = value as Record<string, unknown>;
    for (const name of schema.required) {
      if (object[name] === undefined && stop({ keyword: "required", instancePath: at, params: { missingProperty: name } })) return false;
    }
    if (schema.closed) {
      for (const name of Object.keys(object)) {
        if (!schema.properties.has(name) && stop({ keyword: "additionalProperties", instancePath: at, params: { additionalProperty: name } })) return false;
      }
    }
    for (const [name, sub] of schema.properties) {
      if (object[name] !== undefined && !walk(sub, object[name], `${at}/${escapePointer(name)}`, all, out)) return false;
    }
  }
  return true;
}

/** RFC 6901: "~" and "/" in a member's name are written "~0" and "~1" in a pointer. */
function escapePointer(name: string): string {
  return name.replace(/~/g, "~0").replace(/\//g, "~1");
}

/** Compiles `schema` (once: refusing any keyword this file does not check) into its check. */
export function compileSchema(schema: object): Check {
  const compiled = compileAt(schema, "");
  return (value, all) => {
    const out: Violation[] = [];
    walk(compiled, value, "", all, out);
    return out;
  };
}
