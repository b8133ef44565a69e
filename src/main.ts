// `npm start`: read the settings, then serve: as one process, or with
// WORKERS=N as a primary and N workers sharing the port.

import cluster from "node:cluster";
import { runPrimary } from "./cluster.js";
import { ConfigError } from "./config-error.js";
import { loadConfig } from "./config.js";
import { serve } from "./serve.js";
import { StoreOpenError, StoreUnavailableError } from "./store/errors.js";

async function main(): Promise<void> {
  const config = loadConfig(process.env, process.argv.slice(2));
  if (config.workers > 1 && cluster.isPrimary) await runPrimary(config);
  else await serve(config);
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof StoreOpenError || error instanceof StoreUnavailableError) console.error(`startline: ${error.message}`);
  else if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") {
    console.error(`startline: the address is already in use; set PORT to another port (PORT=0 picks a free one)`);
  } else console.error("startline: could not start:", error);
  process.exit(1);
});
