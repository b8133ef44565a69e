// Digest access authentication (RFC 7616), to try a client's:
// /api/lab/digest-auth/:qop/:user/:passwd[/:algorithm[/:stale_after]]
// answers 401 with a challenge until the request carries a response computed
// from that user and password. qop is auth or auth-int (the body's hash
// counted in, RFC 7616 §3.4.3); the algorithm MD5 (the default), SHA-256,
// SHA-512-256, or httpbin's SHA-512, each with its -sess form (§3.4.2).
//
// Nonces are stateless, so that the next request verifies on whichever
// worker or instance gets it: a nonce is its issue time and an HMAC of it
// under the server's lab secret (LAB_SECRET, or else the store's own key,
// the same for every worker and instance on one database: serve.ts), and verifying it is recomputing the HMAC. A nonce
// is fresh for NONCE_SECONDS; stale_after n makes it stale after n uses,
// counted by the client's own nonce count (nc), so no use needs remembering.
// A stale nonce with the right response gets a new challenge with stale=true
// (§3.3: the client retries without asking the user again). Every comparison
// of a secret is in constant time.
//
// As httpbin's, every answer sets the cookie fake=fake_value (under the lab's
// path, cookies.ts), and ?require-cookie=1 (or t, true) challenges a request
// that carries no Cookie field and refuses with 403 one whose fake cookie is
// missing: a client's tests can see that its cookies survive the challenge.
// httpbin's stale_after and last_nonce cookies are not set: the nonce itself
// and the client's nc carry what they hold, so any worker can verify.

import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { problem } from "../../http/message/problem.js";
import { headerValue, type Request } from "../../http/message/request.js";
import type { Response } from "../../http/message/response.js";
import { REALM, sameSecret } from "./auth.js";
import { cookiesOf, labCookie } from "./cookies.js";
import { jsonAnswer } from "./inspect.js";
import type { Scheme } from "./origin.js";
import { queryOf, refuse, whole } from "./params.js";

/** How long a nonce is fresh. */
export const NONCE_SECONDS = 300;
export const MAX_STALE_AFTER = 1000;

const HASHES = { MD5: "md5", "SHA-256": "sha256", "SHA-512-256": "sha512-256", "SHA-512": "sha512" } as const;
type HashName = keyof typeof HASHES;
export const ALGORITHMS: readonly string[] = Object.keys(HASHES).flatMap((name) => [name, `${name}-sess`]);
export const QOPS = ["auth", "auth-int"] as const;

interface Setting {
  readonly qop: "auth" | "auth-int";
  readonly user: string;
  readonly passwd: string;
  readonly algorithm: string;
  readonly hash: string;
  readonly session: boolean;
  /** Uses of a nonce before it is stale; undefined: never. */
  readonly staleAfter: number | undefined;
}

function settingOf(request: Request, qop: string, user: string, passwd: string, algorithm = "MD5", staleAfter = "never"): Setting {
  if (qop !== "auth" && qop !== "auth-int") refuse(request, "qop", "auth or auth-int", `qop ${JSON.stringify(qop)} is not one this resource offers`);
  const name = ALGORITHMS.find((a) => a.toUpperCase() === algorithm.toUpperCase());
  if (name === undefined) refuse(request, "algorithm", ALGORITHMS.join(", "), `algorithm ${JSON.stringify(algorithm)} is not one this resource offers`);
  const session = name.endsWith("-sess");
  const hash = HASHES[(session ? name.slice(0, -5) : name) as HashName];
  const stale = staleAfter === "never" ? undefined : whole(request, "stale_after", staleAfter, 0, MAX_STALE_AFTER);
  return { qop, user, passwd, algorithm: name, hash, session, staleAfter: stale };
}

const digest = (hash: string, text: string | Buffer) => createHash(hash).update(text).digest("hex");

/** A nonce: its issue time in hex, then an HMAC of it under the secret. */
function makeNonce(secret: string, now: number): string {
  const time = Math.floor(now / 1000).toString(16);
  return `${time}.${createHmac("sha256", secret).update(`lab-digest-nonce:${time}`).digest("base64url")}`;
}

/** "fresh", "stale" (issued here, but too old), or "forged" (not issued with this secret). */
function nonceState(secret: string, nonce: string, now: number): "fresh" | "stale" | "forged" {
  const m = /^([0-9a-f]{1,12})\.([A-Za-z0-9_-]{43})$/.exec(nonce);
  if (m === null) return "forged";
  const expected = createHmac("sha256", secret).update(`lab-digest-nonce:${m[1]}`).digest();
  const given = Buffer.from(m[2]!, "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return "forged";
  const age = now / 1000 - parseInt(m[1]!, 16);
  return age >= 0 && age <= NONCE_SECONDS ? "fresh" : "stale";
}

/** The auth-params of `Authorization: Digest ...` (RFC 9110 §11.2: token=token or token="quoted"), names lower-cased. */
function digestParams(field: string | undefined): Map<string, string> | undefined {
  if (field === undefined) return undefined;
  const m = /^Digest[ \t]+/i.exec(field);
  if (m === null) return undefined;
  const params = new Map<string, string>();
  const re = /([!#$%&'*+.^_`|~0-9A-Za-z-]+)[ \t]*=[ \t]*(?:"((?:[^"\\]|\\.)*)"|([!#$%&'*+.^_`|~0-9A-Za-z-]+))[ \t]*(?:,[ \t]*|$)/y;
  re.lastIndex = m[0].length;
  while (re.lastIndex < field.length) {
    const p = re.exec(field);
    if (p === null) return undefined;
    params.set(p[1]!.toLowerCase(), p[2] !== undefined ? p[2].replace(/\\(.)/g, "$1") : p[3]!);
  }
  return params;
}

/** The response the client should have sent (RFC 7616 §3.4.1), from what it says it used. */
function expectedResponse(s: Setting, request: Request, p: Map<string, string>): string {
  const H = (text: string | Buffer) => digest(s.hash, text);
  const nonce = p.get("nonce")!;
  const cnonce = p.get("cnonce") ?? "";
  let ha1 = H(`${s.user}:${REALM}:${s.passwd}`);
  if (s.session) ha1 = H(`${ha1}:${nonce}:${cnonce}`);
  const uri = p.get("uri")!;
  const ha2 = s.qop === "auth-int" ? H(`${request.method}:${uri}:${H(request.body)}`) : H(`${request.method}:${uri}`);
  return H(`${ha1}:${nonce}:${p.get("nc")}:${cnonce}:${p.get("qop")}:${ha2}`);
}

function challenge(s: Setting, secret: string, request: Request, why: string, stale: boolean): Response {
  const nonce = makeNonce(secret, Date.now());
  const opaque = createHmac("sha256", secret).update(`lab-digest-opaque:${nonce}`).digest("base64url");
  const fields = [`realm="${REALM}"`, `qop="${s.qop}"`, `algorithm=${s.algorithm}`, `nonce="${nonce}"`, `opaque="${opaque}"`, ...(stale ? ["stale=true"] : [])];
  return problem(401, {
    kind: "lab-unauthorized",
    title: "Unauthorized",
    detail: why,
    instance: request.target,
    headers: { "WWW-Authenticate": `Digest ${fields.join(", ")}` },
  });
}

/** The cookie every digest answer sets, and a client that keeps cookies sends back. */
export const DIGEST_COOKIE = { name: "fake", value: "fake_value" } as const;

/** httpbin's truthy spellings of require-cookie. */
const TRUE = new Set(["1", "t", "true"]);

export function digestAuthAnswer(request: Request, scheme: Scheme, secret: string, qop: string, user: string, passwd: string, algorithm?: string, staleAfter?: string): Response {
  const answer = verdict(request, secret, qop, user, passwd, algorithm, staleAfter);
  const cookie = labCookie(scheme, `${DIGEST_COOKIE.name}=${DIGEST_COOKIE.value}`);
  return { ...answer, headers: { ...answer.headers, "Set-Cookie": cookie } };
}

function verdict(request: Request, secret: string, qop: string, user: string, passwd: string, algorithm?: string, staleAfter?: string): Response {
  const s = settingOf(request, qop, user, passwd, algorithm, staleAfter);
  const requireCookie = TRUE.has(queryOf(request, ["require-cookie"])["require-cookie"]?.toLowerCase() ?? "");
  const p = digestParams(headerValue(request, "authorization"));
  const ask = (why: string, stale = false) => challenge(s, secret, request, why, stale);
  if (p === undefined) return ask(`Answer the challenge with Authorization: Digest, computed with ${s.algorithm} and qop=${s.qop} from the user and password in this path (RFC 7616).`);
  if (requireCookie && headerValue(request, "cookie") === undefined) return ask(`require-cookie: send back the cookie ${DIGEST_COOKIE.name} this answer sets, with Authorization: Digest.`);
  if (requireCookie && cookiesOf(request)[DIGEST_COOKIE.name] !== DIGEST_COOKIE.value) {
    return problem(403, { kind: "lab-forbidden", title: "Forbidden", detail: `require-cookie: the request carries no cookie ${DIGEST_COOKIE.name}=${DIGEST_COOKIE.value}, which the challenge set: keep the cookies of the 401 when answering it.`, instance: request.target });
  }
  for (const name of ["username", "realm", "nonce", "uri", "response", "nc", "cnonce", "qop"]) {
    if (!p.has(name)) return ask(`The Authorization field has no ${name} parameter (RFC 7616 §3.4).`);
  }
  if (p.get("realm") !== REALM) return ask(`realm is not "${REALM}".`);
  if (p.get("qop") !== s.qop) return ask(`qop is ${p.get("qop")}, not ${s.qop}.`);
  if ((p.get("algorithm") ?? "MD5").toUpperCase() !== s.algorithm.toUpperCase()) return ask(`algorithm is ${p.get("algorithm") ?? "MD5 (by default)"}, not ${s.algorithm}.`);
  if (!/^[0-9a-fA-F]{8}$/.test(p.get("nc")!)) return ask("nc is not 8 hex digits (RFC 7616 §3.4).");
  // uri names this very request's target (§3.4.6), so a response cannot be replayed elsewhere.
  if (p.get("uri") !== request.target) return ask(`uri is ${JSON.stringify(p.get("uri")!.slice(0, 200))}, not this request's target ${request.target}.`);
  const state = nonceState(secret, p.get("nonce")!, Date.now());
  if (state === "forged") return ask("The nonce is not one this server issued.");
  const expected = Buffer.from(expectedResponse(s, request, p), "latin1");
  const given = Buffer.from(p.get("response")!.toLowerCase(), "latin1");
  const right = given.length === expected.length && timingSafeEqual(given, expected) && sameSecret(p.get("username")!, user);
  if (!right) return ask("The response does not match: the user, the password or the computation is wrong.");
  const uses = parseInt(p.get("nc")!, 16);
  if (state === "stale" || (s.staleAfter !== undefined && uses > s.staleAfter)) {
    return ask(state === "stale" ? `The nonce is over ${NONCE_SECONDS} s old: retry with the new one.` : `The nonce has been used ${uses} times, past stale_after ${s.staleAfter}: retry with the new one.`, true);
  }
  return jsonAnswer({ authenticated: true, user });
}
