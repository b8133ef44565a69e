// JSON Merge Patch (RFC 7396 §2): null removes a member, an object merges
// recursively, anything else replaces.

import { fail, HttpError } from "../http/message/problem.js";
import type { Request } from "../http/message/request.js";
import { readJson } from "./body.js";
import { validate } from "../validation/validate.js";

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
 * The body of a PATCH/UPDATE as a function from the stored fields to the new
 * ones: the store calls it inside its write transaction, on the record as
 * stored (src/store/types.ts, Change), so that concurrent patches each apply
 * to the result of the ones before.
 *
 * The body is read here, once, before any lock is taken (415/400, and 422 if
 * it is not an object); a problem with it is held back and thrown when the
 * function is first called, so that it still comes after 404 and after a
 * failed precondition (412), which RFC 9110 §13.2.1 puts before any
 * processing of the content. Called, the function merges (RFC 7396) and
 * checks the result against the resource's schema (422).
 */
export function mergePatcher<T>(request: Request, schema: object, what: string): (current: T) => T {
  let patch: Record<string, unknown>;
  try {
    const parsed = readJson(request, MERGE_PATCH_TYPES);
    if (!isObject(parsed)) {
      fail(422, { kind: "invalid-fields", title: "Invalid fields", detail: `A merge patch for ${what} must be a JSON object.`, instance: request.target });
    }
    patch = parsed;
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    return () => {
      throw error;
    };
  }
  return (current) => {
    let merged: unknown;
    try {
      merged = mergePatch(current, patch);
    } catch (error) {
      if (!(error instanceof PatchTooDeepError)) throw error;
      fail(422, { kind: "invalid-fields", title: "Invalid fields", detail: `The patch is nested too deeply: ${error.message}.`, instance: request.target });
    }
    return validate<T>(schema, merged, request.target);
  };
}

/** RFC 7396 §4 registers application/merge-patch+json; plain JSON is accepted too. */
export const MERGE_PATCH_TYPES = ["application/merge-patch+json", "application/json"];
