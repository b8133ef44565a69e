// A real primary (src/cluster.ts, as built in dist/) with stand-in workers,
// for test/cluster-waiting.test.ts: started like `npm start` (WORKERS, PORT,
// ... from the environment), it prints the same lines. A worker of the first
// generation says it is ready, so the primary announces its address, and
// closes any connection it is given; a replacement never says it is ready.
// Once the test has killed the first workers, no worker is ready for as long
// as it likes: every connection the primary accepts waits, and the bounds on
// waiting can be reached without a race against a worker's start.

import cluster from "node:cluster";

// Each process loads only what it runs, as src/main.ts does: the test starts twelve stand-ins, and
// the settings' parser and the primary's modules they no longer load cost some 0.4 s of CPU in all.
if (cluster.isPrimary) {
  const [{ runPrimary }, { loadConfig }] = await Promise.all([import("../../dist/src/cluster.js"), import("../../dist/src/config.js")]);
  await runPrimary(loadConfig(process.env, []));
} else if (cluster.worker.id <= Number(process.env.WORKERS)) {
  // The first generation (the primary checked WORKERS before it forked them).
  (await import("../../dist/src/cluster.js")).adoptConnections((socket) => socket.destroy());
}
// A replacement: alive (its IPC channel, listened on, keeps it so) and silent.
else process.on("message", () => {});
