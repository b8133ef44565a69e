// Bringing a PostgreSQL database to the schema this startline knows, at start.
//
// Everything happens in one transaction that first takes an advisory lock:
// two instances starting at once on a new database queue on the lock, the
// first creates the tables, the second then finds them there and does
// nothing. PostgreSQL's DDL is transactional, so a migration that fails
// leaves no half-made table behind.

import type { PoolClient } from "pg";
import { StoreOpenError } from "./errors.js";
import { MIGRATIONS_TABLE, PG_LOCK, PG_LOCK_SPACE, PG_MIGRATIONS } from "./pg-schema.js";

/** Applies the missing migrations; returns the schema version the database is at. */
export async function migrate(client: PoolClient, where: string): Promise<number> {
  await client.query("BEGIN");
  try {
    // A migration may take as long as the data it rewrites, and a second instance waits for the first's on the
    // lock: the serving limit on a statement (statement_timeout, postgres.ts) is not for them.
    await client.query("SET LOCAL statement_timeout = 0");
    await client.query("SELECT pg_advisory_xact_lock($1, $2)", [PG_LOCK_SPACE, PG_LOCK.migrate]);
    await client.query(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await client.query<{ version: number }>(`SELECT coalesce(max(version), 0) AS version FROM ${MIGRATIONS_TABLE}`);
    const current = rows[0]!.version;
    if (current > PG_MIGRATIONS.length) {
      throw new StoreOpenError(
        `the database at ${where} has schema version ${current}, newer than this startline understands (${PG_MIGRATIONS.length}). Run a newer startline, or use another database.`,
      );
    }
    for (let version = current; version < PG_MIGRATIONS.length; version++) {
      const migration = PG_MIGRATIONS[version]!;
      if (typeof migration === "string") await client.query(migration);
      else {
        await client.query(migration.sql);
        await migration.then(client);
      }
      await client.query(`INSERT INTO ${MIGRATIONS_TABLE} (version) VALUES ($1)`, [version + 1]);
    }
    await client.query("COMMIT");
    return PG_MIGRATIONS.length;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined); // the connection may be the thing that failed
    throw error;
  }
}
