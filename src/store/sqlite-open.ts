// Opening the SQLite database file: the connection settings, a check that
// the file is sound, and the schema migrations. Every failure an operator can
// fix becomes a StoreOpenError whose message says what to do (main.ts prints
// it as one line and exits 1).

import Database from "better-sqlite3";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { StoreOpenError } from "./errors.js";
import { MIGRATIONS } from "./schema.js";

export type Durability = "normal" | "full";

export interface OpenOptions {
  readonly durability?: Durability;
  /** How long to wait for another process's lock before giving up (ms). */
  readonly busyTimeoutMs?: number;
  /**
   * Check the whole file with PRAGMA quick_check before using it (default
   * true). Off only where another process has just checked the same file:
   * the workers of WORKERS, whose primary checked it before forking them.
   */
  readonly checkIntegrity?: boolean;
}

export function openDatabase(file: string, options: OpenOptions): Database.Database {
  let db: Database.Database;
  try {
    if (file !== ":memory:") mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    db = new Database(file, { timeout: options.busyTimeoutMs ?? 5000 });
  } catch (error) {
    throw new StoreOpenError(`cannot open the database ${file}: ${(error as Error).message}. Check that DATA_DIR exists and is writable by this user.`);
  }
  try {
    db.pragma("journal_mode = WAL");
    db.pragma(`synchronous = ${options.durability === "full" ? "FULL" : "NORMAL"}`);
    db.pragma("foreign_keys = ON");
    if (options.checkIntegrity ?? true) checkIntegrity(db, file);
    migrate(db, file);
    return db;
  } catch (error) {
    db.close();
    if (error instanceof StoreOpenError) throw error;
    const code = (error as { code?: string }).code ?? "";
    if (code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT") {
      throw new StoreOpenError(`${file} is not a startline database or is corrupt (${code}). ${RESTORE}`);
    }
    if (code === "SQLITE_BUSY" || code === "SQLITE_LOCKED") {
      throw new StoreOpenError(`${file} is locked by another process (${code}). Stop the other process, or give this server its own DATA_DIR.`);
    }
    if (code === "SQLITE_READONLY" || code === "SQLITE_CANTOPEN" || code === "SQLITE_IOERR" || code.startsWith("SQLITE_READONLY")) {
      throw new StoreOpenError(`cannot write to ${file} (${code}). Check that DATA_DIR is writable by this user.`);
    }
    throw new StoreOpenError(`cannot prepare the database ${file}: ${(error as Error).message}`);
  }
}

const RESTORE = "Move it aside (or restore a backup) and start again.";

/** Reads every page once through a memory map for the check; mapping more than the file needs costs nothing. */
const CHECK_MMAP_BYTES = 2 ** 40;

/**
 * PRAGMA quick_check: every b-tree page is read and its structure verified
 * (it leaves out what integrity_check adds: that each index matches its
 * table, and that UNIQUE holds, the costly part). A
 * file with zeroed or overwritten pages would otherwise open fine and fail
 * request by request, as 500s, for as long as it runs.
 *
 * The cost is one read of the file. Measured on a 1.05 GB database (a
 * million posts) on a 2-core VM: 1.5 to 3 s from a cold page cache, about
 * 1 s warm. Through SQLite's default pread path the same check took 12 to
 * 20 s cold, because pages read in b-tree order defeat the kernel's
 * read-ahead; so the check reads through a memory map, whose page faults do
 * read ahead, and switches the map off again afterwards, so that serving
 * works exactly as it did.
 */
function checkIntegrity(db: Database.Database, file: string): void {
  if (file === ":memory:") return;
  db.pragma(`mmap_size = ${CHECK_MMAP_BYTES}`); // SQLite caps it at its compile-time maximum (2 GiB on this build)
  let problems: string[];
  try {
    const rows = db.pragma("quick_check(10)") as { quick_check: string }[];
    problems = rows.map((row) => row.quick_check).filter((line) => line !== "ok");
  } catch (error) {
    // Damage bad enough stops the check itself: that is its finding too.
    if (!String((error as { code?: unknown }).code).startsWith("SQLITE_CORRUPT")) throw error;
    problems = [(error as Error).message];
  } finally {
    db.pragma("mmap_size = 0");
  }
  if (problems.length === 0) return;
  const first = problems[0]!.replace(/\s+/g, " ").trim().slice(0, 200);
  const count = problems.length >= 10 ? "10 or more problems" : problems.length === 1 ? "a problem" : `${problems.length} problems`;
  throw new StoreOpenError(
    `${file} is corrupt: PRAGMA quick_check found ${count}, the first: "${first}". ` +
      `Stop every process using it, then restore a backup, or save what is readable with: sqlite3 ${file} .recover | sqlite3 recovered.sqlite (and use that file).`,
  );
}

/** Schema versions are counted in PRAGMA user_version; each migration moves it up by one. */
function migrate(db: Database.Database, file: string): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new StoreOpenError(
      `${file} has schema version ${current}, newer than this startline understands (${MIGRATIONS.length}). Run a newer startline, or use another DATA_DIR.`,
    );
  }
  for (let version = current; version < MIGRATIONS.length; version++) {
    db.transaction(() => {
      // Another process may have migrated between our read and this write lock: read again under the lock.
      if ((db.pragma("user_version", { simple: true }) as number) !== version) return;
      const migration = MIGRATIONS[version]!;
      if (typeof migration === "string") db.exec(migration);
      else {
        db.exec(migration.sql);
        migration.then(db);
      }
      db.pragma(`user_version = ${version + 1}`);
    }).immediate();
  }
}
