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
/**
 * The one body type accepted. message/http is not CORS-safelisted (text/plain
 * is): a page of another origin cannot send it without a preflight, and this
 * server grants no preflight, so no other site can make a visitor's browser
 * run requests here.
 */
export const WIRE_TYPE = "message/http";
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
  if (type === WIRE_TYPE) return;
  const said =
    raw === undefined
      ? "The request has no Content-Type."
      : type === "text/plain"
        ? "Content-Type text/plain is refused here: any web page can send text/plain (a form, or fetch() in no-cors mode) without a CORS preflight, " +
          "so accepting it would let a page of another site run requests (DELETE, PATCH, UPDATE...) against this server through a visitor's browser (cross-site request forgery)."
        : `Content-Type ${raw.slice(0, 100)} is not accepted here.`;
  fail(415, {
    kind: "unsupported-media-type",
    detail: `${said} Send the raw request as ${WIRE_TYPE} (with curl: -H 'Content-Type: ${WIRE_TYPE}').`,
    instance: request.target,
    headers: { "Accept-Post": WIRE_TYPE },
  });
}

/** True when `origin` (a serialized origin, RFC 6454 §6.2) names the host this request was sent to. */
function sameOrigin(origin: string, host: string): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // "null" (sandboxed frames, file: pages), or a repeated Origin joined by a comma
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.origin !== origin.toLowerCase()) return false;
  try {
    // Host as that scheme would write it: "example:80" is the origin http://example.
    return new URL(`${url.protocol}//${host}`).host === url.host;
  } catch {
    return false;
  }
}

/**
 * Only this server's own page may use the wire view from a browser: it runs
 * requests from the server's own network position with whatever token they
 * carry. Sec-Fetch-Site (Fetch Metadata) and Origin (RFC 6454 §7) are sent by
 * browsers on every cross-origin POST; tools such as curl send neither.
 */
function refuseCrossSite(request: Request): void {
  const refuse = (why: string) =>
    fail(403, {
      kind: "cross-site-wire-view",
      title: "The wire view is for this server's own page",
      detail: `${why} The wire view runs requests on this server with whatever they carry, so it answers only its own origin (the page at /) and clients that send no Origin, such as curl.`,
      instance: request.target,
    });
  const site = headerValue(request, "sec-fetch-site");
  if (site !== undefined && site !== "same-origin" && site !== "none") refuse(`Sec-Fetch-Site: ${site.slice(0, 40)}: the browser says a page of another origin sent this request.`);
  const origin = headerValue(request, "origin");
  if (origin !== undefined && !sameOrigin(origin, request.host)) refuse(`Origin ${origin.slice(0, 200)} is not the origin of this server (Host ${request.host.slice(0, 200)}).`);
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
        "The exact bytes of one or more HTTP/1.1 requests (CR LF line endings), as a client would write them on a connection, " +
        `as ${WIRE_TYPE} only (text/plain is refused: a page of another site could send it without a CORS preflight). ` +
        `At most ${MAX_WIRE_REQUESTS} requests; requests to ${WIRE_PATH} itself are refused.`,
      mediaTypes: [WIRE_TYPE],
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
      403: { description: "Sent from a page of another origin (Sec-Fetch-Site other than same-origin, or an Origin that is not this server's)" },
      406: { description: "Accept rules out JSON" },
      415: { description: `The body is not ${WIRE_TYPE} (text/plain included: a cross-site page could send it without a preflight)`, headers: { "Accept-Post": WIRE_TYPE } },
      422: { description: `More than ${MAX_WIRE_REQUESTS} requests in one body` },
    },
    handler: async (request) => {
      requireType(request);
      refuseCrossSite(request);
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
