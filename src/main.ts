// `npm start`: read the settings, then serve: as one process, or with
// WORKERS=N as a primary and N workers sharing the port.

import cluster from "node:cluster";
import { ConfigError } from "./config-error.js";
import { loadConfig } from "./config.js";
import { StoreOpenError, StoreUnavailableError } from "./store/errors.js";

async function main(): Promise<void> {
  const config = loadConfig(process.env, process.argv.slice(2));
  // Each process loads only what it runs: a primary never serves a request (its workers load the API,
  // the docs and their schemas), and a worker never runs the primary.
  if (config.workers > 1 && cluster.isPrimary) await (await import("./cluster.js")).runPrimary(config);
  else await (await import("./serve.js")).serve(config);
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof StoreOpenError || error instanceof StoreUnavailableError) console.error(`startline: ${error.message}`);
  else if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") {
    console.error(`startline: the address is already in use; set PORT to another port (PORT=0 picks a free one)`);
  } else console.error("startline: could not start:", error);
  process.exit(1);
});
