// JSON Merge Patch (RFC 7396 §2): null removes a member, an object merges
// recursively, anything else replaces.

import { fail } from "../http/problem.js";
import type { Request } from "../http/request.js";
import { readJson } from "./body.js";
import { validate } from "./validate.js";

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const result: Record<string, unknown> = {};
  if (isObject(target)) for (const [k, v] of Object.entries(target)) define(result, k, v);
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else define(result, key, mergePatch(Object.hasOwn(result, key) ? result[key] : undefined, value));
  }
  return result;
}

/** Own, enumerable data property even for "__proto__", so a patch cannot reach a prototype. */
function define(o: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * The whole PATCH/UPDATE step after the resource is found: read the body as a
 * merge patch (415/400), require an object (422), merge it into `current`,
 * and check the result against the resource's schema (422).
 */
export function patchFields<T>(request: Request, current: T, schema: object, what: string): T {
  const patch = readJson(request, MERGE_PATCH_TYPES);
  if (!isObject(patch)) {
    fail(422, { kind: "invalid-fields", title: "Invalid fields", detail: `A merge patch for ${what} must be a JSON object.`, instance: request.target });
  }
  return validate<T>(schema, mergePatch(current, patch), request.target);
}

/** RFC 7396 §4 registers application/merge-patch+json; plain JSON is accepted too. */
export const MERGE_PATCH_TYPES = ["application/merge-patch+json", "application/json"];
