// What the API's handlers share: the store, and the bytes kept from its
// reads (kept-reads.ts). (Who may call them is not theirs to decide: see
// src/policies/access.ts.)

import type { Store } from "../store/types.js";
import type { KeptReads } from "./kept-reads.js";

export interface ApiContext {
  readonly store: Store;
  readonly kept: KeptReads;
}
