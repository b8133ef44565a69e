// `npm start`: read the settings, serve the API, shut down cleanly on a signal.

import { createApp } from "./app.js";
import { ConfigError, loadConfig } from "./config.js";
import { createServer } from "./http/server.js";
import { accessLog } from "./log.js";
import { openStore } from "./store/open.js";
import { StoreOpenError } from "./store/sqlite.js";
import { seed } from "./store/seed.js";
import { ensureAdmin } from "./tokens.js";

async function main(): Promise<void> {
  const config = loadConfig(process.env, process.argv.slice(2));
  const store = openStore(config.dataDir, config.durability);
  seed(store);
  const created = ensureAdmin(store, config.adminToken);
  if (created !== undefined) console.log(created);
  const app = createApp({ store, writeRequiresToken: config.writeRequiresToken, v1Sunset: config.v1Sunset });
  const server = createServer(app.handle, {
    limits: config.limits,
    headersTimeoutMs: config.headersTimeoutMs,
    bodyTimeoutMs: config.bodyTimeoutMs,
    keepAliveTimeoutMs: config.keepAliveTimeoutMs,
    ...(config.quiet ? {} : { onExchange: accessLog() }),
  });
  const address = await server.listen(config.port, config.host);
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  console.log(`listening on http://${host}:${address.port}`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: finishing requests in flight, then exiting`);
    await server.close(config.shutdownGraceMs);
    store.close();
    const usage = Object.entries(app.usage()).map(([version, n]) => `${version}=${n}`).join(" ");
    console.log(`requests per API version: ${usage}`);
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof StoreOpenError) console.error(`startline: ${error.message}`);
  else if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") {
    console.error(`startline: the address is already in use; set PORT to another port (PORT=0 picks a free one)`);
  } else console.error("startline: could not start:", error);
  process.exit(1);
});
