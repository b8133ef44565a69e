// Choosing the store from DATA_DIR.

import { createMemoryStore } from "./memory.js";
import type { Store } from "./types.js";

export function openStore(dataDir: string): Store {
  if (dataDir === ":memory:") return createMemoryStore();
  // The durable SQLite store is the next step; until it lands every DATA_DIR is in memory.
  return createMemoryStore();
}
