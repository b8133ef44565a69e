// The lab's table: httpbin's toolbox under /api/lab/, with httpbin's names,
// every resource answering any method token (docs/lab.md). Each is bounded,
// and refuses a bad parameter with a 400 that names it and its range.

import { ANY_METHOD, type Params, type RouteParamDoc, type RouteResponseDoc } from "../../router/route.js";
import { apiRoute, type ApiRoute } from "../route.js";
import { echoSchema } from "../echo.js";
import { bytesAnswer, MAX_BYTES, MAX_LINES, NDJSON, streamAnswer } from "./bodies.js";
import { cacheAnswer, cacheForAnswer, etagAnswer, MAX_AGE_SECONDS } from "./caching.js";
import { codedAnswer, LAB_CODINGS, type LabCoding } from "./encodings.js";
import { ANYTHING_KEYS, BODY_KEYS, GET_KEYS, headersAnswer, inspectAnswer, ipAnswer, userAgentAnswer, uuidAnswer } from "./inspect.js";
import { CHAIN_END, MAX_REDIRECTS, redirectChain, redirectTo, STATUS_TAKEN, URL_ALLOWED, type ChainKind } from "./redirects.js";
import { MAX_FIELDS, responseHeadersAnswer } from "./response-headers.js";
import type { Scheme } from "./origin.js";
import { CODES_ALLOWED, STATUS_ALLOWED, statusAnswer } from "./status.js";
import { delayAnswer, dripAnswer, MAX_DELAY_SECONDS, MAX_DRIP_BYTES, MAX_DRIP_SECONDS } from "./time.js";

const INVALID: RouteResponseDoc = { description: "A parameter is malformed or out of range: the problem's `parameter` names it and `allowed` says what it takes" };
const NO_STORE = { "Cache-Control": "no-store" };
const ECHO_JSON: RouteResponseDoc = { description: "The echo of the request (as /api/echo gives it)", mediaTypes: ["application/json"], schema: echoSchema, headers: NO_STORE };

const whole = (description: string, min: number, max: number, example: string): RouteParamDoc => ({ description, schema: { type: "integer", minimum: min, maximum: max }, example });
const secs = (description: string, max: number, example: string): RouteParamDoc => ({ description, schema: { type: "number", minimum: 0, maximum: max }, example });

/** Every lab resource may be read from any origin, without credentials (policies/cors.ts). */
function labRow<const P extends string>(spec: Parameters<typeof apiRoute<P>>[0]): ApiRoute {
  return apiRoute({ cors: "anonymous", cache: "no-store", ...spec });
}

const CHAINS: readonly (readonly [ChainKind, string])[] = [
  ["redirect", `A chain of n 302 redirects (n at most ${MAX_REDIRECTS}) that ends at ${CHAIN_END}; ?absolute=true for absolute URLs`],
  ["relative-redirect", `A chain of n 302 redirects (n at most ${MAX_REDIRECTS}) with relative Locations, ending at ${CHAIN_END}`],
  ["absolute-redirect", `A chain of n 302 redirects (n at most ${MAX_REDIRECTS}) with absolute Locations, ending at ${CHAIN_END}`],
];

/** httpbin's dict of the request (request-dict.ts), as the OpenAPI document describes it. */
const DICT_SCHEMA = {
  type: "object",
  properties: {
    args: { type: "object", description: "The query: each name's value, or a list of them when it came more than once" },
    data: { type: "string", description: "The body as text; a data: URL of its base64 when it is not UTF-8; empty for a form body" },
    files: { type: "object", description: "multipart/form-data parts with a filename: their content" },
    form: { type: "object", description: "The fields of a form body (urlencoded or multipart)" },
    headers: { type: "object", description: "The header fields, names in Title-Case, repeats joined with a comma" },
    json: { description: "The body parsed as JSON, or null" },
    method: { type: "string" },
    origin: { type: "string", description: "X-Forwarded-For when sent, else the client's address" },
    url: { type: "string", description: "The request's URL, absolute" },
  },
} as const;
const DICT: RouteResponseDoc = { description: "The request as httpbin shows it", mediaTypes: ["application/json"], schema: DICT_SCHEMA, headers: NO_STORE };
const JSON_NO_STORE = (description: string): RouteResponseDoc => ({ description, mediaTypes: ["application/json"], headers: NO_STORE });

/** httpbin's method-named resources: each answers its own method only (GET also HEAD), others 405 with Allow. */
const METHOD_NAMED = ["get", "post", "put", "patch", "delete"] as const;

export function labRoutes(scheme: Scheme): ApiRoute[] {
  const rows: ApiRoute[] = [
    labRow({
      method: ANY_METHOD,
      path: "/api/lab/anything",
      summary: "Any method token (PURGE, UPDATE, QUERY with a body...): the request as httpbin shows it, args, data, files, form, headers, json, method, origin, url",
      handler: (request) => inspectAnswer(request, scheme, ANYTHING_KEYS),
      responses: { 200: DICT },
    }),
    labRow({
      method: ANY_METHOD,
      path: "/api/lab/anything/*rest",
      summary: "The same, at any path below /api/lab/anything",
      handler: (request) => inspectAnswer(request, scheme, ANYTHING_KEYS),
      params: { rest: { description: "Anything: one or more path segments, as sent", example: "any/path" } },
      responses: { 200: DICT },
    }),
    ...METHOD_NAMED.map((name) =>
      labRow({
        method: name.toUpperCase(),
        path: `/api/lab/${name}`,
        summary: `${name.toUpperCase()} only, as httpbin's /${name}: the request's ${name === "get" ? "args, headers, origin and url" : "args, data, files, form, headers, json, origin and url"}`,
        handler: (request) => inspectAnswer(request, scheme, name === "get" ? GET_KEYS : BODY_KEYS),
        responses: { 200: DICT },
      }),
    ),
    labRow({ method: ANY_METHOD, path: "/api/lab/headers", summary: "The request's header fields, as httpbin shows them: {\"headers\": {...}}", handler: headersAnswer, responses: { 200: JSON_NO_STORE("{\"headers\": {Name: value}}, names in Title-Case") } }),
    labRow({ method: ANY_METHOD, path: "/api/lab/ip", summary: "The client's address: {\"origin\": ...}", handler: ipAnswer, responses: { 200: JSON_NO_STORE("{\"origin\": X-Forwarded-For when sent, else the client's address}") } }),
    labRow({ method: ANY_METHOD, path: "/api/lab/user-agent", summary: "The request's User-Agent: {\"user-agent\": ...}", handler: userAgentAnswer, responses: { 200: JSON_NO_STORE("{\"user-agent\": the field's value, or null}") } }),
    labRow({ method: ANY_METHOD, path: "/api/lab/uuid", summary: "A fresh version 4 UUID: {\"uuid\": ...}", handler: () => uuidAnswer(), responses: { 200: JSON_NO_STORE("{\"uuid\": a random (version 4) UUID}") } }),
    labRow({
      method: ANY_METHOD,
      path: "/api/lab/status/:codes",
      summary: "Any final status, 200 to 599, with the framing and fields it calls for (Location, WWW-Authenticate, Allow, Retry-After...); several codes, optionally weighted, for one of them at random",
      handler: (request, p) => statusAnswer(request, p.codes),
      params: { codes: { description: `The status to answer with: ${STATUS_ALLOWED}; or ${CODES_ALLOWED}. A 1xx is refused: it is interim, never a final answer`, example: "418" } },
      responses: {
        200: { description: "2xx and 3xx: a small JSON body naming the status (none for 204, 205 and 304); 3xx carry Location: /api/lab/redirect/1, 206 Content-Range", mediaTypes: ["application/json"], headers: { Location: "3xx (not 304): /api/lab/redirect/1, which leads to /api/lab/get", "Content-Range": "206: the part sent" } },
        400: { description: "A code is not a final status (a 1xx, 426, or not 200 to 599), or the list or a weight is malformed: the problem says why" },
        418: { description: "4xx and 5xx: a problem+json body saying it was asked for, with WWW-Authenticate on 401, Allow on 405, Proxy-Authenticate on 407, Retry-After on 429 and 503" },
      },
    }),
    ...CHAINS.map(([kind, summary]) =>
      labRow({
        method: ANY_METHOD,
        path: `/api/lab/${kind}/:n`,
        summary,
        handler: (request, p: Params) => redirectChain(request, scheme, kind, p.n!),
        params: { n: whole(`How many redirects: 1 to ${MAX_REDIRECTS}`, 1, MAX_REDIRECTS, "3") },
        ...(kind === "redirect" ? { query: { absolute: { description: "true: absolute URLs (http://host/...), as absolute-redirect gives; else paths", schema: { type: "string", enum: ["true", "false"] }, example: "true" } } } : {}),
        responses: { 302: { description: `Found: Location is the next step, or ${CHAIN_END} for the last`, headers: { Location: "The next step of the chain" } }, 400: INVALID },
      }),
    ),
    labRow({
      method: ANY_METHOD,
      path: "/api/lab/redirect-to",
      summary: "One redirect of any 3xx status to a URL on this server's origin (a path, a relative reference, or an absolute URL with this scheme and host): never to another site",
      handler: (request) => redirectTo(request, scheme),
      query: {
        url: { description: `Where to (from the query, or from a form body): ${URL_ALLOWED}`, example: "/api/lab/anything", required: true },
        status_code: { description: `The redirect's status: ${STATUS_TAKEN} (default 302). 301, 302 and 303 let a client turn POST into GET; 307 and 308 keep the method and body`, schema: { type: "integer", minimum: 300, maximum: 399 }, example: "307" },
      },
      responses: { 302: { description: "The redirect asked for (300 to 399)", headers: { Location: "url, as given" } }, 400: { description: "url is missing or leads off this server's origin, or status_code is not 300 to 399: the problem names which and why" } },
    }),
    labRow({
      method: ANY_METHOD,
      path: "/api/lab/delay/:seconds",
      summary: `The echo, after a wait of up to ${MAX_DELAY_SECONDS} seconds (decimals allowed)`,
      handler: (request, p) => delayAnswer(request, p.seconds),
      params: { seconds: secs(`How long to wait: 0 to ${MAX_DELAY_SECONDS}, e.g. 1.5`, MAX_DELAY_SECONDS, "1.5") },
      responses: { 200: { description: "After the wait: the seconds waited and the echo of the request", mediaTypes: ["application/json"], headers: NO_STORE }, 400: INVALID },
    }),
    labRow({
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
    }),
    labRow({
      method: ANY_METHOD,
      path: "/api/lab/bytes/:n",
      summary: "n random bytes (at most 1 MiB); the same ones again for the same ?seed=",
      handler: (request, p) => bytesAnswer(request, p.n),
      params: { n: whole(`How many bytes: 0 to ${MAX_BYTES}`, 0, MAX_BYTES, "16") },
      query: { seed: { description: "0 to 4294967295: the bytes are then a function of seed and n (not for secrets)", schema: { type: "integer", minimum: 0, maximum: 4294967295 }, example: "42" } },
      responses: { 200: { description: "The bytes, with Content-Length", mediaTypes: ["application/octet-stream"], headers: NO_STORE }, 400: INVALID },
    }),
    labRow({
      method: ANY_METHOD,
      path: "/api/lab/stream/:n",
      summary: `n lines of JSON (at most ${MAX_LINES}), each sent as the client takes the last, chunked`,
      handler: (request, p) => streamAnswer(request, p.n),
      params: { n: whole(`How many lines: 1 to ${MAX_LINES}`, 1, MAX_LINES, "5") },
      responses: { 200: { description: "One JSON object per line: `id` (0, 1, ...) and the echo of the request, without its body", mediaTypes: [NDJSON], headers: NO_STORE }, 400: INVALID },
    }),
    labRow({
      method: ANY_METHOD,
      path: "/api/lab/cache",
      summary: "A fixed representation that answers 304 to an If-None-Match or If-Modified-Since it can validate",
      cache: "no-cache",
      handler: (request) => cacheAnswer(request),
      responses: {
        200: { description: "The representation, with ETag, Last-Modified and Cache-Control: no-cache", mediaTypes: ["application/json"], headers: { ETag: "Strong: send it back in If-None-Match", "Last-Modified": "When the server started" } },
        304: { description: "GET or HEAD whose If-None-Match matches, or (without If-None-Match) whose If-Modified-Since is not before Last-Modified", headers: { ETag: "As the 200", "Last-Modified": "As the 200" } },
      },
    }),
    labRow({
      method: ANY_METHOD,
      path: "/api/lab/cache/:seconds",
      summary: "The echo, fresh for n seconds: Cache-Control: public, max-age=n",
      // Caching is this resource's subject: its freshness is the path's (checked by the handler, which refuses a bad one).
      cache: { scope: "public", maxAgeParam: "seconds" },
      handler: (request, p) => cacheForAnswer(request, p.seconds),
      params: { seconds: whole(`max-age: 0 to ${MAX_AGE_SECONDS}`, 0, MAX_AGE_SECONDS, "60") },
      responses: { 200: { ...ECHO_JSON, headers: { Vary: "Authorization, Cookie: the echo shows them, so a shared cache reuses it only for the same credentials" } }, 400: INVALID },
    }),
    labRow({
      method: ANY_METHOD,
      path: "/api/lab/etag/:tag",
      summary: 'A representation whose ETag is "tag", honouring If-None-Match (304) and If-Match (412)',
      cache: "no-cache",
      handler: (request, p) => etagAnswer(request, p.tag),
      params: { tag: { description: "The opaque tag: 1 to 256 visible ASCII characters, no double quote", example: "v1" } },
      responses: {
        200: { description: "The tag, as JSON", mediaTypes: ["application/json"], headers: { ETag: '"<tag>"' } },
        304: { description: "GET or HEAD with an If-None-Match that matches", headers: { ETag: '"<tag>"' } },
        400: INVALID,
        412: { description: "If-Match does not match, or If-None-Match matches on a method other than GET and HEAD" },
      },
    }),
    labRow({
      method: ANY_METHOD,
      path: "/api/lab/response-headers",
      summary: "Each query pair Name=value becomes a header field of the answer, checked: header injection stays impossible",
      handler: (request) => responseHeadersAnswer(request, scheme),
      // The client chooses Content-Type, and the body holds its values: whatever document it makes runs no script here.
      sandbox: [],
      // Cache-Control is one of the fields the client may choose (no-store unless it does).
      cache: "as-answered",
      query: { "X-Lab": { description: `Any field name (a token), any number of them up to ${MAX_FIELDS}; a value with CR, LF, NUL or another control byte is refused, and so are the fields that frame or manage the message (Content-Length, Transfer-Encoding, Trailer, Connection, Keep-Alive, Upgrade, Date), Content-Security-Policy, which the server sets, the fields that act on the whole origin (Refresh, Strict-Transport-Security, Clear-Site-Data, Alt-Svc, NEL, Report-To, Accept-CH, Critical-CH, Service-Worker-Allowed, Link), the CORS fields, a Set-Cookie without Path=/api/lab/... or with Domain, and a Location off this origin`, example: "hello" } },
      responses: { 200: { description: "The fields asked for, and the pairs as a JSON object; always with Content-Security-Policy: sandbox, so a page made with Content-Type: text/html runs no script as this origin", mediaTypes: ["application/json"], headers: { "Content-Security-Policy": "sandbox" } }, 400: { description: "A name that is not a token, a value with a forbidden byte (named), a field the server keeps to itself or that acts on the whole origin (and why), a Set-Cookie that would reach past /api/lab/, a Location off this origin, or a name given twice" } },
    }),
  ];
  for (const name of Object.keys(LAB_CODINGS) as LabCoding[]) {
    rows.push(labRow({
      method: ANY_METHOD,
      path: `/api/lab/${name}`,
      summary: `The echo, coded with ${LAB_CODINGS[name].token} whatever Accept-Encoding says (Content-Encoding: ${LAB_CODINGS[name].token})`,
      handler: (request) => codedAnswer(request, name),
      responses: { 200: { description: `JSON as httpbin's (${LAB_CODINGS[name].flag}: true, headers, method, origin), coded with ${LAB_CODINGS[name].token}`, mediaTypes: ["application/json"], headers: { "Content-Encoding": LAB_CODINGS[name].token, ...NO_STORE } } },
    }));
  }
  return rows;
}
