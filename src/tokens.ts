// Making sure an administrator can log in: ADMIN_TOKEN names a known token
// (for scripts and tests); otherwise, on a first start with no admin token,
// one is created and printed once. Only its hash is kept.

import { generateToken, hashToken } from "./api/auth.js";
import type { Store } from "./store/types.js";

export const MIN_TOKEN_LENGTH = 16;

/** Returns the line to print, if a token was created. */
export function ensureAdmin(store: Store, adminToken: string | undefined): string | undefined {
  if (adminToken !== undefined && adminToken !== "") {
    store.tokens.add(hashToken(adminToken), "admin"); // "exists" on later starts: nothing to do
    return undefined;
  }
  if (store.tokens.hasAdmin()) return undefined;
  const token = generateToken();
  store.tokens.add(hashToken(token), "admin");
  return `created an administrator token; it is shown only now, so keep it: ${token}`;
}
