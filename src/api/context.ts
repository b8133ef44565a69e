// What the API's handlers share: the store. (Who may call them is not theirs
// to decide: see src/policies/access.ts.)

import type { Store } from "../store/types.js";

export interface ApiContext {
  readonly store: Store;
}
