// POST /api/wire: run the exact bytes of a raw HTTP/1.1 request through the
// server's own connection code in memory (src/http/inject.ts: the same parser,
// router, handlers and writer as on a socket, with the same limits; the
// request's own Authorization decides what it may do), and answer with the
// bytes that came back and the parser's account of both directions.

import { json } from "../api/json.js";
import { chooseFormat } from "../api/negotiate.js";
import type { Handler } from "../http/connection.js";
import { inject } from "../http/inject.js";
import { mediaType } from "../http/media.js";
import type { ParserLimits } from "../http/parser.js";
import { fail, problem } from "../http/problem.js";
import { headerValue, type Request } from "../http/request.js";
import type { Route } from "../router/route.js";
import { accountOfRequests, accountOfResponses } from "./wire.js";
import { wireViewSchema } from "./wire-schema.js";

export const WIRE_PATH = "/api/wire";
export const WIRE_TYPES = ["text/plain", "message/http"];
/**
 * Requests one wire view runs. Pipelining a thousand tiny requests that each
 * fetch the page would turn one request body into megabytes of answer.
 */
export const MAX_WIRE_REQUESTS = 10;

export interface WireOptions {
  /** The application's own handler, the one sockets are served by. */
  readonly handler: Handler;
  readonly limits: ParserLimits;
  /** A handler failed while serving a request of the wire view (the client got a 500). */
  readonly onHandlerError?: (error: unknown) => void;
}

const EXAMPLE = "GET /api/v2/status HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nAccept: application/json\r\n\r\n";

function requireType(request: Request): void {
  const raw = headerValue(request, "content-type");
  const type = mediaType(raw);
  if (type === undefined || !WIRE_TYPES.includes(type)) {
    fail(415, {
      kind: "unsupported-media-type",
      detail: `${raw === undefined ? "The request has no Content-Type" : `Content-Type ${raw.slice(0, 100)} is not accepted here`}. Send the raw request as text/plain (or message/http).`,
      instance: request.target,
      headers: { "Accept-Post": WIRE_TYPES.join(", ") },
    });
  }
}

export function wireRoute(options: WireOptions): Route {
  // A request of the wire view may not ask for the wire view: nesting would multiply the work each byte causes.
  const inner: Handler = (request) =>
    request.path === WIRE_PATH
      ? problem(403, {
          kind: "wire-view-nested",
          title: "The wire view does not run itself",
          detail: `A request sent through ${WIRE_PATH} cannot be a request to ${WIRE_PATH}; send it directly instead.`,
          instance: request.target,
        })
      : options.handler(request);

  return {
    method: "POST",
    path: WIRE_PATH,
    summary: "The wire view: run a raw HTTP/1.1 request through the server's parser, router and handlers, and see every part of both messages with byte offsets",
    request: {
      description:
        "The exact bytes of one or more HTTP/1.1 requests (CR LF line endings), as a client would write them on a connection. " +
        `At most ${MAX_WIRE_REQUESTS} requests; requests to ${WIRE_PATH} itself are refused.`,
      mediaTypes: WIRE_TYPES,
      schema: { type: "string", minLength: 1 },
      example: EXAMPLE,
    },
    responses: {
      200: {
        description: "The requests ran (whatever they answered, malformed bytes included): the response bytes, and the account of every part",
        mediaTypes: ["application/json"],
        schema: wireViewSchema,
        headers: { "Cache-Control": "no-store" },
      },
      400: { description: "The body is empty" },
      406: { description: "Accept rules out JSON" },
      422: { description: `More than ${MAX_WIRE_REQUESTS} requests in one body` },
    },
    handler: async (request) => {
      requireType(request);
      const input = request.body;
      if (input.length === 0) {
        fail(400, { kind: "empty-body", detail: `Send the raw request as the body, e.g. ${JSON.stringify(EXAMPLE)}.`, instance: request.target });
      }
      // After the body check: on a request without a body, negotiation would read Content-Type as a wish.
      chooseFormat(request, ["json"]);
      const account = accountOfRequests(input, options.limits);
      if (account.requests.length > MAX_WIRE_REQUESTS) {
        fail(422, {
          kind: "too-many-requests-in-wire-view",
          title: "Too many requests",
          detail: `The body holds ${account.requests.length} requests; the wire view runs at most ${MAX_WIRE_REQUESTS} at a time.`,
          instance: request.target,
        });
      }
      const result = await inject(inner, input, {
        limits: options.limits,
        ...(options.onHandlerError === undefined ? {} : { onHandlerError: options.onHandlerError }),
      });
      const output = result.output;
      return json(
        200,
        { request: account, response: { bytes: output.length, raw: output.toString("utf8"), responses: accountOfResponses(output, account.requests) } },
        { "Cache-Control": "no-store" },
      );
    },
  };
}
