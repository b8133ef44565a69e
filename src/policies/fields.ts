// Fields a policy puts on a route's answers: the one way the API's policies
// add header fields (the deprecation fields, CORS, the sandbox, Cache-Control).
// The policy's value wins over a field of the same name the handler set, and
// stands where the handler's would have.
//
// Handlers often return one prebuilt, frozen response for every request (the
// status endpoints do), and the writer keeps the bytes of a frozen response,
// so that the same answer again is not serialized again (response.ts). A
// copy made per request would lose that: the combined response is made once
// for a frozen one, frozen too, and found again by identity.

import { HttpError } from "../http/message/problem.js";
import type { FieldValue, Response } from "../http/message/response.js";
import type { RouteHandler } from "../router/route.js";

/** Where the fields go: before the handler's (fields about the exchange, CORS), or after them (about the representation). */
export type Place = "first" | "last";

/**
 * A function that adds `fields` to a response (to those `applies` accepts,
 * by status), remembering the combined copy of each frozen response: the one
 * returned last beside the map, so a route that answers with the same object
 * every time finds it without a lookup.
 */
export function fieldsAdder(fields: Readonly<Record<string, FieldValue>>, place: Place, applies: (status: number) => boolean = () => true): (response: Response) => Response {
  const seen = new WeakMap<Response, Response>();
  let last: Response | null = null;
  let lastCombined: Response = { status: 0 };
  return (response) => {
    if (response === last) return lastCombined;
    if (!applies(response.status)) return response;
    const known = seen.get(response);
    if (known !== undefined) return known;
    const combined = { ...response, headers: place === "first" ? { ...fields, ...response.headers, ...fields } : { ...response.headers, ...fields } };
    // Only a frozen response is the same answer when it comes again.
    if (!Object.isFrozen(response)) return combined;
    const frozen = Object.freeze(combined);
    seen.set(response, frozen);
    last = response;
    lastCombined = frozen;
    return frozen;
  };
}

/** The handler, every answer of it that `add` takes (returned, or thrown as an HttpError), passed through `add`. */
export function adding(add: (response: Response) => Response): (handler: RouteHandler) => RouteHandler {
  const rescue = (error: unknown): Response => {
    if (error instanceof HttpError) return add(error.response);
    throw error;
  };
  return (handler) => (request, params) => {
    let result: ReturnType<RouteHandler>;
    try {
      result = handler(request, params);
    } catch (error) {
      return rescue(error);
    }
    return result instanceof Promise ? result.then(add, rescue) : add(result);
  };
}

/** The handler, every answer of it (thrown or returned) carrying `fields`, placed first. */
export function addingFields(fields: Readonly<Record<string, FieldValue>>): (handler: RouteHandler) => RouteHandler {
  return adding(fieldsAdder(fields, "first"));
}
