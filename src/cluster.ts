// WORKERS=N: one primary process and N workers (node:cluster) sharing the
// listening port and the database (SQLite, or PostgreSQL with DATABASE_URL).
//
// The primary prepares the database (migrations, seed data, ADMIN_TOKEN)
// before any worker starts, so workers never race to seed, and creates the
// first admin token once the workers are ready (src/tokens.ts says why); then
// it forks the workers, replaces one that crashes, sums their request counts,
// and on SIGTERM/SIGINT lets every worker drain before it exits 0.
//
// The primary listens, and hands each connection it accepts to the next
// ready worker in turn, over the worker's IPC channel. It does not leave
// this to node:cluster's own round robin, nor to Node's closing of a sent
// socket: both keep the primary's copy of a connection open until the
// worker acknowledges it, and a worker killed before it did never does (the
// channel then never even reports its disconnect, waiting for that
// acknowledgement), so the connection stayed open in the primary with nobody
// to answer it, and its client waited for ever (docs/reliability.md). Here
// the primary keeps its copy (keepOpen) until the worker says it has the
// connection, and closes it then (the worker's copy stays open), or when the
// worker process has exited: so every connection a dead worker had, or was
// being given, is closed, and its client sees that.
//
// A connection accepted while no worker is ready (all of them restarting)
// waits in the primary for one, within bounds (src/waiting-room.ts): at most
// as many wait as the workers would serve together (MAX_CONNECTIONS each),
// and one more is refused as a worker refuses one past its cap (a 503, or
// over HTTPS closed); and none waits longer than HEADERS_TIMEOUT_MS, the time
// a worker gives a request's head, before it is closed. The primary reads
// nothing, so it cannot tell a client that left from one still waiting: the
// deadline is what lets the first go.

import cluster, { type Worker } from "node:cluster";
import { once } from "node:events";
import net from "node:net";
import type { UsageCounts } from "./api/operator.js";
import type { Config } from "./config.js";
import { refuse } from "./http/connection/refuse.js";
import { openStore } from "./store/open.js";
import { seed } from "./store/seed.js";
import { applyAdminSetting, createFirstAdmin } from "./tokens.js";
import { waitingRoom } from "./waiting-room.js";

type Message =
  /** `final`: the worker's last report, sent after its server closed and before it exits. */
  | { readonly type: "usage"; readonly counts: UsageCounts; readonly final?: true }
  | { readonly type: "usage-query"; readonly id: number; readonly counts: UsageCounts }
  | { readonly type: "usage-total"; readonly id: number; readonly counts: UsageCounts }
  /** Worker to primary: serving; send connections. */
  | { readonly type: "ready" }
  /** Primary to worker, with the socket as the message's handle: serve it. */
  | { readonly type: "connection"; readonly id: number }
  /** Worker to primary: connection `id` is this worker's now. */
  | { readonly type: "adopted"; readonly id: number };

/**
 * Workers in a row that die before they ever serve: the primary gives up,
 * since they cannot start (a setting, the store). A worker that served and
 * was then killed (an operator, the OOM killer, a test) is replaced without
 * counting, however young: counting those once let five quick kills under a
 * loaded machine take the whole server down.
 */
export const MAX_FAILED_STARTS = 5;
/** How often a worker reports its counts to the primary. */
const REPORT_MS = 500;

function add(into: UsageCounts, counts: UsageCounts): void {
  for (const [version, n] of Object.entries(counts)) into[version] = (into[version] ?? 0) + n;
}

export function formatUsage(counts: UsageCounts): string {
  return Object.entries(counts).map(([version, n]) => `${version}=${n}`).join(" ");
}

export async function runPrimary(config: Config): Promise<void> {
  // Open until the workers listen: the first admin token is made then.
  const store = await openStore(config);
  try {
    await seed(store);
    for (const line of await applyAdminSetting(store, config.adminToken)) console.log(line);
  } catch (error) {
    await store.close();
    throw error;
  }

  /**
   * The latest counts of every worker ever started, kept after it exits: a
   * report that arrives after the worker's exit event is still counted, once.
   */
  const latest = new Map<number, UsageCounts>();
  const total = (): UsageCounts => {
    const sum: UsageCounts = {};
    for (const counts of latest.values()) add(sum, counts);
    return sum;
  };
  /** Resolves when a worker's final report has arrived, or when no report can come any more. */
  const reported = new Map<number, Promise<void>>();

  // Listen before any worker starts: an address in use stops the start here, in one line (main.ts).
  // pauseOnConnect: the primary reads nothing; the worker reads the connection from its first byte.
  const listener = net.createServer({ pauseOnConnect: true, noDelay: true }, (socket) => handOff(socket));
  try {
    await new Promise<void>((resolve, reject) => {
      listener.once("error", reject);
      listener.listen(config.port, config.host, () => {
        listener.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    await store.close();
    throw error;
  }
  listener.on("error", (error) => console.error("startline: server error:", error));

  let stopping = false;
  let announced = false;
  let failedStarts = 0;
  /** Workers that said they serve, by id, while they live: a death after that is not a failure to start. */
  const served = new Set<number>();
  /** Workers that said they serve, in the order connections go to them. */
  const ready: Worker[] = [];
  let turn = 0;
  /** Connections accepted while no worker is ready (all of them restarting), bounded in number and in time. */
  const waiting = waitingRoom<net.Socket>(
    { max: config.server.maxConnections * config.workers, maxWaitMs: config.server.headersTimeoutMs },
    // Refused as a worker refuses a connection past its cap. The fields a worker adds to every answer are
    // HTTPS's only (Strict-Transport-Security, src/serve.ts), and over HTTPS the refusal is a close.
    (socket, why) => (why === "full" ? refuse(socket, { secure: config.tls !== undefined, responseFields: "" }) : socket.destroy()),
  );
  /** Per worker: the primary's copies of the connections handed to it that it has not yet said it has, by id. */
  const handing = new Map<number, Map<number, net.Socket>>();
  let nextId = 0;

  const handOff = (socket: net.Socket): void => {
    const live = ready.filter((w) => w.isConnected());
    if (live.length === 0) return waiting.admit(socket);
    const worker = live[turn++ % live.length]!;
    const id = nextId++;
    handing.get(worker.id)!.set(id, socket);
    worker.send({ type: "connection", id } satisfies Message, socket, { keepOpen: true }, (error) => {
      // Not sent (the channel closed meanwhile): closed here, so the client sees it.
      if (error !== null) {
        handing.get(worker.id)?.delete(id);
        socket.destroy();
      }
    });
  };

  const fork = (): Worker => {
    // The lab's digest nonces verify on whichever worker gets the next request: each signs with the store's key (serve.ts).
    const worker = cluster.fork();
    handing.set(worker.id, new Map());
    let finalReport!: () => void;
    reported.set(worker.id, new Promise<void>((resolve) => (finalReport = resolve)));
    // The IPC channel closes after every message the worker sent has been
    // delivered here: a worker that died without a final report has sent all
    // it ever will, and its last periodic report stands.
    worker.once("disconnect", () => finalReport());
    // The process is gone (an IPC channel that waits for an acknowledgement may never report its
    // disconnect): a connection it had not said it has is held by nobody else now, so closing the
    // primary's copy closes the connection, and its client sees that.
    worker.once("exit", () => {
      const at = ready.indexOf(worker);
      if (at !== -1) ready.splice(at, 1);
      for (const socket of handing.get(worker.id)?.values() ?? []) socket.destroy();
      handing.delete(worker.id);
    });
    worker.on("message", (message: Message) => {
      if (message.type === "usage") {
        latest.set(worker.id, message.counts);
        if (message.final === true) finalReport();
      } else if (message.type === "usage-query") {
        latest.set(worker.id, message.counts);
        worker.send({ type: "usage-total", id: message.id, counts: total() } satisfies Message);
      } else if (message.type === "adopted") {
        // The worker holds the connection: the primary's copy goes, the connection stays open.
        handing.get(worker.id)?.get(message.id)?.destroy();
        handing.get(worker.id)?.delete(message.id);
      } else if (message.type === "ready") {
        if (stopping || !worker.isConnected()) return;
        served.add(worker.id);
        failedStarts = 0;
        ready.push(worker);
        for (const socket of waiting.release()) handOff(socket);
        // A replacement says when it takes connections: until then the others serve them all.
        if (announced) console.log(`worker ${worker.id} (pid ${worker.process.pid}) serves, in place of one that exited`);
        else if (ready.length >= config.workers) announce();
      }
    });
    return worker;
  };

  // Announce once every first-generation worker is ready, not at the first:
  // "listening on" then means full capacity, and a client (or a test) that
  // starts right away is spread over all the workers.
  const announce = () => {
    announced = true;
    const address = listener.address() as net.AddressInfo;
    const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
    void (async () => {
      try {
        const created = await createFirstAdmin(store, config.adminToken);
        if (created !== undefined) console.log(created);
      } finally {
        await store.close();
      }
      console.log(`listening on ${config.tls === undefined ? "http" : "https"}://${host}:${address.port}`);
    })().catch((error: unknown) => {
      console.error("startline: could not create the first administrator token:", error);
      process.exit(1);
    });
  };

  cluster.on("exit", (worker, code, signal) => {
    if (stopping) return;
    const failedToStart = !served.delete(worker.id);
    if (failedToStart && ++failedStarts >= MAX_FAILED_STARTS) {
      console.error(`startline: ${failedStarts} workers in a row died before serving (last: code ${code}, signal ${signal}); giving up`);
      process.exit(1);
    }
    console.error(`startline: worker ${worker.id} (pid ${worker.process.pid}) exited (${signal ?? `code ${code}`}); starting a replacement`);
    fork();
  });

  for (let i = 0; i < config.workers; i++) fork();

  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    // No new connection from here on; the ones not yet given to a worker are closed.
    listener.close();
    for (const socket of waiting.release()) socket.destroy();
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    const done = workers.map(async (w) => {
      const exited = w.isDead() ? Promise.resolve() : once(w, "exit");
      w.process.kill("SIGTERM");
      // Both: the process is gone, and its final counts are in (or can no longer come).
      await Promise.all([exited, reported.get(w.id)]);
    });
    console.log(`${signal}: asked ${workers.length} workers to finish requests in flight and exit`);
    await Promise.all(done);
    console.log(`requests per API version: ${formatUsage(total())}`);
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

/**
 * In a worker: serve the connections the primary hands over, and tell it
 * this worker is ready for them.
 */
export function adoptConnections(adopt: (socket: net.Socket) => void): void {
  process.on("message", (message: Message, socket?: net.Socket) => {
    if (message.type !== "connection" || socket === undefined) return;
    adopt(socket);
    process.send!({ type: "adopted", id: message.id } satisfies Message);
  });
  process.send!({ type: "ready" } satisfies Message);
}

/**
 * In a worker: report this worker's counts to the primary now and then, and
 * answer /api/usage with the sum over all workers (one IPC round trip).
 */
export function workerUsage(local: () => UsageCounts): () => Promise<UsageCounts> {
  const pending = new Map<number, (counts: UsageCounts) => void>();
  let next = 0;
  process.on("message", (message: Message) => {
    if (message.type !== "usage-total") return;
    pending.get(message.id)?.(message.counts);
    pending.delete(message.id);
  });
  setInterval(() => {
    if (process.connected) process.send!({ type: "usage", counts: local() } satisfies Message);
  }, REPORT_MS).unref();
  return () =>
    new Promise((resolve) => {
      const id = next++;
      pending.set(id, resolve);
      process.send!({ type: "usage-query", id, counts: local() } satisfies Message);
    });
}

/**
 * Send this worker's final counts; resolves once they are written to the IPC
 * channel, so exiting after that loses nothing (the primary reads them before
 * it sees the channel close).
 */
export function reportUsage(counts: UsageCounts): Promise<void> {
  return new Promise((resolve) => {
    if (process.send === undefined || !process.connected) return resolve();
    process.send({ type: "usage", counts, final: true } satisfies Message, undefined, {}, () => resolve());
  });
}
