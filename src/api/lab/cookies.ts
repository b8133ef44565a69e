// Cookies, by httpbin's names: /api/lab/cookies shows the cookies the request
// carried, {"cookies": {...}}; cookies/set?name=value (or
// cookies/set/:name/:value) sets them and cookies/delete?name expires them,
// each then redirecting to /api/lab/cookies. Every cookie the lab sets is
// scoped `Path=/api/lab/` with no Domain: it rides only on requests to the
// lab, never on the page at / or the API, and a page elsewhere that sends a
// browser through these URLs cannot weigh down the rest of the origin.

import { headerValue, type Request } from "../../http/message/request.js";
import type { Response } from "../../http/message/response.js";
import { jsonAnswer } from "./inspect.js";
import type { Scheme } from "./origin.js";
import { queryPairs, refuse } from "./params.js";
import { COOKIE_PATH, MAX_COOKIE_CHARS } from "./response-headers.js";

/** Cookies one request may set or delete. */
export const MAX_COOKIES = 20;

/** RFC 6265 §4.1.1: a cookie-name is a token; a cookie-value is cookie-octets (no space, ", comma, ; or \). */
const NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const VALUE = /^[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*$/;
const ALLOWED = `a cookie name (a token) and a value of visible ASCII without space, ", comma, ; or \\ (RFC 6265 §4.1.1), at most ${MAX_COOKIE_CHARS} characters, at most ${MAX_COOKIES} cookies`;

/** The cookies of the Cookie field(s), name to value (the last of a name wins, as httpbin's). */
export function cookiesOf(request: Request): Record<string, string> {
  const out: Record<string, string> = {};
  const field = headerValue(request, "cookie");
  if (field === undefined) return out;
  for (const pair of field.split(/;\s*|,\s*/)) {
    const eq = pair.indexOf("=");
    if (eq <= 0) continue;
    out[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim().replace(/^"(.*)"$/, "$1");
  }
  return out;
}

export function cookiesAnswer(request: Request): Response {
  return jsonAnswer({ cookies: cookiesOf(request) });
}

function checked(request: Request, name: string, value: string): string {
  if (!NAME.test(name)) refuse(request, name, ALLOWED, `${JSON.stringify(name.slice(0, 100))} is not a cookie name`);
  if (!VALUE.test(value)) refuse(request, name, ALLOWED, `The value of ${name} holds a character a cookie value cannot`);
  if (name.length + value.length > MAX_COOKIE_CHARS) refuse(request, name, ALLOWED, `${name} is longer than ${MAX_COOKIE_CHARS} characters`);
  return `${name}=${value}`;
}

function toCookies(scheme: Scheme, lines: string[], expire = false): Response {
  // Over HTTPS, Secure as httpbin's; never Domain, always the lab's path.
  const attributes = `; Path=${COOKIE_PATH}${expire ? "; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT" : ""}${scheme === "https" ? "; Secure" : ""}`;
  return { status: 302, headers: { Location: "/api/lab/cookies", "Set-Cookie": lines.map((l) => l + attributes) } };
}

function pairs(request: Request): [string, string][] {
  const all = queryPairs(request);
  if (all.length > MAX_COOKIES) refuse(request, "(query)", ALLOWED, `${all.length} cookies are given`);
  return all;
}

export function setCookiesAnswer(request: Request, scheme: Scheme): Response {
  return toCookies(scheme, pairs(request).map(([name, value]) => checked(request, name, value)));
}

export function setCookieAnswer(request: Request, scheme: Scheme, name: string, value: string): Response {
  return toCookies(scheme, [checked(request, name, value)]);
}

export function deleteCookiesAnswer(request: Request, scheme: Scheme): Response {
  return toCookies(scheme, pairs(request).map(([name]) => checked(request, name, "")), true);
}
