// A digest-auth client for the lab's tests (RFC 7616 §3.4), written from the
// RFC rather than from the server's code, so that the two can disagree.

import { createHash } from "node:crypto";

/** The client's side of RFC 7616, written from the RFC (independently of the server's code). */
export function digestAuthorization(challenge: string, method: string, uri: string, user: string, pass: string, nc: number, body = "", tamper = ""): string {
  const param = (name: string) => new RegExp(`${name}="?([^",]+)"?`).exec(challenge)![1]!;
  const algorithm = param("algorithm");
  const session = algorithm.endsWith("-sess");
  const hashName = { MD5: "md5", "SHA-256": "sha256", "SHA-512-256": "sha512-256", "SHA-512": "sha512" }[session ? algorithm.slice(0, -5) : algorithm]!;
  const H = (s: string) => createHash(hashName).update(s).digest("hex");
  const [realm, nonce, qop, opaque] = [param("realm"), param("nonce"), param("qop"), param("opaque")];
  const cnonce = "0a4f113b";
  const ncText = nc.toString(16).padStart(8, "0");
  let ha1 = H(`${user}:${realm}:${pass}`);
  if (session) ha1 = H(`${ha1}:${nonce}:${cnonce}`);
  const ha2 = qop === "auth-int" ? H(`${method}:${uri}:${H(body)}`) : H(`${method}:${uri}`);
  const response = H(`${ha1}:${nonce}:${ncText}:${cnonce}:${qop}:${ha2}`) + tamper;
  return `Digest username="${user}", realm="${realm}", nonce="${nonce}", uri="${uri}", algorithm=${algorithm}, qop=${qop}, nc=${ncText}, cnonce="${cnonce}", response="${response}", opaque="${opaque}"`;
}
