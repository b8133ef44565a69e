// The lab's parameters: each one read from the path or the query, checked
// against its bound, and refused with a 400 whose problem names the parameter
// and the range it takes (`parameter` and `allowed` members), so a client
// learns what to send instead.

import { fail } from "../../http/message/problem.js";
import type { Request } from "../../http/message/request.js";

/** Refuses the request: `parameter` is wrong, `allowed` says what it takes. */
export function refuse(request: Request, parameter: string, allowed: string, why?: string): never {
  fail(400, {
    kind: "invalid-parameter",
    title: "Invalid parameter",
    detail: `${why ?? `${parameter} is out of range`}: ${parameter} takes ${allowed}.`,
    instance: request.target,
    extensions: { parameter, allowed },
  });
}

const WHOLE = /^(?:0|[1-9][0-9]{0,15})$/;
const DECIMAL = /^(?:0|[1-9][0-9]{0,15})(?:\.[0-9]{1,6})?$/;

/** A whole number from `min` to `max`, written in plain digits. */
export function whole(request: Request, parameter: string, text: string, min: number, max: number): number {
  const allowed = `a whole number from ${min} to ${max}`;
  if (!WHOLE.test(text)) refuse(request, parameter, allowed, `${parameter} is ${JSON.stringify(text)}, not a whole number`);
  const n = Number(text);
  if (n < min || n > max) refuse(request, parameter, allowed, `${parameter} is ${n}, out of range`);
  return n;
}

/** A number of seconds from 0 to `max`, decimals allowed (at most 6 places: microseconds are as fine as timers go). */
export function seconds(request: Request, parameter: string, text: string, max: number): number {
  const allowed = `a number of seconds from 0 to ${max}, decimals allowed (e.g. 1.5)`;
  if (!DECIMAL.test(text)) refuse(request, parameter, allowed, `${parameter} is ${JSON.stringify(text)}, not a number of seconds`);
  const n = Number(text);
  if (n > max) refuse(request, parameter, allowed, `${parameter} is ${n}, out of range`);
  return n;
}

/**
 * The query's pairs in order, decoded as a form would write them (+ is a
 * space, WHATWG application/x-www-form-urlencoded), as the page's form and
 * most clients send them; a broken percent-escape is a 400 naming the pair.
 */
export function queryPairs(request: Request): [string, string][] {
  const pairs: [string, string][] = [];
  if (request.query === "") return pairs;
  for (const part of request.query.split("&")) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    const rawName = eq === -1 ? part : part.slice(0, eq);
    const name = decode(rawName);
    const value = decode(eq === -1 ? "" : part.slice(eq + 1));
    if (name === undefined || value === undefined) {
      refuse(request, name ?? rawName, "percent-escapes of UTF-8 bytes (%XX)", `The query pair ${JSON.stringify(part)} has a broken percent-escape`);
    }
    pairs.push([name, value]);
  }
  return pairs;
}

function decode(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "));
  } catch {
    return undefined;
  }
}

/** The query's parameters that this resource reads, each at most once; any other name is ignored, as on every endpoint. */
export function queryOf<const N extends string>(request: Request, names: readonly N[]): Partial<Record<N, string>> {
  const out: Partial<Record<N, string>> = {};
  for (const [name, value] of queryPairs(request)) {
    if (!(names as readonly string[]).includes(name)) continue;
    if (out[name as N] !== undefined) refuse(request, name, "one value", `${name} is given twice`);
    out[name as N] = value;
  }
  return out;
}
