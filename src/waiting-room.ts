// Under WORKERS=N the primary accepts every connection and hands it to a
// ready worker (src/cluster.ts). While none is ready (all of them restarting)
// a connection waits here, first come first served, bounded both ways: past
// `max` waiting, a new one is turned away at once; and one that has waited
// `maxWaitMs` is turned away then. Without the bounds, a flood of
// connections during a restart window held a socket each in the primary,
// for as long as no worker came up, however many there were.

export interface WaitingRoomLimits {
  /** Connections waiting at most; one more is turned away ("full"). */
  readonly max: number;
  /** How long one may wait; then it is turned away ("late"). */
  readonly maxWaitMs: number;
}

export type TurnedAway = "full" | "late";

export interface WaitingRoom<T> {
  /** Let `item` wait, or turn it away now if `max` are waiting already. */
  admit(item: T): void;
  /** Everything still waiting, oldest first; nothing waits after this. */
  release(): T[];
  readonly size: number;
}

/**
 * A queue bounded in length and in time. `turnAway` is called, once, for
 * each item that is refused or that waits too long; an item released before
 * its time is never passed to it. One timer serves the whole queue: entries
 * are in arrival order, so the oldest one's deadline is the next to come.
 */
export function waitingRoom<T>(limits: WaitingRoomLimits, turnAway: (item: T, why: TurnedAway) => void): WaitingRoom<T> {
  const entries: { readonly item: T; readonly deadline: number }[] = [];
  /** Set while anything waits: fires at the oldest entry's deadline. */
  let timer: NodeJS.Timeout | undefined;

  const arm = () => {
    const oldest = entries[0];
    if (oldest === undefined) return void (timer = undefined);
    timer = setTimeout(expire, Math.max(0, oldest.deadline - performance.now()));
    // The primary's listener keeps its process alive; a connection waiting must not keep a test's.
    timer.unref();
  };
  const expire = () => {
    const now = performance.now();
    let late = 0;
    while (late < entries.length && entries[late]!.deadline <= now) late++;
    // Out of the queue before anyone hears of them: turnAway may admit or release.
    const gone = entries.splice(0, late);
    arm();
    for (const entry of gone) turnAway(entry.item, "late");
  };

  return {
    admit(item) {
      if (entries.length >= limits.max) return turnAway(item, "full");
      entries.push({ item, deadline: performance.now() + limits.maxWaitMs });
      if (timer === undefined) arm();
    },
    release() {
      clearTimeout(timer);
      timer = undefined;
      return entries.splice(0).map((entry) => entry.item);
    },
    get size() {
      return entries.length;
    },
  };
}
