// Choosing the store from DATA_DIR: ":memory:" keeps everything in memory;
// any other value is a directory holding the SQLite database.

import path from "node:path";
import { createMemoryStore } from "./memory.js";
import { createSqliteStore, type Durability } from "./sqlite.js";
import type { Store } from "./types.js";

export const DATABASE_FILE = "startline.sqlite";

export function openStore(dataDir: string, durability: Durability = "normal"): Store {
  if (dataDir === ":memory:") return createMemoryStore();
  return createSqliteStore(path.join(dataDir, DATABASE_FILE), { durability });
}
