// The lab's table: httpbin's toolbox under /api/lab/, with httpbin's names,
// every resource answering any method token (docs/lab.md). Each is bounded,
// and refuses a bad parameter with a 400 that names it and its range.

import { ANY_METHOD, route, type Route, type RouteParamDoc, type RouteResponseDoc } from "../../router/route.js";
import { echoSchema } from "../echo.js";
import { bytesAnswer, MAX_BYTES, MAX_LINES, NDJSON, streamAnswer } from "./bodies.js";
import { cacheAnswer, cacheForAnswer, etagAnswer, MAX_AGE_SECONDS } from "./caching.js";
import { codedAnswer, LAB_CODINGS, type LabCoding } from "./encodings.js";
import { MAX_REDIRECTS, redirectChain, redirectTo, REDIRECT_STATUSES } from "./redirects.js";
import { MAX_FIELDS, responseHeadersAnswer } from "./response-headers.js";
import type { Scheme } from "./origin.js";
import { STATUS_ALLOWED, statusAnswer } from "./status.js";
import { delayAnswer, dripAnswer, MAX_DELAY_SECONDS, MAX_DRIP_BYTES, MAX_DRIP_SECONDS } from "./time.js";

const INVALID: RouteResponseDoc = { description: "A parameter is malformed or out of range: the problem's `parameter` names it and `allowed` says what it takes" };
const NO_STORE = { "Cache-Control": "no-store" };
const ECHO_JSON: RouteResponseDoc = { description: "The echo of the request (as /api/echo gives it)", mediaTypes: ["application/json"], schema: echoSchema, headers: NO_STORE };

const whole = (description: string, min: number, max: number, example: string): RouteParamDoc => ({ description, schema: { type: "integer", minimum: min, maximum: max }, example });
const secs = (description: string, max: number, example: string): RouteParamDoc => ({ description, schema: { type: "number", minimum: 0, maximum: max }, example });

export function labRoutes(scheme: Scheme): Route[] {
  const rows: Route[] = [
    route({
      method: ANY_METHOD,
      path: "/api/lab/status/:code",
      summary: "Any final status, 200 to 599, with the framing and fields it calls for (Location, WWW-Authenticate, Allow, Retry-After...)",
      handler: (request, p) => statusAnswer(request, p.code),
      params: { code: { description: `The status to answer with: ${STATUS_ALLOWED}. A 1xx is refused: it is interim, never a final answer`, schema: { type: "integer", minimum: 200, maximum: 599 }, example: "418" } },
      responses: {
        200: { description: "2xx and 3xx: a small JSON body naming the status (none for 204, 205 and 304); 3xx carry Location: /api/echo, 206 Content-Range", mediaTypes: ["application/json"], headers: { Location: "3xx (not 304): /api/echo", "Content-Range": "206: the part sent" } },
        400: { description: "code is not a final status (a 1xx, 426, or not 200 to 599): the problem says why" },
        418: { description: "4xx and 5xx: a problem+json body saying it was asked for, with WWW-Authenticate on 401, Allow on 405, Proxy-Authenticate on 407, Retry-After on 429 and 503" },
      },
    }),
    route({
      method: ANY_METHOD,
      path: "/api/lab/redirect/:n",
      summary: `A chain of n 302 redirects (n at most ${MAX_REDIRECTS}) that ends at the echo`,
      handler: (request, p) => redirectChain(request, p.n),
      params: { n: whole(`How many redirects: 1 to ${MAX_REDIRECTS}`, 1, MAX_REDIRECTS, "3") },
      responses: { 302: { description: "Found: Location is /api/lab/redirect/<n-1>, or /api/echo for the last", headers: { Location: "The next step of the chain" } }, 400: INVALID },
    }),
    route({
      method: ANY_METHOD,
      path: "/api/lab/redirect-to",
      summary: `One redirect (${REDIRECT_STATUSES.join(", ")}) to a path on this server: never to another site`,
      handler: (request) => redirectTo(request),
      query: {
        url: { description: "Where to: a path on this server (starts with one /; no //, \\, scheme, space or control byte)", example: "/api/echo", required: true },
        status_code: { description: `The redirect's status: ${REDIRECT_STATUSES.join(", ")} (default 302). 301, 302 and 303 let a client turn POST into GET; 307 and 308 keep the method and body`, schema: { type: "integer", enum: [...REDIRECT_STATUSES] }, example: "307" },
      },
      responses: { 302: { description: "The redirect asked for (301, 302, 303, 307 or 308)", headers: { Location: "url, as given" } }, 400: { description: "url is missing or is not a path on this server, or status_code is not a redirect: the problem names which" } },
    }),
    route({
      method: ANY_METHOD,
      path: "/api/lab/delay/:seconds",
      summary: `The echo, after a wait of up to ${MAX_DELAY_SECONDS} seconds (decimals allowed)`,
      handler: (request, p) => delayAnswer(request, p.seconds),
      params: { seconds: secs(`How long to wait: 0 to ${MAX_DELAY_SECONDS}, e.g. 1.5`, MAX_DELAY_SECONDS, "1.5") },
      responses: { 200: { description: "After the wait: the seconds waited and the echo of the request", mediaTypes: ["application/json"], headers: NO_STORE }, 400: INVALID },
    }),
    {
      method: ANY_METHOD,
      path: "/api/lab/drip",
      summary: `numbytes asterisks sent in pieces spread over duration seconds, chunked, under back-pressure (at most 1 MiB and ${MAX_DRIP_SECONDS} s)`,
      handler: (request) => dripAnswer(request),
      query: {
        numbytes: { description: `Bytes to send: 1 to ${MAX_DRIP_BYTES} (default 10)`, schema: { type: "integer", minimum: 1, maximum: MAX_DRIP_BYTES }, example: "10" },
        duration: { description: `Seconds to spread them over: 0 to ${MAX_DRIP_SECONDS} (default 2)`, schema: { type: "number", minimum: 0, maximum: MAX_DRIP_SECONDS }, example: "2" },
        delay: { description: `Seconds before the status line: 0 to ${MAX_DRIP_SECONDS}, with duration at most ${MAX_DRIP_SECONDS} in all (default 0)`, schema: { type: "number", minimum: 0, maximum: MAX_DRIP_SECONDS }, example: "0" },
        code: { description: "The status: 200 to 599, one that carries a body (default 200)", schema: { type: "integer", minimum: 200, maximum: 599 }, example: "200" },
      },
      responses: { 200: { description: "The bytes, in pieces at least 10 ms apart, with chunked framing (HTTP/1.0: until the connection closes)", mediaTypes: ["application/octet-stream"], headers: NO_STORE }, 400: INVALID },
    },
    route({
      method: ANY_METHOD,
      path: "/api/lab/bytes/:n",
      summary: "n random bytes (at most 1 MiB); the same ones again for the same ?seed=",
      handler: (request, p) => bytesAnswer(request, p.n),
      params: { n: whole(`How many bytes: 0 to ${MAX_BYTES}`, 0, MAX_BYTES, "16") },
      query: { seed: { description: "0 to 4294967295: the bytes are then a function of seed and n (not for secrets)", schema: { type: "integer", minimum: 0, maximum: 4294967295 }, example: "42" } },
      responses: { 200: { description: "The bytes, with Content-Length", mediaTypes: ["application/octet-stream"], headers: NO_STORE }, 400: INVALID },
    }),
    route({
      method: ANY_METHOD,
      path: "/api/lab/stream/:n",
      summary: `n lines of JSON (at most ${MAX_LINES}), each sent as the client takes the last, chunked`,
      handler: (request, p) => streamAnswer(request, p.n),
      params: { n: whole(`How many lines: 1 to ${MAX_LINES}`, 1, MAX_LINES, "5") },
      responses: { 200: { description: "One JSON object per line: `id` (0, 1, ...) and the echo of the request, without its body", mediaTypes: [NDJSON], headers: NO_STORE }, 400: INVALID },
    }),
    {
      method: ANY_METHOD,
      path: "/api/lab/cache",
      summary: "A fixed representation that answers 304 to an If-None-Match or If-Modified-Since it can validate",
      handler: (request) => cacheAnswer(request),
      responses: {
        200: { description: "The representation, with ETag, Last-Modified and Cache-Control: no-cache", mediaTypes: ["application/json"], headers: { ETag: "Strong: send it back in If-None-Match", "Last-Modified": "When the server started", "Cache-Control": "no-cache" } },
        304: { description: "GET or HEAD whose If-None-Match matches, or (without If-None-Match) whose If-Modified-Since is not before Last-Modified", headers: { ETag: "As the 200", "Last-Modified": "As the 200" } },
      },
    },
    route({
      method: ANY_METHOD,
      path: "/api/lab/cache/:seconds",
      summary: "The echo, fresh for n seconds: Cache-Control: public, max-age=n",
      handler: (request, p) => cacheForAnswer(request, p.seconds),
      params: { seconds: whole(`max-age: 0 to ${MAX_AGE_SECONDS}`, 0, MAX_AGE_SECONDS, "60") },
      responses: { 200: { ...ECHO_JSON, headers: { "Cache-Control": "public, max-age=<seconds>", Vary: "Authorization, Cookie: the echo shows them, so a shared cache reuses it only for the same credentials" } }, 400: INVALID },
    }),
    route({
      method: ANY_METHOD,
      path: "/api/lab/etag/:tag",
      summary: 'A representation whose ETag is "tag", honouring If-None-Match (304) and If-Match (412)',
      handler: (request, p) => etagAnswer(request, p.tag),
      params: { tag: { description: "The opaque tag: 1 to 256 visible ASCII characters, no double quote", example: "v1" } },
      responses: {
        200: { description: "The tag, as JSON", mediaTypes: ["application/json"], headers: { ETag: '"<tag>"' } },
        304: { description: "GET or HEAD with an If-None-Match that matches", headers: { ETag: '"<tag>"' } },
        400: INVALID,
        412: { description: "If-Match does not match, or If-None-Match matches on a method other than GET and HEAD" },
      },
    }),
    {
      method: ANY_METHOD,
      path: "/api/lab/response-headers",
      summary: "Each query pair Name=value becomes a header field of the answer, checked: header injection stays impossible",
      handler: (request) => responseHeadersAnswer(request, scheme),
      query: { "X-Lab": { description: `Any field name (a token), any number of them up to ${MAX_FIELDS}; a value with CR, LF, NUL or another control byte is refused, and so are the fields that frame or manage the message (Content-Length, Transfer-Encoding, Trailer, Connection, Keep-Alive, Upgrade, Date), Content-Security-Policy, which the server sets, the fields that act on the whole origin (Refresh, Strict-Transport-Security, Clear-Site-Data, Alt-Svc, NEL, Report-To, Accept-CH, Critical-CH, Service-Worker-Allowed, Link), the CORS fields, a Set-Cookie without Path=/api/lab/... or with Domain, and a Location off this origin`, example: "hello" } },
      responses: { 200: { description: "The fields asked for, and the pairs as a JSON object; always with Content-Security-Policy: sandbox, so a page made with Content-Type: text/html runs no script as this origin", mediaTypes: ["application/json"], headers: { "Content-Security-Policy": "sandbox" } }, 400: { description: "A name that is not a token, a value with a forbidden byte (named), a field the server keeps to itself or that acts on the whole origin (and why), a Set-Cookie that would reach past /api/lab/, a Location off this origin, or a name given twice" } },
    },
  ];
  for (const name of Object.keys(LAB_CODINGS) as LabCoding[]) {
    rows.push({
      method: ANY_METHOD,
      path: `/api/lab/${name}`,
      summary: `The echo, coded with ${LAB_CODINGS[name].token} whatever Accept-Encoding says (Content-Encoding: ${LAB_CODINGS[name].token})`,
      handler: (request) => codedAnswer(request, name),
      responses: { 200: { description: `JSON (the coding's name and the echo), coded with ${LAB_CODINGS[name].token}`, mediaTypes: ["application/json"], headers: { "Content-Encoding": LAB_CODINGS[name].token, ...NO_STORE } } },
    });
  }
  return rows;
}
