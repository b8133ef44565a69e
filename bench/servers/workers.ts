// WORKERS=n for the benchmark's reference servers: the primary forks n
// node:cluster workers that share the listening port (the default scheduling,
// round-robin from the primary on Linux, as startline's WORKERS uses), prints
// the "listening on" line once one of them listens, and on SIGTERM/SIGINT
// stops them and exits 0.

import cluster from "node:cluster";

/**
 * In the primary with WORKERS > 1: forks the workers and returns true (the
 * caller must not serve). Otherwise (a single process, or a worker): false.
 */
export function runPrimaryIfWorkers(scheme: "http" | "https"): boolean {
  const n = Number(process.env.WORKERS ?? "1");
  if (!Number.isInteger(n) || n < 1) throw new Error(`WORKERS must be a whole number >= 1, got ${process.env.WORKERS}`);
  if (n === 1 || !cluster.isPrimary) return false;

  let stopping = false;
  let announced = false;
  cluster.on("listening", (_worker, address) => {
    if (announced) return;
    announced = true;
    console.log(`listening on ${scheme}://${address.address}:${address.port}`);
  });
  cluster.on("exit", (worker, code, signal) => {
    if (stopping) return;
    // A benchmark must not go on with a worker less: fail loudly.
    console.error(`worker ${worker.process.pid} exited (${signal ?? `code ${code}`})`);
    process.exit(1);
  });
  for (let i = 0; i < n; i++) cluster.fork();

  const stop = async () => {
    if (stopping) return;
    stopping = true;
    const workers = Object.values(cluster.workers ?? {}).filter((w) => w !== undefined);
    await Promise.all(
      workers.map(
        (w) =>
          new Promise<void>((resolve) => {
            if (w.isDead()) return resolve();
            w.once("exit", () => resolve());
            w.process.kill("SIGTERM");
          }),
      ),
    );
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop());
  process.on("SIGINT", () => void stop());
  return true;
}

/** Whether this process should print the "listening on" line (the primary does it under WORKERS). */
export const announces = !cluster.isWorker;
