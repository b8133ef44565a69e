// What the API's handlers share: the store and the write policy.

import type { Store } from "../store/types.js";

export interface ApiContext {
  readonly store: Store;
  /** When true, every write (posts, facts) needs a valid bearer token; articles always need an admin. */
  readonly writeRequiresToken: boolean;
}
