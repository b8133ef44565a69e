// POST /api/wire: run the exact bytes of a raw HTTP/1.1 request through the
// server's own connection code in memory (run.ts, with inject(): the same
// parser, router, handlers and writer as on a socket, with the same limits;
// the request's own Authorization decides what it may do), and answer with
// the bytes that came back and the account of both directions: the
// requests as that run read them, the responses as it wrote them.

import type { CacheDeclared } from "../policies/cache.js";
import { setImmediate as nextTurn } from "node:timers/promises";
import { json } from "../representation/json.js";
import { chooseFormat } from "../representation/negotiate.js";
import type { RequestHead } from "../http/message/request.js";
import type { Admission, Handler, Service } from "../http/connection/service.js";
import { mediaType } from "../http/message/media.js";
import type { ParserLimits } from "../http/parse/parser.js";
import { fail, problem } from "../http/message/problem.js";
import { headerValue, type Request } from "../http/message/request.js";
import type { Route } from "../router/route.js";
import { PAST_LIMIT_SHOWN, type RequestAccount } from "./requests.js";
import { createBudget, fitText, left, sizeText, type Budget } from "./budget.js";
import { utf8 } from "./parts.js";
import { accountOfResponses } from "./responses.js";
import { runRequests, type Run } from "./run.js";
import { wireViewSchema } from "./schema.js";

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
/** Bytes of JSON one answer may hold: both directions, every part, `raw`. */
export const WIRE_OUTPUT_BUDGET = 4 * 1024 * 1024;
/**
 * Parts one answer may hold: more than anyone reads, few enough that making
 * them (and the page's table rows) takes milliseconds, not the second that a
 * megabyte of one-byte chunks (half a million parts) would.
 */
export const WIRE_MAX_PARTS = 4096;
/** The account of the requests stops at half the bytes and 3/4 of the parts, so the responses always have room. */
const REQUEST_SHARE = 0.5;
const REQUEST_PART_SHARE = 0.75;
/** An answer's budget, its ceilings set for the account of the requests, which comes first. */
export function requestBudget(): Budget {
  const budget = createBudget(WIRE_OUTPUT_BUDGET, WIRE_MAX_PARTS);
  budget.ceiling = Math.floor(budget.limit * REQUEST_SHARE);
  budget.partCeiling = Math.floor(budget.partLimit * REQUEST_PART_SHARE);
  return budget;
}

/** Kept free for what is written last: `cut`, the protocol error, the wrapping objects. */
const RESERVE = 4 * 1024;
/**
 * Output kept of one run. The output is shown twice (raw, and in the parts),
 * so half of the answer is all worth keeping; what the account of the
 * requests takes (at most REQUEST_SHARE) is known only once they are read,
 * and the parts and raw made afterwards fit in what it leaves.
 */
const KEEP_BYTES = Math.floor((WIRE_OUTPUT_BUDGET - RESERVE) / 2);

export interface WireOptions {
  /** The application's own handler, the one sockets are served by. */
  readonly handler: Handler;
  /** Its judge of heads, so that a request refused from its head on a socket is refused here too. */
  readonly admit?: (head: RequestHead) => Admission;
  readonly limits: ParserLimits;
  /** A handler failed while serving a request of the wire view (the client got a 500). */
  readonly onHandlerError?: (error: unknown) => void;
}

const EXAMPLE = "GET /api/v2/status HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nAccept: application/json\r\n\r\n";

/** Why the wire view takes message/http and not text/plain; said in every 415 it gives. */
const TEXT_PLAIN_REFUSED =
  "Any web page can send text/plain (a form, or fetch() in no-cors mode) without a CORS preflight, so accepting it would let a page of " +
  "another site run requests (DELETE, PATCH, UPDATE...) against this server through a visitor's browser (cross-site request forgery).";

function requireType(request: Request): void {
  const raw = headerValue(request, "content-type");
  const type = mediaType(raw);
  if (type === WIRE_TYPE) return;
  const said =
    raw === undefined
      ? "The request has no Content-Type."
      : type === "text/plain"
        ? `Content-Type text/plain is refused here. ${TEXT_PLAIN_REFUSED}`
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

/**
 * What the answer leaves out, said once at the top; null when nothing is.
 * `pastLimit`: where the request past MAX_WIRE_REQUESTS begins, and the
 * bytes the unread part leaves out past its first PAST_LIMIT_SHOWN (null
 * when there is none); the requests before it are shown as any others.
 */
function cutSummary(budget: Budget, notRun: readonly number[], requests: number, rawBytesNotShown: number, pastLimit: Run["pastLimit"]) {
  const budgetCut = notRun.length > 0 || budget.requestBytesNotShown > 0 || budget.responseBytesNotShown > 0 || rawBytesNotShown > 0;
  if (!budgetCut && pastLimit === null) return null;
  // The budget's count, and the bytes past the limit that the unread part leaves out whatever the budget.
  const requestBytesNotShown = budget.requestBytesNotShown + (pastLimit?.notShown ?? 0);
  // Not locale-dependent: the same digits whatever the server's environment says.
  const bytes = (n: number) => String(n).replace(/\B(?=(\d{3})+$)/g, ",");
  const sentences: string[] = [];
  if (pastLimit !== null) {
    sentences.push(
      `The body holds more than ${MAX_WIRE_REQUESTS} requests, and the wire view runs at most ${MAX_WIRE_REQUESTS} of one body: ` +
        `it stopped at the head of request ${MAX_WIRE_REQUESTS + 1} (byte ${bytes(pastLimit.start)}), and neither that request nor anything after it was run ` +
        `(their bytes are request.unread, which shows at most the first ${sizeText(PAST_LIMIT_SHOWN)} of them); send them in another body.`,
    );
  }
  if (budgetCut) {
    sentences.push(`The wire view's output budget is ${sizeText(budget.limit)} of answer, in at most ${budget.partLimit} parts.`);
    if (notRun.length > 0) {
      sentences.push(`${notRun.length} of the ${requests} requests were not run (${notRun.join(", ")}, counted from 0): the budget was spent before their turn; send them on their own.`);
    }
    sentences.push(
      `Not shown: ${bytes(requestBytesNotShown)} bytes of the requests and ${bytes(budget.responseBytesNotShown)} bytes of the responses (the parts with "omitted"), ${bytes(rawBytesNotShown)} bytes of raw.`,
    );
  }
  return {
    budget: budget.limit,
    detail: sentences.join(" "),
    requestsNotRun: notRun,
    pastRequestLimit: pastLimit === null ? null : pastLimit.start,
    requestBytesNotShown,
    responseBytesNotShown: budget.responseBytesNotShown,
    rawBytesNotShown,
  };
}

const NOT_RUN = `Not run: the wire view's output budget (${sizeText(WIRE_OUTPUT_BUDGET)} of answer) was spent before this request's turn; send it on its own to see its answer`;

export function wireRoute(options: WireOptions): Route & CacheDeclared {
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
  // The nested request above is the handler's to refuse; every other head is judged as on a socket.
  const admit = options.admit === undefined ? undefined : (head: RequestHead) => (head.path === WIRE_PATH ? undefined : options.admit!(head));
  const service: Service = admit === undefined ? { handle: inner } : { handle: inner, admit };

  return {
    method: "POST",
    path: WIRE_PATH,
    // The answer describes one run of the bytes sent: no cache keeps it (the cache policy).
    cache: "no-store",
    summary: "The wire view: run a raw HTTP/1.1 request through the server's parser, router and handlers, and see every part of both messages with byte offsets",
    request: {
      description:
        "The exact bytes of one or more HTTP/1.1 requests (CR LF line endings), as a client would write them on a connection, " +
        `as ${WIRE_TYPE} only (text/plain is refused: a page of another site could send it without a CORS preflight). ` +
        `At most ${MAX_WIRE_REQUESTS} requests are run: the run stops at the head of request ${MAX_WIRE_REQUESTS + 1}, and neither it nor what follows runs ` +
        "(their bytes are `request.unread`, and `cut.pastRequestLimit` says where they begin); the requests before it are answered as usual. " +
        `Requests to ${WIRE_PATH} itself are refused. The answer holds at most ${sizeText(WIRE_OUTPUT_BUDGET)}: ` +
        "past that, text is left out (parts say how much), and requests whose turn comes after it are not run (`cut` lists them).",
      mediaTypes: [WIRE_TYPE],
      why: TEXT_PLAIN_REFUSED,
      schema: { type: "string", minLength: 1 },
      example: EXAMPLE,
    },
    responses: {
      200: {
        description:
          `The requests ran (whatever they answered, malformed bytes included; at most ${MAX_WIRE_REQUESTS} of them, the bytes after those shown as not run): ` +
          `the response bytes, and the account of every part, within ${sizeText(WIRE_OUTPUT_BUDGET)}`,
        mediaTypes: ["application/json"],
        schema: wireViewSchema,
      },
      400: { description: "The body is empty" },
      403: { description: "Sent from a page of another origin (Sec-Fetch-Site other than same-origin, or an Origin that is not this server's)" },
      406: { description: "Accept rules out JSON" },
      415: { description: `The body is not ${WIRE_TYPE} (text/plain included: a cross-site page could send it without a preflight)`, headers: { "Accept-Post": WIRE_TYPE } },
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
      const budget = requestBudget();
      // One run: the connection reads the bytes, runs each request as it reads it, and the account grows as it goes.
      // The run stops at the head of a request past the limit (a megabyte of tiny requests costs no account beyond it,
      // and no read past the one that holds that head).
      const run = await runRequests(input, {
        service,
        limits: options.limits,
        budget,
        maxRequests: MAX_WIRE_REQUESTS,
        keepBytes: KEEP_BYTES,
        // The bytes are this client's: a handler that names its peer (the lab's ip) names it here as on a socket.
        peer: request.peer,
        ...(options.onHandlerError === undefined ? {} : { onHandlerError: options.onHandlerError }),
      });
      // Past the limit, the requests that ran are answered as any others (what they did, a POST that published, is
      // shown), and the bytes from the head past them are the account's `unread`, which `cut` points to.
      const { requests: account, result, pastLimit } = run;
      budget.ceiling = budget.limit - RESERVE;
      budget.partCeiling = budget.partLimit;
      // Each large step on its own turn of the event loop, so other connections are served in between.
      await nextTurn();
      const responses = accountOfResponses(result.output, account.requests, budget, result.written);
      await nextTurn();
      const raw = fitText(result.output, 0, result.output.length, left(budget), utf8, true);
      budget.spent += raw.cost;
      await nextTurn();
      // Requests the parser accepted but that got no response: their turn came after the output was full.
      const ran = result.exchanges.length;
      const notRun: number[] = [];
      const requests: RequestAccount[] = account.requests.map((r, i) => {
        if (i < ran || r.state === "incomplete") return r;
        notRun.push(i);
        return { ...r, notRun: NOT_RUN };
      });
      const cut = cutSummary(budget, notRun, account.requests.length, result.written - raw.shown, pastLimit);
      return json(200, { request: { ...account, requests }, response: { bytes: result.written, raw: raw.text, responses }, cut });
    },
  };
}
