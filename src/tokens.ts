// Making sure an administrator can log in: ADMIN_TOKEN names a known token
// (for scripts and tests); otherwise, on a first start with no admin token,
// one is created and printed once. Only its hash is kept.

import { generateToken, hashToken } from "./api/auth.js";
import type { Store } from "./store/types.js";

export const MIN_TOKEN_LENGTH = 16;

/**
 * Resolves with the line to print, if a token was created. Without
 * ADMIN_TOKEN, the token is created only if the store has no admin yet, and
 * atomically so: instances starting together on one database create one.
 */
export async function ensureAdmin(store: Store, adminToken: string | undefined): Promise<string | undefined> {
  if (adminToken !== undefined && adminToken !== "") {
    await store.tokens.add(hashToken(adminToken), "admin"); // "exists" on later starts: nothing to do
    return undefined;
  }
  const token = generateToken();
  if (!(await store.tokens.addFirstAdmin(hashToken(token)))) return undefined;
  return `created an administrator token; it is shown only now, so keep it: ${token}`;
}
