// JSON Merge Patch (RFC 7396 §2): null removes a member, an object merges
// recursively, anything else replaces.

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
