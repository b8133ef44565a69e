// Fields a policy puts on every answer of a route, the errors its handler
// throws included (an HttpError's response, which would otherwise pass the
// policy by): the policy's value wins over a field of the same name the
// handler set, and stands where the handler's would have.

import { HttpError } from "../http/message/problem.js";
import type { FieldValue, Response } from "../http/message/response.js";
import type { RouteHandler } from "../router/route.js";

export function withFields(response: Response, fields: Readonly<Record<string, FieldValue>>): Response {
  return { ...response, headers: { ...fields, ...response.headers, ...fields } };
}

/** The handler, every answer of it (thrown or returned) carrying `fields`. */
export function addingFields(fields: Readonly<Record<string, FieldValue>>): (handler: RouteHandler) => RouteHandler {
  const add = (response: Response) => withFields(response, fields);
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
