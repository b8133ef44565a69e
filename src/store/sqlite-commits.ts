// Whether another connection may have committed to a SQLite database since
// the last look, as cheaply as can be: a read served from kept bytes asks it
// on every request (sqlite.ts, revision; src/api/kept-reads.ts).
//
// PRAGMA data_version answers it exactly, but as a statement: SQLite opens
// a read transaction for it, and on a database in WAL mode that is a lock
// and an unlock of the shared-memory file and a stat of the WAL's name,
// three system calls a read. The answer is also in the WAL-index header,
// the first 48 bytes of the `-shm` file beside the database (documented in
// SQLite's "WAL-mode File Format", section 2.1): every commit rewrites it (its
// change counter, the WAL's last frame and their checksums; a restart of the
// WAL, its salts), and writes this first copy last, before the commit
// returns to its writer, so before any writer can acknowledge anything. One
// read of those 48 bytes is one system call. A header read while a commit
// rewrites it may come out torn; torn is never equal to the one seen before
// unless none of the commit's bytes had landed yet, and then the commit had
// not returned either: the read that sees it unchanged comes before the
// write, which is what a reader may see. Any difference, torn or real, only
// makes the store read its revision again.
//
// The `-shm` file is named after the database's real path (SQLite
// resolves symbolic links in it), and is read only while the database is in
// WAL mode: any other file by that name (one left beside a link, a stale one
// beside a database in another journal mode) would never change. Where it
// cannot be read, and for a database in memory (which no other connection
// can open), data_version is asked instead.

import { closeSync, openSync, readSync, realpathSync } from "node:fs";

/** The WAL-index header's first copy, in bytes. */
const HEADER_BYTES = 48;

/** Reads that find no `-shm` file to open (it comes with the first read transaction) before it is looked for again. */
const RETRY_AFTER = 256;

/**
 * A function whose result changes whenever another connection may have
 * committed since its last call (the same number: nobody has). `wal`: the
 * database is in WAL mode. `dataVersion` reads PRAGMA data_version, asked
 * when the `-shm` file cannot be read.
 */
export function commitWatch(file: string, wal: boolean, dataVersion: () => number): { readonly seen: () => number; readonly close: () => void } {
  if (file === ":memory:" || file === "") return { seen: () => 0, close: () => {} };
  const fallback = () => -1 - dataVersion();
  if (!wal) return { seen: fallback, close: () => {} };
  let fd = -1;
  let untilRetry = 0;
  const header = Buffer.alloc(HEADER_BYTES);
  const last = Buffer.alloc(HEADER_BYTES);
  let changes = 0;
  const seen = (): number => {
    if (fd < 0) {
      if (untilRetry > 0) {
        untilRetry--;
        return fallback();
      }
      try {
        fd = openSync(`${realpathSync(file)}-shm`, "r");
      } catch {
        untilRetry = RETRY_AFTER;
        return fallback();
      }
    }
    let read: number;
    try {
      read = readSync(fd, header, 0, HEADER_BYTES, 0);
    } catch {
      read = 0;
    }
    // Too short to hold a header: not (yet) a WAL index.
    if (read < HEADER_BYTES) return fallback();
    if (!header.equals(last)) {
      header.copy(last);
      changes++;
    }
    return changes;
  };
  const close = () => {
    if (fd >= 0) closeSync(fd);
    fd = -1;
  };
  return { seen, close };
}
