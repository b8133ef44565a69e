// The lab's table: httpbin's toolbox under /api/lab/, with httpbin's names,
// every resource answering any method token (docs/lab.md). Each is bounded,
// and refuses a bad parameter with a 400 that names it and its range.

import { ANY_METHOD, type Params, type RouteParamDoc, type RouteResponseDoc } from "../../router/route.js";
import { apiRoute, type ApiRoute } from "../route.js";
import { echoSchema } from "../echo.js";
import { bytesAnswer, DEFAULT_CHUNK_BYTES, MAX_BYTES, MAX_CHUNK_BYTES, MAX_CHUNKS, MAX_LINES, NDJSON, streamAnswer, streamBytesAnswer } from "./bodies.js";
import { MAX_RANGES, rangeAnswer } from "./ranges.js";
import { jsonAnswer } from "./inspect.js";
import type { Response } from "../../http/message/response.js";
import { cacheAnswer, cacheForAnswer, etagAnswer, MAX_AGE_SECONDS } from "./caching.js";
import { basicAuthAnswer, bearerAnswer } from "./auth.js";
import { cookiesAnswer, deleteCookiesAnswer, MAX_COOKIES, setCookieAnswer, setCookiesAnswer } from "./cookies.js";
import { ALGORITHMS, DIGEST_COOKIE, digestAuthAnswer, MAX_STALE_AFTER, NONCE_SECONDS } from "./digest.js";
import { base64Answer, denyAnswer, formAnswer, htmlAnswer, jsonDocAnswer, linksAnswer, linksStart, MAX_LINKS, robotsAnswer, utf8Answer, xmlAnswer } from "./documents.js";
import { codedAnswer, LAB_CODINGS, type LabCoding } from "./encodings.js";
import { IMAGES, imageAnswer, imageByAccept, type ImageKind } from "./images.js";
import { ANYTHING_KEYS, BODY_KEYS, GET_KEYS, headersAnswer, inspectAnswer, ipAnswer, userAgentAnswer, uuidAnswer } from "./inspect.js";
import { CHAIN_END, MAX_REDIRECTS, redirectChain, redirectTo, STATUS_TAKEN, URL_ALLOWED, type ChainKind } from "./redirects.js";
import { MAX_FIELDS, responseHeadersAnswer } from "./response-headers.js";
import type { Scheme } from "./origin.js";
import { CODES_ALLOWED, STATUS_ALLOWED, statusAnswer } from "./status.js";
import { delayAnswer, dripAnswer, MAX_DELAY_SECONDS, MAX_DRIP_BYTES, MAX_DRIP_SECONDS } from "./time.js";

const INVALID: RouteResponseDoc = { description: "A parameter is malformed or out of range: the problem's `parameter` names it and `allowed` says what it takes" };
const ECHO_JSON: RouteResponseDoc = { description: "The echo of the request (as /api/echo gives it)", mediaTypes: ["application/json"], schema: echoSchema };

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
const DICT: RouteResponseDoc = { description: "The request as httpbin shows it", mediaTypes: ["application/json"], schema: DICT_SCHEMA };
const JSON_DOC = (description: string): RouteResponseDoc => ({ description, mediaTypes: ["application/json"] });

/** httpbin's method-named resources: each answers its own method only (GET also HEAD), others 405 with Allow. */
const METHOD_NAMED = ["get", "post", "put", "patch", "delete"] as const;

export function labRoutes(scheme: Scheme, secret: string): ApiRoute[] {
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
    labRow({ method: ANY_METHOD, path: "/api/lab/headers", summary: "The request's header fields, as httpbin shows them: {\"headers\": {...}}", handler: headersAnswer, responses: { 200: JSON_DOC("{\"headers\": {Name: value}}, names in Title-Case") } }),
    labRow({ method: ANY_METHOD, path: "/api/lab/ip", summary: "The client's address: {\"origin\": ...}", handler: ipAnswer, responses: { 200: JSON_DOC("{\"origin\": X-Forwarded-For when sent, else the client's address}") } }),
    labRow({ method: ANY_METHOD, path: "/api/lab/user-agent", summary: "The request's User-Agent: {\"user-agent\": ...}", handler: userAgentAnswer, responses: { 200: JSON_DOC("{\"user-agent\": the field's value, or null}") } }),
    labRow({ method: ANY_METHOD, path: "/api/lab/uuid", summary: "A fresh version 4 UUID: {\"uuid\": ...}", handler: () => uuidAnswer(), responses: { 200: JSON_DOC("{\"uuid\": a random (version 4) UUID}") } }),
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
      summary: `The request as httpbin shows it, after a wait of up to ${MAX_DELAY_SECONDS} seconds (decimals allowed)`,
      handler: (request, p) => delayAnswer(request, scheme, p.seconds),
      params: { seconds: secs(`How long to wait: 0 to ${MAX_DELAY_SECONDS}, e.g. 1.5`, MAX_DELAY_SECONDS, "1.5") },
      responses: { 200: { ...DICT, description: "After the wait: the request as httpbin shows it (args, data, files, form, headers, origin, url)" }, 400: INVALID },
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
      responses: { 200: { description: "The bytes, in pieces at least 10 ms apart, with chunked framing (HTTP/1.0: until the connection closes)", mediaTypes: ["application/octet-stream"] }, 400: INVALID },
    }),
    labRow({
      method: ANY_METHOD,
      path: "/api/lab/bytes/:n",
      summary: "n random bytes (at most 1 MiB); the same ones again for the same ?seed=",
      handler: (request, p) => bytesAnswer(request, p.n),
      params: { n: whole(`How many bytes: 0 to ${MAX_BYTES}`, 0, MAX_BYTES, "16") },
      query: { seed: { description: "0 to 4294967295: the bytes are then a function of seed and n (not for secrets)", schema: { type: "integer", minimum: 0, maximum: 4294967295 }, example: "42" } },
      responses: { 200: { description: "The bytes, with Content-Length", mediaTypes: ["application/octet-stream"] }, 400: INVALID },
    }),
    labRow({
      method: ANY_METHOD,
      path: "/api/lab/stream/:n",
      summary: `n lines of JSON (at most ${MAX_LINES}), each sent as the client takes the last, chunked`,
      handler: (request, p) => streamAnswer(request, scheme, p.n),
      params: { n: whole(`How many lines: 1 to ${MAX_LINES}`, 1, MAX_LINES, "5") },
      responses: { 200: { description: "One JSON object per line: httpbin's url, args, headers and origin of the request, and `id` (0, 1, ...)", mediaTypes: [NDJSON] }, 400: INVALID },
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
      query: { "X-Lab": { description: `Any field name (a token), any number of them up to ${MAX_FIELDS}; a value with CR, LF, NUL or another control byte is refused, and so are the fields that frame or manage the message (Content-Length, Transfer-Encoding, Trailer, Connection, Keep-Alive, Upgrade, Date), Content-Security-Policy, which the server sets, the fields that act on the whole origin (Refresh, Strict-Transport-Security, Clear-Site-Data, Alt-Svc, NEL, Report-To, Accept-CH, Critical-CH, Service-Worker-Allowed, Link), the CORS fields, a Set-Cookie with Domain or with a Path other than /api/lab or below it, and a Location off this origin`, example: "hello" } },
      responses: { 200: { description: "The fields asked for, and the pairs as a JSON object; always with Content-Security-Policy: sandbox, so a page made with Content-Type: text/html runs no script as this origin", mediaTypes: ["application/json"], headers: { "Content-Security-Policy": "sandbox" } }, 400: { description: "A name that is not a token, a value with a forbidden byte (named), a field the server keeps to itself or that acts on the whole origin (and why), a Set-Cookie that would reach past /api/lab/, a Location off this origin, or a name given twice" } },
    }),
  ];
  const doc = (type: string, description: string): RouteResponseDoc => ({ description, mediaTypes: [type] });
  rows.push(
    labRow({ method: ANY_METHOD, path: "/api/lab/html", summary: "An HTML page (sandboxed: it runs no script as this origin)", handler: htmlAnswer, sandbox: [], responses: { 200: doc("text/html", "A short page about requests and responses") } }),
    labRow({ method: ANY_METHOD, path: "/api/lab/json", summary: "A JSON document: httpbin's slideshow shape", handler: jsonDocAnswer, responses: { 200: doc("application/json", '{"slideshow": {"author", "date", "slides": [...], "title"}}') } }),
    labRow({ method: ANY_METHOD, path: "/api/lab/xml", summary: "An XML document: a slideshow (sandboxed)", handler: xmlAnswer, sandbox: [], responses: { 200: doc("application/xml", "<slideshow> with <slide> and <item> elements") } }),
    labRow({ method: ANY_METHOD, path: "/api/lab/robots.txt", summary: "robots.txt, which disallows /api/lab/deny", handler: robotsAnswer, responses: { 200: doc("text/plain", "User-agent: * / Disallow: /api/lab/deny") } }),
    labRow({ method: ANY_METHOD, path: "/api/lab/deny", summary: "The page robots.txt asks robots not to visit", handler: denyAnswer, responses: { 200: doc("text/plain", "A short text") } }),
    labRow({ method: ANY_METHOD, path: "/api/lab/encoding/utf8", summary: "An HTML page of UTF-8 text, one to four bytes a character (sandboxed)", handler: utf8Answer, sandbox: [], responses: { 200: doc("text/html", "Scripts and symbols in UTF-8, charset=utf-8") } }),
    labRow({
      method: ANY_METHOD,
      path: "/api/lab/base64/:value",
      summary: "The value decoded from base64 (URL-safe or standard alphabet), as UTF-8 text in an HTML answer (sandboxed: markup in it runs no script)",
      handler: (request, p) => base64Answer(request, p.value),
      sandbox: [],
      params: { value: { description: "base64 of UTF-8 text", example: "SFRUUCBpcyBmdW4=" } },
      responses: { 200: doc("text/html", "The decoded text"), 400: { description: "value is not base64, or its bytes are not UTF-8" } },
    }),
    labRow({
      method: ANY_METHOD,
      path: "/api/lab/links/:n",
      summary: `Redirects to the first of n pages of links (n at most ${MAX_LINKS})`,
      handler: (request, p) => linksStart(request, p.n),
      params: { n: whole(`How many pages: 1 to ${MAX_LINKS}`, 1, MAX_LINKS, "10") },
      responses: { 302: { description: "Location: /api/lab/links/<n>/0", headers: { Location: "/api/lab/links/<n>/0" } }, 400: INVALID },
    }),
    labRow({
      method: ANY_METHOD,
      path: "/api/lab/links/:n/:offset",
      summary: "An HTML page of n links to the pages of the same set, page offset as plain text (sandboxed)",
      handler: (request, p) => linksAnswer(request, p.n, p.offset),
      sandbox: [],
      params: { n: whole(`How many pages: 1 to ${MAX_LINKS}`, 1, MAX_LINKS, "10"), offset: whole("This page: 0 to n-1", 0, MAX_LINKS - 1, "0") },
      responses: { 200: doc("text/html", "n links, all under /api/lab/links/"), 400: INVALID },
    }),
    labRow({
      method: ANY_METHOD,
      path: "/api/lab/forms/post",
      summary: "An HTML order form that posts to /api/lab/post (sandboxed, forms allowed: it may submit, it runs no script)",
      handler: formAnswer,
      sandbox: ["allow-forms"],
      responses: { 200: doc("text/html", "A form of httpbin's fields: custname, custtel, custemail, size, topping, delivery, comments") },
    }),
    labRow({
      method: ANY_METHOD,
      path: "/api/lab/image",
      summary: "An image of the type Accept prefers, as httpbin chooses: webp, svg, jpeg, then png (also for image/* and */*; none: png)",
      handler: imageByAccept,
      // It may answer SVG.
      sandbox: [],
      responses: { 200: { description: "The image", mediaTypes: Object.values(IMAGES).map((i) => i.type) }, 406: { description: "Accept names no image type this resource has" } },
    }),
    ...(Object.keys(IMAGES) as ImageKind[]).map((kind) =>
      labRow({
        method: ANY_METHOD,
        path: `/api/lab/image/${kind}`,
        summary: `A small ${IMAGES[kind].type} image, made by this server${kind === "svg" ? " (sandboxed)" : ""}`,
        handler: () => imageAnswer(kind),
        ...(kind === "svg" ? { sandbox: [] } : {}),
        responses: { 200: doc(IMAGES[kind].type, `A ${kind.toUpperCase()} image of ${IMAGES[kind].body.length} bytes`) },
      }),
    ),
  );
  const TO_COOKIES: RouteResponseDoc = { description: "Found: Location /api/lab/cookies, with a Set-Cookie per cookie, each Path=/api/lab (and Secure over HTTPS), never Domain", headers: { Location: "/api/lab/cookies", "Set-Cookie": "name=value; Path=/api/lab" } };
  const AUTHED = (member: string): RouteResponseDoc => ({ description: `{"authenticated": true, "${member}": ...}`, mediaTypes: ["application/json"] });
  const credentials = { user: { description: "The user name to expect", example: "user" }, passwd: { description: "The password to expect", example: "passwd" } };
  rows.push(
    labRow({ method: ANY_METHOD, path: "/api/lab/cookies", summary: 'The cookies the request carried: {"cookies": {...}}', handler: cookiesAnswer, responses: { 200: JSON_DOC('{"cookies": {name: value}}') } }),
    labRow({
      method: ANY_METHOD,
      path: "/api/lab/cookies/set",
      summary: `Sets each query pair as a cookie with Path=/api/lab (at most ${MAX_COOKIES}), then redirects to /api/lab/cookies`,
      handler: (request) => setCookiesAnswer(request, scheme),
      query: { name: { description: "Any cookie name: its value is the cookie's", example: "value" } },
      responses: { 302: TO_COOKIES, 400: INVALID },
    }),
    labRow({
      method: ANY_METHOD,
      path: "/api/lab/cookies/set/:name/:value",
      summary: "Sets the cookie name=value with Path=/api/lab, then redirects to /api/lab/cookies",
      handler: (request, p) => setCookieAnswer(request, scheme, p.name, p.value),
      params: { name: { description: "The cookie's name (a token)", example: "flavour" }, value: { description: "Its value (cookie-octets, RFC 6265 §4.1.1)", example: "oat" } },
      responses: { 302: TO_COOKIES, 400: INVALID },
    }),
    labRow({
      method: ANY_METHOD,
      path: "/api/lab/cookies/delete",
      summary: "Expires each cookie named in the query (Path=/api/lab), then redirects to /api/lab/cookies",
      handler: (request) => deleteCookiesAnswer(request, scheme),
      query: { name: { description: "A cookie to expire: its name, with or without a value", example: "" } },
      responses: { 302: TO_COOKIES, 400: INVALID },
    }),
    labRow({
      method: ANY_METHOD,
      path: "/api/lab/basic-auth/:user/:passwd",
      summary: "401 with a Basic challenge until the request carries these credentials (compared in constant time)",
      handler: (request, p) => basicAuthAnswer(request, p.user, p.passwd, false),
      params: credentials,
      responses: { 200: AUTHED("user"), 401: { description: "No or other credentials", headers: { "WWW-Authenticate": 'Basic realm="startline-lab"' } } },
    }),
    labRow({
      method: ANY_METHOD,
      path: "/api/lab/hidden-basic-auth/:user/:passwd",
      summary: "As basic-auth, but 404 without these credentials: no challenge gives the resource away",
      handler: (request, p) => basicAuthAnswer(request, p.user, p.passwd, true),
      params: credentials,
      responses: { 200: AUTHED("user"), 404: { description: "No or other credentials" } },
    }),
    labRow({
      method: ANY_METHOD,
      path: "/api/lab/bearer",
      summary: "401 with a Bearer challenge until the request carries a bearer token (any)",
      handler: bearerAnswer,
      responses: { 200: AUTHED("token"), 401: { description: "No bearer token", headers: { "WWW-Authenticate": 'Bearer realm="startline-lab"' } } },
    }),
  );
  const digestParams = {
    qop: { description: "auth, or auth-int (the body's hash counts)", schema: { type: "string", enum: ["auth", "auth-int"] }, example: "auth" },
    ...credentials,
    algorithm: { description: `One of ${ALGORITHMS.join(", ")} (default MD5)`, schema: { type: "string", enum: [...ALGORITHMS] }, example: "SHA-256" },
    stale_after: { description: `never (default), or 0 to ${MAX_STALE_AFTER}: the uses of a nonce (by the client's nc) before it is answered stale`, example: "never" },
  };
  const digestCookie = { "Set-Cookie": `${DIGEST_COOKIE.name}=${DIGEST_COOKIE.value}; Path=/api/lab (on every answer, as httpbin's)` };
  const digestResponses = {
    200: { ...AUTHED("user"), headers: digestCookie },
    401: { description: `A challenge: Digest realm, qop, algorithm, a nonce fresh for ${NONCE_SECONDS} s, opaque (stale=true when only the nonce was out of date)`, headers: { "WWW-Authenticate": 'Digest realm="startline-lab", qop=..., algorithm=..., nonce=..., opaque=...', ...digestCookie } },
    403: { description: `require-cookie: the request answered the challenge without the cookie ${DIGEST_COOKIE.name} it set`, headers: digestCookie },
    400: INVALID,
  };
  const digestQuery = { "require-cookie": { description: `1, t or true: a request without a Cookie field is challenged, and one without ${DIGEST_COOKIE.name}=${DIGEST_COOKIE.value} refused with 403 (as httpbin's)`, schema: { type: "string", enum: ["1", "t", "true"] }, example: "true" } };
  rows.push(
    labRow({
      method: ANY_METHOD,
      path: "/api/lab/digest-auth/:qop/:user/:passwd",
      summary: "Digest authentication (RFC 7616, MD5): 401 with a challenge until the request answers it for these credentials",
      handler: (request, p) => digestAuthAnswer(request, scheme, secret, p.qop, p.user, p.passwd),
      params: { qop: digestParams.qop, user: digestParams.user, passwd: digestParams.passwd },
      query: digestQuery,
      responses: digestResponses,
    }),
    labRow({
      method: ANY_METHOD,
      path: "/api/lab/digest-auth/:qop/:user/:passwd/:algorithm",
      summary: "Digest authentication with the algorithm named (MD5, SHA-256, SHA-512-256, SHA-512, each also -sess)",
      handler: (request, p) => digestAuthAnswer(request, scheme, secret, p.qop, p.user, p.passwd, p.algorithm),
      params: { qop: digestParams.qop, user: digestParams.user, passwd: digestParams.passwd, algorithm: digestParams.algorithm },
      query: digestQuery,
      responses: digestResponses,
    }),
    labRow({
      method: ANY_METHOD,
      path: "/api/lab/digest-auth/:qop/:user/:passwd/:algorithm/:stale_after",
      summary: "Digest authentication whose nonces go stale after stale_after uses",
      handler: (request, p) => digestAuthAnswer(request, scheme, secret, p.qop, p.user, p.passwd, p.algorithm, p.stale_after),
      params: digestParams,
      query: digestQuery,
      responses: digestResponses,
    }),
  );
  rows.push(
    labRow({
      method: ANY_METHOD,
      path: "/api/lab/stream-bytes/:n",
      summary: `n random bytes (at most 1 MiB) sent in chunks of chunk_size as the client takes them; the same ones again for the same ?seed=`,
      handler: (request, p) => streamBytesAnswer(request, p.n),
      params: { n: whole(`How many bytes: 0 to ${MAX_BYTES}`, 0, MAX_BYTES, "1024") },
      query: {
        chunk_size: { description: `Bytes per chunk: 1 to ${MAX_CHUNK_BYTES} (default ${DEFAULT_CHUNK_BYTES}), at most ${MAX_CHUNKS} chunks`, schema: { type: "integer", minimum: 1, maximum: MAX_CHUNK_BYTES }, example: "256" },
        seed: { description: "0 to 4294967295: the bytes are then bytes/:n's for that seed", schema: { type: "integer", minimum: 0, maximum: 4294967295 }, example: "42" },
      },
      responses: { 200: { description: "The bytes, chunked", mediaTypes: ["application/octet-stream"] }, 400: INVALID },
    }),
    labRow({
      method: ANY_METHOD,
      path: "/api/lab/range/:n",
      summary: `n bytes (a to z, repeated) honouring Range on GET: 206 with Content-Range, several ranges as multipart/byteranges (at most ${MAX_RANGES}, none overlapping), 416, If-Range`,
      handler: (request, p) => rangeAnswer(request, p.n),
      params: { n: whole(`How many bytes: 1 to ${MAX_BYTES}`, 1, MAX_BYTES, "26") },
      responses: {
        200: { description: "The whole, with Accept-Ranges: bytes and ETag (no Range, Range on another method, If-Range not matching, or a Range to ignore)", mediaTypes: ["application/octet-stream"], headers: { "Accept-Ranges": "bytes", ETag: '"range-<n>"' } },
        206: { description: "The range asked for, with Content-Range; several as multipart/byteranges", mediaTypes: ["application/octet-stream", "multipart/byteranges"], headers: { "Content-Range": "bytes <first>-<last>/<n>" } },
        400: INVALID,
        416: { description: `No range starts within the bytes, or more than ${MAX_RANGES} ranges, or ranges that overlap: Content-Range: bytes */<n>`, headers: { "Content-Range": "bytes */<n>" } },
      },
    }),
  );
  for (const name of Object.keys(LAB_CODINGS) as LabCoding[]) {
    rows.push(labRow({
      method: ANY_METHOD,
      path: `/api/lab/${name}`,
      summary: `The echo, coded with ${LAB_CODINGS[name].token} whatever Accept-Encoding says (Content-Encoding: ${LAB_CODINGS[name].token})`,
      handler: (request) => codedAnswer(request, name),
      responses: { 200: { description: `JSON as httpbin's (${LAB_CODINGS[name].flag}: true, headers, method, origin), coded with ${LAB_CODINGS[name].token}`, mediaTypes: ["application/json"], headers: { "Content-Encoding": LAB_CODINGS[name].token } } },
    }));
  }
  // /api/lab/ lists every resource of the table it stands at the head of, itself included.
  let listing: Response | undefined;
  rows.unshift(
    labRow({
      method: ANY_METHOD,
      path: "/api/lab/",
      summary: "Every resource of the lab: method (any, or the one it answers), path and summary",
      handler: () => (listing ??= jsonAnswer({ resources: rows.map((r) => ({ method: r.method === ANY_METHOD ? "any" : r.method, path: r.path, summary: r.summary })) })),
      responses: { 200: JSON_DOC('{"resources": [{"method", "path", "summary"}]}') },
    }),
  );
  return rows;
}
