// Checkpoints of a SQLite database in WAL mode, on a thread of their own.
//
// A commit appends its pages to the WAL; a checkpoint copies them back into
// the database file and syncs both (with synchronous NORMAL or FULL), so the
// WAL can start over. SQLite runs one by default in whichever commit makes
// the WAL pass 1,000 pages (about 4 MB): on the event loop, in the middle of
// some request's write, for as long as the copy and the two fsyncs take.
// Measured on the benchmark machine: about 20 ms with nothing else running,
// 110 to 120 ms while six clients read lists, and every other request waits
// that long.
//
// So the server's own connection never checkpoints (wal_autocheckpoint = 0),
// and after each of its writes this looks at how many frames of the WAL are
// not yet copied back: in the WAL-index (the `-shm` file beside the database,
// SQLite's "WAL-mode File Format" section 2.1: the header's mxFrame, the last
// valid frame, and the checkpoint information's nBackfill, the frames copied
// so far), one read of 100 bytes. Past CHECKPOINT_FRAMES, a connection of its
// own on a thread of its own runs a PASSIVE checkpoint (which never waits for
// readers or writers, of this process or another: it copies what it can, and
// the next one copies the rest; while another connection's checkpoint runs,
// of another instance or worker on the same file, it answers busy and copies
// nothing, which is no failure). One at a time: while one runs, writes do not
// ask for another.
//
// Nothing about durability changes: a PASSIVE checkpoint is the kind SQLite
// runs itself, and the commit was already what it was. If the thread fails
// (it exits, or cannot open the file), the connection checkpoints for itself
// again, as SQLite does by default, so the WAL never grows without bound.

import { closeSync, openSync, readSync, realpathSync } from "node:fs";
import { endianness } from "node:os";
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/** Frames of the WAL not yet copied back (pages of 4 KiB: about 4 MB) past which a checkpoint is asked for: SQLite's own default. */
export const CHECKPOINT_FRAMES = 1000;

/** The WAL-index header (48 bytes, twice) and the checkpoint information's first fields: mxFrame at 16, nBackfill at 96. */
const INDEX_BYTES = 100;
const MX_FRAME = 16;
const N_BACKFILL = 96;
/** The WAL-index is in the machine's own byte order (it is shared memory, never moved between machines). */
const readU32 = endianness() === "LE" ? (b: Buffer, at: number) => b.readUInt32LE(at) : (b: Buffer, at: number) => b.readUInt32BE(at);

/** The thread's program: CommonJS, evaluated, with better-sqlite3 resolved from here (the same copy the server loads). */
const PROGRAM = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.betterSqlite3);
// It never waits for a lock: a PASSIVE checkpoint takes none that a reader or writer holds.
const db = new Database(workerData.file, { timeout: 0 });
db.pragma("synchronous = " + workerData.synchronous);
parentPort.on("message", () => {
  try {
    const [result] = db.pragma("wal_checkpoint(PASSIVE)");
    parentPort.postMessage({ busy: result.busy, log: result.log, checkpointed: result.checkpointed });
  } catch (error) {
    parentPort.postMessage({ error: String((error && error.message) || error) });
  }
});
`;

/** What one checkpoint did: SQLite's own answer to PRAGMA wal_checkpoint (frames in the WAL, frames copied back). */
export interface CheckpointResult {
  readonly busy: number;
  readonly log: number;
  readonly checkpointed: number;
}

export interface Checkpointer {
  /** After a write of the server's connection: asks for a checkpoint when the WAL has grown past CHECKPOINT_FRAMES. */
  afterWrite(): void;
  /** Resolves when no checkpoint is running (with the last one's result, if any ran). */
  settled(): Promise<CheckpointResult | undefined>;
  close(): Promise<void>;
}

/**
 * Checkpoints of the database `file` (in WAL mode) off the event loop.
 * `ownCheckpoints(on)` turns the server connection's own checkpoints off
 * (at once) or on again (when the thread fails); `onDone` is told of each
 * checkpoint made. `program`: the thread's, for tests of a thread that fails.
 */
export function checkpointer(
  file: string,
  synchronous: "NORMAL" | "FULL",
  ownCheckpoints: (on: boolean) => void,
  onDone?: (result: CheckpointResult) => void,
  program = PROGRAM,
): Checkpointer {
  ownCheckpoints(false);
  const index = Buffer.alloc(INDEX_BYTES);
  let fd = -1;
  let worker: Worker | undefined;
  let failed = false;
  let running: Promise<CheckpointResult | undefined> | undefined;
  let last: CheckpointResult | undefined;

  const fail = () => {
    if (failed) return;
    failed = true;
    ownCheckpoints(true);
  };

  /** Frames of the WAL not yet copied back, or 0 when the index cannot be read. */
  const pending = (): number => {
    try {
      if (fd < 0) fd = openSync(`${realpathSync(file)}-shm`, "r");
      if (readSync(fd, index, 0, INDEX_BYTES, 0) < INDEX_BYTES) return 0;
    } catch {
      return 0;
    }
    return readU32(index, MX_FRAME) - readU32(index, N_BACKFILL);
  };

  const start = (): Worker => {
    const started = new Worker(program, { eval: true, workerData: { file, synchronous, betterSqlite3: createRequire(import.meta.url).resolve("better-sqlite3") } });
    started.on("error", fail);
    started.on("exit", fail);
    // Only a checkpoint being run keeps the process alive.
    started.unref();
    return started;
  };

  const run = (): Promise<CheckpointResult | undefined> => {
    worker ??= start();
    const thread = worker;
    thread.ref();
    return new Promise((resolve) => {
      const done = (message: CheckpointResult | { error: string }) => {
        thread.off("message", done);
        thread.off("exit", gone);
        thread.unref();
        // A checkpoint that could not run (a file it cannot open, say) is the thread failing: the connection checkpoints again.
        if ("error" in message) fail();
        else {
          last = message;
          onDone?.(message);
        }
        resolve("error" in message ? undefined : message);
      };
      const gone = () => resolve(undefined);
      thread.on("message", done);
      thread.once("exit", gone);
      thread.postMessage(null);
    });
  };

  return {
    afterWrite() {
      if (failed || running !== undefined || pending() < CHECKPOINT_FRAMES) return;
      running = run().finally(() => (running = undefined));
    },
    settled: () => running ?? Promise.resolve(last),
    async close() {
      await running;
      if (fd >= 0) closeSync(fd);
      fd = -1;
      const thread = worker;
      worker = undefined;
      failed = true;
      if (thread !== undefined) {
        thread.off("exit", fail);
        await thread.terminate();
      }
    },
  };
}
