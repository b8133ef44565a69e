// PostgreSQL for the tests. With TEST_DATABASE_URL set (a server of your
// own), the tests use that database. Otherwise each test file starts its own
// throwaway cluster from the PostgreSQL 15 binaries every machine of this
// image has: initdb in a temp dir, the server on a free port of 127.0.0.1
// (and a unix socket in the temp dir), stopped and removed at teardown.
//
// initdb refuses to run as root, so as root the binaries run as the
// `postgres` user (runuser), in a temp dir that user owns. The cluster trades
// durability for speed (fsync=off): it lives for one test file.
//
// Isolation: every caller gets a fresh schema, named in the URL's `options`
// (`-c search_path=...`), inside one fresh database per test file; a store
// opened on that URL sees only its own tables. Schemas are cheap (a few ms),
// so a suite can make one per test.

import { execFile, execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import type { Test } from "tap";
import { freePort } from "./ports.js";

const run = promisify(execFile);
/** The server binaries: PG_BIN, or the newest version Debian's packages installed under /usr/lib/postgresql. */
const BIN = process.env.PG_BIN ?? newestPostgres();

function newestPostgres(): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => /^\d+$/.test(v) && existsSync(`${root}/${v}/bin/initdb`))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  // Without any, the first initdb fails and says where it looked.
  return `${root}/${versions[0] ?? "15"}/bin`;
}

// The tests' own connections must not take libpq's defaults (PGPASSWORD,
// PGSSLMODE, PGOPTIONS, ...) from the caller's shell: node-postgres reads them
// for whatever a URL leaves out. (Servers under test get none either: see
// withoutSettings in src/config.ts.)
for (const name of Object.keys(process.env)) if (/^(?:NODE_)?PG[A-Z_]*$/.test(name)) delete process.env[name];
const PREFIX = "startline-pg-";
const asRoot = process.getuid?.() === 0;

/** A command line, as the postgres user when we are root. */
function asPostgres(command: string, args: readonly string[]): [string, string[]] {
  return asRoot ? ["runuser", ["-u", "postgres", "--", command, ...args]] : [command, [...args]];
}

async function pgRun(tool: string, args: readonly string[]): Promise<void> {
  const [command, argv] = asPostgres(path.join(BIN, tool), args);
  try {
    await run(command, argv, { timeout: 60_000 });
  } catch (error) {
    const e = error as { stderr?: string; stdout?: string; message: string };
    throw new Error(`${tool} ${args.join(" ")} failed: ${e.stderr || e.stdout || e.message}`);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Clusters left by test processes that died without their teardown (SIGKILL,
 * a crash): stop them and remove their dirs, so none piles up on the machine.
 */
function sweepOrphans(): void {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(PREFIX)) continue;
    const dir = path.join(tmpdir(), name);
    let owner: number;
    try {
      owner = Number(readFileSync(path.join(dir, "owner"), "utf8"));
    } catch {
      continue; // being created right now, or not ours
    }
    if (!Number.isInteger(owner) || owner <= 0 || alive(owner)) continue;
    stopNow(path.join(dir, "data"));
    rmSync(dir, { recursive: true, force: true });
  }
}

/** pg_ctl stop -m immediate, synchronously: for exit handlers and the sweep. */
function stopNow(data: string): void {
  if (!existsSync(path.join(data, "postmaster.pid"))) return;
  const [command, argv] = asPostgres(path.join(BIN, "pg_ctl"), ["-D", data, "-m", "immediate", "-w", "stop"]);
  try {
    execFileSync(command, argv, { stdio: "ignore", timeout: 30_000 });
  } catch {
    // already gone
  }
}

export interface Cluster {
  /** The maintenance database, `postgres`. */
  readonly adminUrl: string;
  /** The URL of a database of this cluster. */
  urlOf(database: string): string;
  /** Stops the server (pg_ctl stop -m fast: sessions are terminated, as in a real shutdown); socket clusters only. */
  stop(): Promise<void>;
  /** Starts it again where it listened before, with the same data. */
  start(): Promise<void>;
  /** Stops it and removes its files. */
  destroy(): Promise<void>;
}

export interface ClusterOptions {
  /**
   * "tcp" (the default): a free port of 127.0.0.1, and the unix socket.
   * "socket": the unix socket in the cluster's own directory only. Use it to
   * stop() and start() the server: between the two a TCP port is free for any
   * process on the machine to take (another test's server, the kernel's
   * choice for someone's outgoing connection), and the restart would then
   * fail or, worse, the clients would reach that other program. Nobody else
   * can take a path inside this cluster's directory.
   */
  readonly listen?: "tcp" | "socket";
}

/** A throwaway PostgreSQL cluster on 127.0.0.1, whatever TEST_DATABASE_URL says. */
export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const listen = options.listen ?? "tcp";
  sweepOrphans();
  const dir = mkdtempSync(path.join(tmpdir(), PREFIX));
  writeFileSync(path.join(dir, "owner"), String(process.pid));
  const data = path.join(dir, "data");
  const socket = path.join(dir, "socket");
  mkdirSync(socket);
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
    chownSync(dir, uid, gid);
    chownSync(socket, uid, gid);
  }
  // If this process ends without its teardown, the server must not outlive it.
  const onExit = () => {
    stopNow(data);
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", onExit);

  await pgRun("initdb", ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"]);
  const start = () => pgRun("pg_ctl", ["-D", data, "-l", path.join(dir, "server.log"), "-w", "-t", "60", "start"]);

  // Another process may take the port between freePort() and the server's bind: then try another.
  // On the socket alone, the port only names the socket file (.s.PGSQL.5432).
  let port = 0;
  for (let attempt = 1; ; attempt++) {
    port = listen === "tcp" ? await freePort() : 5432;
    writeFileSync(
      path.join(data, "postgresql.auto.conf"),
      [
        `listen_addresses = '${listen === "tcp" ? "127.0.0.1" : ""}'`,
        `port = ${port}`,
        `unix_socket_directories = '${socket}'`,
        `max_connections = 200`,
        `fsync = off`,
        `synchronous_commit = off`,
        `full_page_writes = off`,
        `shared_buffers = '32MB'`,
        "",
      ].join("\n"),
    );
    try {
      await start();
      break;
    } catch (error) {
      if (attempt >= 3) throw error;
    }
  }

  // node-postgres takes a `host` parameter that is a directory as the unix socket's.
  const urlOf = (database: string) =>
    listen === "tcp" ? `postgres://postgres@127.0.0.1:${port}/${database}` : `postgres://postgres@localhost/${database}?host=${socket}`;
  let destroyed = false;
  return {
    adminUrl: urlOf("postgres"),
    urlOf,
    async stop() {
      // On TCP the port would be free for anyone until start(): see ClusterOptions.
      if (listen === "tcp") throw new Error('stop() and start() need startCluster({ listen: "socket" })');
      await pgRun("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]);
    },
    start,
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      process.removeListener("exit", onExit);
      await pgRun("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `url` with `-c search_path=<schema>` added to its connection options. */
export function withSchema(url: string, schema: string): string {
  const u = new URL(url);
  const options = u.searchParams.get("options");
  u.searchParams.set("options", `${options === null ? "" : `${options} `}-c search_path=${schema}`);
  return u.toString();
}

async function sql(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  /** A URL whose connections see a new, empty schema of their own. */
  fresh(): Promise<string>;
  /** The throwaway cluster behind it, or undefined when TEST_DATABASE_URL names the server. */
  readonly cluster: Cluster | undefined;
}

let files = 0;

/**
 * A database for this test file: TEST_DATABASE_URL's, or a new database in
 * a throwaway cluster. Everything it made is removed when `t` ends. (Not
 * DATABASE_URL: that is the server's own setting, and a value exported for
 * the server must not redirect the tests.)
 */
export async function testDatabase(t: Test): Promise<TestDatabase> {
  const given = process.env.TEST_DATABASE_URL;
  let cluster: Cluster | undefined;
  let base: string;
  if (given !== undefined && given !== "") {
    base = given;
  } else {
    cluster = await startCluster();
    t.teardown(() => cluster!.destroy());
    const name = `startline_test_${process.pid}_${++files}`;
    await sql(cluster.adminUrl, `CREATE DATABASE ${name}`);
    base = cluster.urlOf(name);
  }
  const schemas: string[] = [];
  if (cluster === undefined) {
    // On someone else's server, leave nothing behind.
    t.teardown(async () => {
      for (const schema of schemas) await sql(base, `DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    });
  }
  return {
    cluster,
    async fresh() {
      const schema = `t_${process.pid}_${schemas.length + 1}_${Date.now().toString(36)}`;
      await sql(base, `CREATE SCHEMA ${schema}`);
      schemas.push(schema);
      return withSchema(base, schema);
    },
  };
}
