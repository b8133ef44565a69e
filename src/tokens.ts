// Making sure an administrator can log in, at start: ADMIN_TOKEN names a
// known token (for scripts and tests); otherwise, on a first start with no
// admin token, one is created and printed once. Only hashes are kept.
//
// Two steps, because a token that is printed only once must be printed by a
// start that goes on to serve: the setting is applied before the server
// listens (an old value must not work for a moment), and the first token is
// created only once the server listens. A start that cannot listen (a busy
// port) creates none, so the next one that can still prints one.
//
// ADMIN_TOKEN grants exactly its current value. A token that an earlier value
// granted is revoked at start, and so is it when the setting is removed:
// rotating the value, or dropping it, takes the old value's power away.

import { generateToken, hashToken } from "./policies/auth.js";
import { ConfigError } from "./config-error.js";
import type { Store, TokenRecord } from "./store/types.js";

export const MIN_TOKEN_LENGTH = 16;

const revokedLine = (token: TokenRecord, now: string) =>
  `revoked token ${token.id} (${token.role}, created ${token.createdAt}): an earlier ADMIN_TOKEN granted it, and ADMIN_TOKEN is ${now}`;

const given = (adminToken: string | undefined) => (adminToken === undefined || adminToken === "" ? undefined : adminToken);

/**
 * Before listening: makes ADMIN_TOKEN's value the setting's token and
 * revokes what an earlier value granted. Resolves with the lines to print;
 * rejects with a ConfigError when ADMIN_TOKEN is a standard user's token.
 */
export async function applyAdminSetting(store: Store, adminToken: string | undefined): Promise<string[]> {
  const value = given(adminToken);
  const result = await store.tokens.setSettingToken(value === undefined ? undefined : hashToken(value));
  if (result.kind === "conflict") {
    throw new ConfigError(
      `ADMIN_TOKEN is the value of token ${result.existing.id}, a standard user's token; a token's role never changes, so choose another value (or revoke that token: npm run token -- revoke ${result.existing.id})`,
    );
  }
  return result.revoked.map((token) => revokedLine(token, value === undefined ? "unset now" : "another value now"));
}

/**
 * Once listening: without ADMIN_TOKEN, creates an administrator token if the
 * store has none yet, and resolves with the line that shows it (undefined
 * when none was made). Atomic in the store: instances starting together on
 * one database create one.
 */
export async function createFirstAdmin(store: Store, adminToken: string | undefined): Promise<string | undefined> {
  if (given(adminToken) !== undefined) return undefined;
  const token = generateToken();
  if (!(await store.tokens.addFirstAdmin(hashToken(token)))) return undefined;
  return `created an administrator token; it is shown only now, so keep it: ${token}`;
}
