// The data a new store starts with: facts about HTTP, each with a source that
// can be checked (an RFC and section, or an RFC and its publication date), and
// a few articles. No posts and no tokens.
//
// Facts are meant to be true to the letter of their source. If you add one,
// cite the section that says it, and keep the wording within what it says.

import type { NewArticle, SeedData, SeedFact, Store } from "./types.js";

export type { SeedFact } from "./types.js";

export const SEED_FACTS: readonly SeedFact[] = [
  {
    text: "Status code 418 (I'm a teapot) comes from RFC 2324, the Hyper Text Coffee Pot Control Protocol, an April Fools' RFC published on 1 April 1998.",
    source: "RFC 2324 §2.3.2 (1 April 1998)",
  },
  {
    text: "RFC 9110 marks status code 418 as \"(Unused)\": it was deployed as a joke often enough that it cannot be assigned to anything else for the foreseeable future.",
    source: "RFC 9110 §15.5.19",
  },
  {
    text: "In June 2022, RFC 9110 (HTTP Semantics), RFC 9111 (HTTP Caching) and RFC 9112 (HTTP/1.1) together obsoleted RFC 7230 to RFC 7235.",
    source: "RFC 9110, RFC 9111 and RFC 9112, \"Obsoletes\" headers (June 2022)",
  },
  {
    text: "RFC 9110 renamed status code 413 from \"Payload Too Large\" to \"Content Too Large\".",
    source: "RFC 9110 §15.5.14",
  },
  {
    text: "RFC 9110 made status code 422 part of core HTTP as \"Unprocessable Content\"; it was first defined for WebDAV as \"Unprocessable Entity\" in RFC 4918.",
    source: "RFC 9110 §15.5.21",
  },
  {
    text: "A client must send a Host header field in every HTTP/1.1 request, and a server must answer 400 (Bad Request) to an HTTP/1.1 request without one, or with more than one.",
    source: "RFC 9112 §3.2",
  },
  {
    text: "An HTTP/1.1 request line is a method, a space, the request target, a space, and the protocol version, ending in CRLF.",
    source: "RFC 9112 §3",
  },
  {
    text: "Request methods are case-sensitive; by convention, standardized methods are defined in all-uppercase US-ASCII letters.",
    source: "RFC 9110 §9.1",
  },
  {
    text: "Header field names are case-insensitive: Content-Type and content-type name the same field.",
    source: "RFC 9110 §5.1",
  },
  {
    text: "No whitespace is allowed between a field name and its colon, and a server must reject a request that has any with 400 (Bad Request).",
    source: "RFC 9112 §5.1",
  },
  {
    text: "A sender must not send a Content-Length header field in a message that contains a Transfer-Encoding header field.",
    source: "RFC 9112 §6.2",
  },
  {
    text: "A server must not send a Content-Length header field in a response with a 1xx (Informational) or 204 (No Content) status code.",
    source: "RFC 9110 §8.6",
  },
  {
    text: "The chunked transfer coding ends with a chunk whose size is zero, followed by the trailer section and an empty line.",
    source: "RFC 9112 §7.1",
  },
  {
    text: "HTTP/1.1 connections are persistent by default: one connection can carry many requests and responses unless the \"close\" connection option is sent.",
    source: "RFC 9112 §9.3",
  },
  {
    text: "Of the methods RFC 9110 defines, GET, HEAD, OPTIONS and TRACE are safe: a client does not request any state change on the server by using them.",
    source: "RFC 9110 §9.2.1",
  },
  {
    text: "Of the methods RFC 9110 defines, PUT, DELETE and the safe methods are idempotent; POST is not.",
    source: "RFC 9110 §9.2.2",
  },
  {
    text: "HEAD is identical to GET except that the server must not send content in the response.",
    source: "RFC 9110 §9.3.2",
  },
  {
    text: "A server that answers 405 (Method Not Allowed) must send an Allow header field listing the methods the target resource supports.",
    source: "RFC 9110 §15.5.6",
  },
  {
    text: "A server that answers 401 (Unauthorized) must send a WWW-Authenticate header field with at least one challenge.",
    source: "RFC 9110 §15.5.2",
  },
  {
    text: "Status code 308 (Permanent Redirect) is like 301 (Moved Permanently), except that it does not allow the client to change the request method from POST to GET.",
    source: "RFC 9110 §15.4.9",
  },
  {
    text: "Status code 306 is reserved and unused: it was defined in a previous version of the HTTP specification and is no longer used.",
    source: "RFC 9110 §15.4.7",
  },
  {
    text: "The only expectation RFC 9110 defines for the Expect header field is \"100-continue\"; a server may answer any other with 417 (Expectation Failed).",
    source: "RFC 9110 §10.1.1",
  },
  {
    text: "An origin server with a clock must send a Date header field in all 2xx, 3xx and 4xx responses.",
    source: "RFC 9110 §6.6.1",
  },
  {
    text: "The preferred format for an HTTP date is IMF-fixdate, such as \"Sun, 06 Nov 1994 08:49:37 GMT\".",
    source: "RFC 9110 §5.6.7",
  },
  {
    text: "The Cache-Control directive \"private\" forbids a shared cache from storing the response; a private cache, such as a browser's, may still store it.",
    source: "RFC 9111 §5.2.2.7",
  },
  {
    text: "Status code 451 (Unavailable For Legal Reasons) was defined in RFC 7725, published in February 2016, for resources blocked because of a legal demand.",
    source: "RFC 7725 §3 (February 2016)",
  },
  {
    text: "The PATCH method was defined in RFC 5789, published in March 2010.",
    source: "RFC 5789 §2 (March 2010)",
  },
  {
    text: "In a JSON Merge Patch, a member whose value is null removes that member from the target document.",
    source: "RFC 7396 §2 (October 2014)",
  },
  {
    text: "RFC 9457, published in July 2023, defines problem details for HTTP APIs (application/problem+json) and obsoletes RFC 7807.",
    source: "RFC 9457 (July 2023)",
  },
  {
    text: "HTTP/1.0 was documented in RFC 1945, published in May 1996; HTTP/1.1 was first specified in RFC 2068 in January 1997, then in RFC 2616 in June 1999.",
    source: "RFC 1945 (May 1996), RFC 2068 (January 1997), RFC 2616 (June 1999)",
  },
  {
    text: "HTTP/3 was published as RFC 9114 in June 2022, the same month as RFC 9113, which obsoleted RFC 7540's definition of HTTP/2.",
    source: "RFC 9114 and RFC 9113 (June 2022)",
  },
];

export const SEED_ARTICLES: readonly NewArticle[] = [
  {
    id: "1",
    title: "Anatomy of the request line",
    author: "startline",
    body: [
      "Every HTTP/1.1 request starts with one line: a method, a space, the request target, a space, and the protocol version, ended by CRLF (RFC 9112 §3). \"GET /api/v2/status HTTP/1.1\" is a complete example.",
      "The method is a token, and it is case-sensitive: GET and get are different methods. By convention, standardized methods are written in uppercase (RFC 9110 §9.1), but a server may serve methods of its own, which is how this API can answer UPDATE.",
      "The request target usually has the origin form: an absolute path with an optional query. Requests to a proxy use the absolute form (a whole URI), CONNECT uses the authority form (host and port), and a server-wide OPTIONS uses the asterisk form, \"*\" (RFC 9112 §3.2).",
      "The version is the last word of the line. A server that receives a request target longer than any URI it wishes to parse must answer 414 (URI Too Long), and RFC 9112 recommends that everyone support request lines of at least 8000 octets.",
      "Right after the request line come the header fields. In HTTP/1.1 exactly one of them must be Host: without it, or with two, the answer is 400 (Bad Request).",
    ].join("\n\n"),
  },
  {
    id: "2",
    title: "Status codes, class by class",
    author: "startline",
    body: [
      "A status code is a three-digit integer from 100 to 599, and its first digit gives its class: 1xx informational, 2xx successful, 3xx redirection, 4xx client error, 5xx server error (RFC 9110 §15).",
      "Clients must understand the class of any status code, even one they have never seen: an unrecognized code is treated like the x00 code of its class, so an unknown 4xx is handled as a 400.",
      "Some pairs are easy to mix up. 401 (Unauthorized) means the request lacks valid credentials and comes with a WWW-Authenticate challenge; 403 (Forbidden) means the server understood the request and refuses to fulfill it, for example because the credentials given do not grant access. 404 (Not Found) is about the resource; 405 (Method Not Allowed) means the resource exists but not with that method, and its response lists the methods that work in Allow.",
      "422 (Unprocessable Content) fits a request whose syntax is fine, such as well-formed JSON, but whose content breaks the resource's rules. 409 (Conflict) fits a request that clashes with the resource's current state, such as creating something that already exists.",
      "The words after the code, the reason phrase, are informational only: RFC 9112 §4 says clients should ignore them, and HTTP/2 and HTTP/3 do not carry them at all.",
    ].join("\n\n"),
  },
  {
    id: "3",
    title: "Caching with Cache-Control",
    author: "startline",
    body: [
      "HTTP caching is defined in RFC 9111. A private cache, such as a browser's, serves one user; a shared cache, such as a proxy or a CDN, serves many.",
      "The Cache-Control response field tells caches what they may do. max-age=3600 says the response stays fresh for 3600 seconds. private says a shared cache must not store the response, though the user's own cache may. no-store says no cache may store it. no-cache allows storing but requires the cache to check with the origin server before each reuse.",
      "When a stored response has gone stale, a cache does not have to fetch it again in full. If the response carried an ETag, the cache can send it back in If-None-Match; if the representation has not changed, the server answers 304 (Not Modified) with no content, and the cache reuses what it has.",
      "The facts endpoint of this API answers with Cache-Control: private, max-age=3600, so a client may keep a random fact for an hour, and no shared cache hands one user's fact to another.",
    ].join("\n\n"),
  },
];

export const SEED: SeedData = { facts: SEED_FACTS, articles: SEED_ARTICLES };

/**
 * Fills an empty store with the seed data, all or nothing and only once, even
 * with several processes starting at once (see Store.seedIfEmpty). Resolves
 * true if it seeded, false if the store already had facts or articles.
 */
export function seed(store: Store): Promise<boolean> {
  return store.seedIfEmpty(SEED);
}
