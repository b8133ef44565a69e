// Preloaded (node --expose-gc --require bench/gc-on-signal.cjs) into the
// servers of the idle-* scenarios: SIGUSR2 makes the process run a full
// garbage collection, so that the benchmark reads RSS without the garbage of
// the requests that opened the connections (how much of it is still resident
// otherwise depends on when V8 last collected). SIGUSR2 is otherwise unused by
// node, startline and the reference servers.
"use strict";

process.on("SIGUSR2", () => {
  if (typeof globalThis.gc === "function") globalThis.gc();
});
