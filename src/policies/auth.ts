// Bearer tokens (RFC 6750): generated at random, stored only as SHA-256
// digests, looked up by digest and confirmed with a constant-time comparison.
//
// A token is 256 random bits, so a fast digest is the right tool: there is
// nothing to brute-force that a slow password hash would protect.

import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { headerValue, type Request } from "../http/message/request.js";
import { fail } from "../http/message/problem.js";
import { asTokenHash, type Role, type TokenHash, type TokenRecord, type TokenStore } from "../store/types.js";

/** "sl_" marks startline tokens so secret scanners and people can recognise one. */
const PREFIX = "sl_";

export function generateToken(): string {
  return PREFIX + randomBytes(32).toString("base64url");
}

export function hashToken(token: string): TokenHash {
  return asTokenHash(createHash("sha256").update(token, "utf8").digest("hex"));
}

export type Caller =
  | { readonly kind: "anonymous" }
  | { readonly kind: "rejected"; readonly reason: string }
  | { readonly kind: "authenticated"; readonly role: Role; readonly tokenId: string };

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

export async function identify(request: Request, tokens: TokenStore): Promise<Caller> {
  const header = headerValue(request, "authorization");
  if (header === undefined) return { kind: "anonymous" };
  const m = BEARER.exec(header);
  if (m === null) return { kind: "rejected", reason: "The Authorization header is not of the form `Bearer <token>`" };
  const hash = hashToken(m[1]!);
  const record = await tokens.findByHash(hash);
  // The lookup finds a candidate by digest; the comparison that decides is constant-time.
  if (record === undefined || !timingSafeEqual(Buffer.from(record.hash, "hex"), Buffer.from(hash, "hex"))) {
    return { kind: "rejected", reason: "The bearer token is not valid" };
  }
  await noteUse(tokens, record);
  return { kind: "authenticated", role: record.role, tokenId: record.id };
}

/** How stale a token's lastUsedAt may get before a request records a newer one: one write per token per minute at most. */
const USE_GRANULARITY_MS = 60_000;

/**
 * Records when a token was last used (shown by `npm run token -- list`), to
 * the minute. Best effort: a database too busy to take the write must not
 * fail the request that the token has already authorized.
 */
async function noteUse(tokens: TokenStore, record: TokenRecord): Promise<void> {
  const threshold = new Date(Date.now() - USE_GRANULARITY_MS).toISOString();
  if (record.lastUsedAt !== undefined && record.lastUsedAt >= threshold) return;
  await tokens.markUsed(record.id, threshold).catch(() => undefined);
}

/** RFC 6750 §3: the challenge, with an error code when credentials were sent. */
function challenge(error?: string): string {
  return error === undefined ? 'Bearer realm="startline"' : `Bearer realm="startline", error="${error}"`;
}

/**
 * Resolves with the caller if it holds `role` (or any valid token when `role` is
 * "any"); otherwise rejects with a 401 with WWW-Authenticate, even for a valid
 * token of too low a role, as the example API specifies (docs/api.md, section 7).
 */
export async function requireRole(request: Request, tokens: TokenStore, role: Role | "any"): Promise<Caller> {
  const caller = await identify(request, tokens);
  const need = role === "admin" ? "an administrator's bearer token" : "a bearer token";
  if (caller.kind === "anonymous") {
    fail(401, {
      kind: "unauthorized",
      detail: `This request needs ${need}: send Authorization: Bearer <token>.`,
      instance: request.target,
      headers: { "WWW-Authenticate": challenge() },
    });
  }
  if (caller.kind === "rejected") {
    fail(401, {
      kind: "unauthorized",
      detail: `${caller.reason}. This request needs ${need}.`,
      instance: request.target,
      headers: { "WWW-Authenticate": challenge("invalid_token") },
    });
  }
  if (role === "admin" && caller.role !== "admin") {
    fail(401, {
      kind: "insufficient-role",
      title: "Insufficient role",
      detail: "The token is valid but belongs to a standard user; this request needs an administrator's token.",
      instance: request.target,
      headers: { "WWW-Authenticate": challenge("insufficient_scope") },
    });
  }
  return caller;
}
