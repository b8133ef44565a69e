// Choosing the store: DATABASE_URL names a PostgreSQL database, shared by
// every instance that names it; without it, DATA_DIR=":memory:" keeps
// everything in memory, and any other DATA_DIR is a directory holding this
// machine's SQLite database.

import path from "node:path";
import { createMemoryStore } from "./memory.js";
import { DEFAULT_POOL_SIZE } from "./pg-pool-size.js";
import type { Durability } from "./sqlite.js";
import type { Store } from "./types.js";

export const DATABASE_FILE = "startline.sqlite";

/** The settings that choose and tune the store (a subset of Config). */
export interface StoreSettings {
  readonly dataDir: string;
  readonly durability: Durability;
  readonly databaseUrl?: string | undefined;
  readonly databasePoolSize?: number;
  /**
   * Check the SQLite file's integrity on opening (default true); the workers
   * of WORKERS skip it, since their primary has just checked the same file.
   */
  readonly checkIntegrity?: boolean;
}

export async function openStore(settings: StoreSettings): Promise<Store> {
  if (settings.databaseUrl !== undefined) {
    // Loaded only here: node-postgres, and the fetch machinery it wakes as it loads, cost every process
    // a tenth of a second of CPU at its start, which a server on SQLite or in memory has no use for.
    const { createPostgresStore } = await import("./postgres.js");
    return createPostgresStore(settings.databaseUrl, { poolSize: settings.databasePoolSize ?? DEFAULT_POOL_SIZE });
  }
  if (settings.dataDir === ":memory:") return createMemoryStore();
  // Loaded only here too: the SQLite store and better-sqlite3's native module cost a process 40 ms of CPU
  // at its start, which one that keeps its data in memory (every test's server, unless it names a
  // DATA_DIR) has no use for.
  const { createSqliteStore } = await import("./sqlite.js");
  return createSqliteStore(path.join(settings.dataDir, DATABASE_FILE), { durability: settings.durability, checkIntegrity: settings.checkIntegrity ?? true });
}
