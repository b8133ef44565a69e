// Authentication to try a client's, by httpbin's names: basic-auth/:user/:passwd
// answers 401 with a Basic challenge until the request carries those
// credentials (hidden-basic-auth answers 404 instead, giving nothing away);
// bearer takes any bearer token. Credentials are compared in constant time
// (crypto.timingSafeEqual over digests of equal length), as every secret on
// this server is, though these ones stand in the URL.

import { createHash, timingSafeEqual } from "node:crypto";
import { problem } from "../../http/message/problem.js";
import { headerValue, type Request } from "../../http/message/request.js";
import type { Response } from "../../http/message/response.js";
import { jsonAnswer } from "./inspect.js";

export const REALM = "startline-lab";

/** Equal in constant time: the digests have one length whatever the inputs. */
export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(createHash("sha256").update(a, "utf8").digest(), createHash("sha256").update(b, "utf8").digest());
}

/** The user and password of an `Authorization: Basic` field (RFC 7617), or undefined. */
function basicCredentials(request: Request): { user: string; passwd: string } | undefined {
  const m = /^Basic[ \t]+([A-Za-z0-9+/]+={0,2})[ \t]*$/i.exec(headerValue(request, "authorization") ?? "");
  if (m === null) return undefined;
  const decoded = Buffer.from(m[1]!, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  return colon === -1 ? undefined : { user: decoded.slice(0, colon), passwd: decoded.slice(colon + 1) };
}

export function basicAuthAnswer(request: Request, user: string, passwd: string, hidden: boolean): Response {
  const given = basicCredentials(request);
  // One comparison of user and password together, so neither is learnt apart from the other.
  if (given !== undefined && sameSecret(`${given.user}:${given.passwd}`, `${user}:${passwd}`)) return jsonAnswer({ authenticated: true, user });
  if (hidden) return problem(404, { kind: "not-found", detail: `Nothing is served at ${request.path} without the right credentials.`, instance: request.target });
  return problem(401, {
    kind: "lab-unauthorized",
    title: "Unauthorized",
    detail: `Send Authorization: Basic with the user and password in this path (${user}:…, base64, RFC 7617).`,
    instance: request.target,
    headers: { "WWW-Authenticate": `Basic realm="${REALM}"` },
  });
}

/** RFC 6750 §2.1: b64token. */
const BEARER = /^Bearer[ \t]+([A-Za-z0-9\-._~+/]+=*)[ \t]*$/i;

export function bearerAnswer(request: Request): Response {
  const m = BEARER.exec(headerValue(request, "authorization") ?? "");
  if (m !== null) return jsonAnswer({ authenticated: true, token: m[1] });
  return problem(401, {
    kind: "lab-unauthorized",
    title: "Unauthorized",
    detail: "Send Authorization: Bearer <token> (any token: RFC 6750 §2.1).",
    instance: request.target,
    headers: { "WWW-Authenticate": `Bearer realm="${REALM}"` },
  });
}
