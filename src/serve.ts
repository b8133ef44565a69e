// One serving process: the single server of `npm start`, or one worker
// under WORKERS. Opens the store, builds the app, listens, and shuts down
// gracefully on SIGTERM/SIGINT.

import cluster from "node:cluster";
import { readFileSync } from "node:fs";
import { createSecureContext } from "node:tls";
import { createApp } from "./app.js";
import { adoptConnections, formatUsage, reportUsage, workerUsage } from "./cluster.js";
import { ConfigError } from "./config-error.js";
import type { Config } from "./config.js";
import { fieldLines } from "./http/message/response.js";
import { createServer, type TlsFiles } from "./http/connection/server.js";
import { accessLog } from "./log.js";
import { openStore } from "./store/open.js";
import { createTrace, useColor } from "./trace/index.js";
import { seed } from "./store/seed.js";
import { applyAdminSetting, createFirstAdmin } from "./tokens.js";

export function readTls(config: Config): TlsFiles | undefined {
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

export async function serve(config: Config): Promise<void> {
  const worker = cluster.isWorker;
  const tls = readTls(config);
  const store = await openStore({ ...config, checkIntegrity: !worker });
  if (!worker) {
    // Under WORKERS the primary has done this once, before any worker started.
    // Several instances on one PostgreSQL database may all get here at once:
    // both steps are atomic in the store, so one of them seeds, and at most
    // one creates an admin token (once it listens, below).
    try {
      await seed(store);
      for (const line of await applyAdminSetting(store, config.adminToken)) console.log(line);
    } catch (error) {
      await store.close();
      throw error;
    }
  }
  const app = createApp({
    store,
    writeRequiresToken: config.writeRequiresToken,
    v1Sunset: config.v1Sunset,
    ...(worker ? { usage: workerUsage } : {}),
    limits: config.server.limits,
    wireView: config.wireView,
    kept: config.kept,
    secure: tls !== undefined,
    // Unset, the store's own key: every worker and instance on one database holds the same.
    labSecret: config.labSecret ?? (await store.key("lab-digest")),
  });
  const server = createServer(app, {
    ...(tls === undefined ? {} : { tls }),
    // RFC 6797: tell browsers to use HTTPS from now on; only meaningful over HTTPS.
    responseFields: tls !== undefined && config.hstsMaxAge > 0 ? fieldLines({ "Strict-Transport-Security": `max-age=${config.hstsMaxAge}` }) : "",
    ...config.server,
    ...(config.quiet ? {} : { onExchange: accessLog(process.stdout, { format: config.logFormat, ...(worker ? { worker: cluster.worker!.id } : {}) }) }),
    ...(config.trace
      ? {
          trace: createTrace({
            out: process.stdout,
            color: useColor(process.stdout, process.env.NO_COLOR),
            bodyBytes: config.traceBodyBytes,
            prefix: worker ? `w${cluster.worker!.id}` : "",
          }),
        }
      : {}),
  });
  if (!worker) {
    const address = await server.listen(config.port, config.host);
    // Printed before "listening on", so that whoever waits for that line has the token too.
    const created = await createFirstAdmin(store, config.adminToken);
    if (created !== undefined) console.log(created);
    const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
    console.log(`listening on ${tls === undefined ? "http" : "https"}://${host}:${address.port}`);
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const closed = server.close(config.shutdownGraceMs);
    // The listening socket is closed once close() has returned: the line says what has happened.
    if (!worker) console.log(`${signal}: stopped accepting connections; finishing requests in flight`);
    await closed;
    await store.close();
    if (worker) await reportUsage(app.usage());
    else console.log(`requests per API version: ${formatUsage(app.usage())}`);
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
  // A worker does not listen: the primary accepts, and hands it connections (cluster.ts says why).
  if (worker) adoptConnections((socket) => server.adopt(socket));
}
