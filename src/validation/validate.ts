// Checking a value against a resource schema, with a 422 whose detail names
// the field and the rule (and an `errors` member listing every violation).

import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { fail } from "../http/message/problem.js";
import { NO_NUL, SERVER_FIELDS } from "./schemas.js";

const ajv = new Ajv({ allErrors: true, strict: true });

/** Where a violation is: "title", "tags/2", or "the body" for the top level. */
function field(error: ErrorObject): string {
  const base = error.instancePath.replace(/^\//, "");
  if (error.keyword === "required") return base === "" ? String(error.params.missingProperty) : `${base}/${String(error.params.missingProperty)}`;
  if (error.keyword === "additionalProperties") {
    const extra = String(error.params.additionalProperty);
    return base === "" ? extra : `${base}/${extra}`;
  }
  return base === "" ? "the body" : base;
}

function describe(error: ErrorObject): string {
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
    default:
      return `"${where}" ${error.message ?? "is invalid"}`;
  }
}

const compiled = new Map<object, ValidateFunction>();

/** Throws a 422 problem unless `value` satisfies `schema`. */
export function validate<T>(schema: object, value: unknown, instance: string): T {
  let check = compiled.get(schema);
  if (check === undefined) compiled.set(schema, (check = ajv.compile(schema)));
  if (!check(value)) {
    const messages = (check.errors ?? []).map(describe);
    fail(422, {
      kind: "invalid-fields",
      title: "Invalid fields",
      detail: `${messages[0]}. Fix the request body and send it again.`,
      instance,
      extensions: { errors: messages },
    });
  }
  return value as T;
}
