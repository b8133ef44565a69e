// A real primary (src/cluster.ts, as built in dist/) with stand-in workers,
// for test/cluster-waiting.test.ts: started like `npm start` (WORKERS, PORT,
// ... from the environment), it prints the same lines. A worker of the first
// generation says it is ready, so the primary announces its address, and
// closes any connection it is given; a replacement never says it is ready.
// Once the test has killed the first workers, no worker is ready for as long
// as it likes: every connection the primary accepts waits, and the bounds on
// waiting can be reached without a race against a worker's start.

import cluster from "node:cluster";
import { adoptConnections, runPrimary } from "../../dist/src/cluster.js";
import { loadConfig } from "../../dist/src/config.js";

const config = loadConfig(process.env, []);
if (cluster.isPrimary) await runPrimary(config);
else if (cluster.worker.id <= config.workers) adoptConnections((socket) => socket.destroy());
// A replacement: alive (its IPC channel, listened on, keeps it so) and silent.
else process.on("message", () => {});
