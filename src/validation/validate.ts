// Checking a value against a resource schema, with a 422 whose detail names
// the field and the rule (and an `errors` member listing the violations).

import { fail } from "../http/message/problem.js";
import { compileSchema, type Check, type Violation } from "./json-schema.js";
import { NO_NUL, SERVER_FIELDS } from "./schemas.js";

/**
 * Past this many JSON values (members and array items, at any depth) only
 * the first violation is reported. A valid post holds at most 54 (title,
 * body, author, tags and 50 tags); listing every violation of a body made
 * of half a million of them (1 MiB of `[0,0,...]` tags, or of unknown
 * members) cost Ajv, the library that checked them then, a quarter of a
 * second and 70 MiB, and its answer was 17 MB long.
 */
export const MAX_LISTED_VALUES = 256;

/** Whether `value` holds more than `limit` values; stops counting past it, without recursion. */
function holdsMoreThan(value: unknown, limit: number): boolean {
  const stack: unknown[] = [value];
  let count = 0;
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== "object" || v === null) continue;
    // Object.keys before the values: for an object of many members, counting them costs a third of reading them.
    const keys = Array.isArray(v) ? undefined : Object.keys(v);
    count += keys === undefined ? (v as unknown[]).length : keys.length;
    if (count > limit) return true;
    if (keys === undefined) for (const item of v as unknown[]) stack.push(item);
    else for (const key of keys) stack.push((v as Record<string, unknown>)[key]);
  }
  return false;
}

/** Where a violation is: "title", "tags/2", or "the body" for the top level. */
function field(error: Violation): string {
  const base = error.instancePath.replace(/^\//, "");
  if (error.keyword === "required") return base === "" ? String(error.params.missingProperty) : `${base}/${String(error.params.missingProperty)}`;
  if (error.keyword === "additionalProperties") {
    const extra = String(error.params.additionalProperty);
    return base === "" ? extra : `${base}/${extra}`;
  }
  return base === "" ? "the body" : base;
}

function describe(error: Violation): string {
  const where = field(error);
  switch (error.keyword) {
    case "required":
      return `"${where}" is required`;
    case "additionalProperties":
      return SERVER_FIELDS.includes(where) ? `"${where}" is set by the server and cannot be written` : `"${where}" is not a field of this resource`;
    case "type":
      return where === "the body" ? `the body must be a JSON ${String(error.params.type)}` : `"${where}" must be a ${String(error.params.type)}`;
    case "minLength":
      return `"${where}" must have at least ${String(error.params.limit)} character${error.params.limit === 1 ? "" : "s"}`;
    case "maxLength":
      return `"${where}" must have at most ${String(error.params.limit)} characters`;
    case "maxItems":
      return `"${where}" may hold at most ${String(error.params.limit)} items`;
    case "pattern":
      if (error.params.pattern === NO_NUL) return `"${where}" must not contain the NUL character (U+0000)`;
      return `"${where}" must match ${String(error.params.pattern)}`;
  }
}

const compiled = new Map<object, Check>();

/**
 * Throws a 422 problem unless `value` satisfies `schema`, its `errors`
 * listing every violation (only the first, for a body of more than
 * MAX_LISTED_VALUES values).
 */
export function validate<T>(schema: object, value: unknown, instance: string): T {
  let check = compiled.get(schema);
  if (check === undefined) compiled.set(schema, (check = compileSchema(schema)));
  // The first violation alone first: its cost does not grow with what follows it, and a valid value has none.
  const firstFound = check(value, false);
  if (firstFound.length === 0) return value as T;
  const tooMany = holdsMoreThan(value, MAX_LISTED_VALUES);
  const messages = (tooMany ? firstFound : check(value, true)).map(describe);
  const only = tooMany ? ` (the body holds more than ${MAX_LISTED_VALUES} values, so only its first violation is listed)` : "";
  fail(422, {
    kind: "invalid-fields",
    title: "Invalid fields",
    detail: `${messages[0]}${only}. Fix the request body and send it again.`,
    instance,
    extensions: { errors: messages },
  });
}
