// A proxy (nginx, HAProxy) run as a child process for one test: stopped with
// SIGTERM (its master then takes its workers down with it) and its temp
// directory removed when the test ends, or when the test process exits
// first, so that no proxy outlives the file that started it.

import type { ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import type { Test } from "tap";

export interface OwnedChild {
  /** Resolves with the exit code once the child is gone. */
  readonly exited: Promise<number | null>;
  running(): boolean;
}

export function ownForTest(t: Test, child: ChildProcess, dir: string): OwnedChild {
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  let running = true;
  const reap = () => {
    child.kill("SIGTERM");
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", reap);
  void exited.then(() => {
    running = false;
    process.removeListener("exit", reap);
  });
  t.teardown(async () => {
    if (running) {
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });
  return { exited, running: () => running };
}
