// A hang detector for a test that waits for an event: the event passes the
// test with its name; an event that has not come after a bound fails it with
// that name, at once, rather than leaving the runner's own timeout to report
// a file that "timed out" without saying what it was waiting for. The bound
// detects a hang and asserts nothing about speed: the events waited for here
// take milliseconds, and the bound is thousands of times that.

import type { Test } from "tap";

export const HANG_MS = 10_000;

/** Waits for `event`; passes `t` with `what` when it comes, throws naming `what` if it has not come after `ms`. */
export async function happens<T>(t: Test, event: Promise<T>, what: string, ms = HANG_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`hang: ${ms / 1000} s on, this has not happened: ${what}`)), ms);
  });
  try {
    const value = await Promise.race([event, hung]);
    t.pass(what);
    return value;
  } finally {
    clearTimeout(timer);
  }
}
