// JSON Merge Patch (RFC 7396 §2): null removes a member, an object merges
// recursively, anything else replaces.

import { fail } from "../http/problem.js";
import type { Request } from "../http/request.js";
import { readJson } from "./body.js";
import { validate } from "./validate.js";

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Deeper than any resource here; a patch nested further is refused, not recursed into. */
const MAX_DEPTH = 32;

export function mergePatch(target: unknown, patch: unknown, depth = 0): unknown {
  if (!isObject(patch)) return patch;
  if (depth >= MAX_DEPTH) throw new PatchTooDeepError();
  const result: Record<string, unknown> = {};
  if (isObject(target)) for (const [k, v] of Object.entries(target)) define(result, k, v);
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else define(result, key, mergePatch(Object.hasOwn(result, key) ? result[key] : undefined, value, depth + 1));
  }
  return result;
}

export class PatchTooDeepError extends Error {
  override readonly name = "PatchTooDeepError";
  constructor() {
    super(`a merge patch may nest objects at most ${MAX_DEPTH} levels deep`);
  }
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
  let merged: unknown;
  try {
    merged = mergePatch(current, patch);
  } catch (error) {
    if (!(error instanceof PatchTooDeepError)) throw error;
    fail(422, { kind: "invalid-fields", title: "Invalid fields", detail: `The patch is nested too deeply: ${error.message}.`, instance: request.target });
  }
  return validate<T>(schema, merged, request.target);
}

/** RFC 7396 §4 registers application/merge-patch+json; plain JSON is accepted too. */
export const MERGE_PATCH_TYPES = ["application/merge-patch+json", "application/json"];
