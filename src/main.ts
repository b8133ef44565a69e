// `npm start`: read the settings, serve the API, shut down cleanly on a signal.

import { createApp } from "./app.js";
import { ConfigError, loadConfig, type Config } from "./config.js";
import { createServer, type TlsFiles } from "./http/server.js";
import { fieldLines } from "./http/response.js";
import { readFileSync } from "node:fs";
import { createSecureContext } from "node:tls";
import { accessLog } from "./log.js";
import { openStore } from "./store/open.js";
import { StoreOpenError } from "./store/sqlite.js";
import { seed } from "./store/seed.js";
import { ensureAdmin } from "./tokens.js";

function readTls(config: Config): TlsFiles | undefined {
  if (config.tls === undefined) return undefined;
  const read = (what: string, file: string) => {
    try {
      return readFileSync(file);
    } catch (error) {
      throw new ConfigError(`cannot read ${what} ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  };
  const files = { cert: read("the TLS certificate", config.tls.certPath), key: read("the TLS key", config.tls.keyPath) };
  try {
    // Rejects a PEM it cannot parse, or a key that does not match the certificate.
    createSecureContext(files);
  } catch (error) {
    throw new ConfigError(`TLS_CERT and TLS_KEY must hold a PEM certificate and its private key: ${(error as Error).message}`);
  }
  return files;
}

async function main(): Promise<void> {
  const config = loadConfig(process.env, process.argv.slice(2));
  const tls = readTls(config);
  const store = openStore(config.dataDir, config.durability);
  seed(store);
  const created = ensureAdmin(store, config.adminToken);
  if (created !== undefined) console.log(created);
  const app = createApp({ store, writeRequiresToken: config.writeRequiresToken, v1Sunset: config.v1Sunset });
  const server = createServer(app.handle, {
    ...(tls === undefined ? {} : { tls }),
    // RFC 6797: tell browsers to use HTTPS from now on; only meaningful over HTTPS.
    responseFields: tls !== undefined && config.hstsMaxAge > 0 ? fieldLines({ "Strict-Transport-Security": `max-age=${config.hstsMaxAge}` }) : "",
    maxConnections: config.maxConnections,
    limits: config.limits,
    headersTimeoutMs: config.headersTimeoutMs,
    bodyTimeoutMs: config.bodyTimeoutMs,
    keepAliveTimeoutMs: config.keepAliveTimeoutMs,
    ...(config.quiet ? {} : { onExchange: accessLog() }),
  });
  const address = await server.listen(config.port, config.host);
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  console.log(`listening on ${tls === undefined ? "http" : "https"}://${host}:${address.port}`);

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
