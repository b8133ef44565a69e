// Making sure an administrator can log in, at start: ADMIN_TOKEN names a
// known token (for scripts and tests); otherwise, on a first start with no
// admin token, one is created and printed once. Only hashes are kept.
//
// ADMIN_TOKEN grants exactly its current value. A token that an earlier value
// granted is revoked at start, and so is it when the setting is removed:
// rotating the value, or dropping it, takes the old value's power away.

import { generateToken, hashToken } from "./api/auth.js";
import { ConfigError } from "./config-error.js";
import type { Store, TokenRecord } from "./store/types.js";

export const MIN_TOKEN_LENGTH = 16;

const revokedLine = (token: TokenRecord, now: string) =>
  `revoked token ${token.id} (${token.role}, created ${token.createdAt}): an earlier ADMIN_TOKEN granted it, and ADMIN_TOKEN is ${now}`;

/**
 * Resolves with the lines to print: tokens revoked, and a token created.
 * Rejects with a ConfigError when ADMIN_TOKEN is a standard user's token.
 * Without ADMIN_TOKEN, a token is created only if the store has no admin
 * yet, and atomically so: instances starting together on one database
 * create one.
 */
export async function ensureAdmin(store: Store, adminToken: string | undefined): Promise<string[]> {
  const value = adminToken === undefined || adminToken === "" ? undefined : adminToken;
  const result = await store.tokens.setSettingToken(value === undefined ? undefined : hashToken(value));
  if (result.kind === "conflict") {
    throw new ConfigError(
      `ADMIN_TOKEN is the value of token ${result.existing.id}, a standard user's token; a token's role never changes, so choose another value (or revoke that token: npm run token -- revoke ${result.existing.id})`,
    );
  }
  const lines = result.revoked.map((token) => revokedLine(token, value === undefined ? "unset now" : "another value now"));
  if (value !== undefined) return lines;
  const token = generateToken();
  if (await store.tokens.addFirstAdmin(hashToken(token))) lines.push(`created an administrator token; it is shown only now, so keep it: ${token}`);
  return lines;
}
