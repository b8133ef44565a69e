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
// Where there is no such file (a database in memory, which no other
// connection can open; or one not in WAL mode) data_version is asked.

import { closeSync, openSync, readSync } from "node:fs";

/** The WAL-index header's first copy, in bytes. */
const HEADER_BYTES = 48;

/**
 * A function whose result changes whenever another connection may have
 * committed since its last call (the same number: nobody has). `dataVersion`
 * reads PRAGMA data_version, for a database whose `-shm` file cannot be read.
 */
export function commitWatch(file: string, dataVersion: () => number): { readonly seen: () => number; readonly close: () => void } {
  if (file === ":memory:" || file === "") return { seen: () => 0, close: () => {} };
  let fd = -1;
  const header = Buffer.alloc(HEADER_BYTES);
  const last = Buffer.alloc(HEADER_BYTES);
  let changes = 0;
  const seen = (): number => {
    if (fd < 0) {
      try {
        fd = openSync(`${file}-shm`, "r");
      } catch {
        return -1 - dataVersion();
      }
    }
    let read: number;
    try {
      read = readSync(fd, header, 0, HEADER_BYTES, 0);
    } catch {
      read = 0;
    }
    // Too short to hold a header: not a WAL database we can read (or not yet one).
    if (read < HEADER_BYTES) return -1 - dataVersion();
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
