// Settings from the environment and the command line, checked once at start.
// A bad value stops the start with a message naming the setting.

import { ConfigError } from "./config-error.js";
import { DEFAULT_LIMITS } from "./http/parse/limits.js";
import { DEFAULT_CONNECTION_OPTIONS, DEFAULT_SHUTDOWN_GRACE_MS } from "./http/connection/options.js";
import type { ServerSettings } from "./http/connection/server.js";
import { LOG_FORMATS, type LogFormat } from "./log.js";
import { DEFAULT_POOL_SIZE } from "./store/pg-pool-size.js";
import { MIN_TOKEN_LENGTH } from "./tokens.js";
import { availableParallelism } from "node:os";
import { DEFAULT_KEPT, type KeptSettings } from "./api/kept-reads.js";

export interface Config {
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  /** A postgres:// URL: the store is that PostgreSQL database (DATA_DIR is then unused). */
  readonly databaseUrl: string | undefined;
  /** Connections to PostgreSQL this process keeps at most. */
  readonly databasePoolSize: number;
  /** "full": every acknowledged write also survives power loss (SQLite synchronous=FULL). */
  readonly durability: "normal" | "full";
  /** No access log. */
  readonly quiet: boolean;
  /** The access log's lines: Common Log Format plus the duration, or one JSON object each. */
  readonly logFormat: LogFormat;
  /** Limits, timeouts and the connection cap, handed to the server whole. */
  readonly server: ServerSettings;
  readonly shutdownGraceMs: number;
  /** When v1 stops being served, announced in its Sunset field. */
  readonly v1Sunset: Date | undefined;
  /** Every write needs a valid bearer token (default: only article UPDATE, which needs an admin). */
  readonly writeRequiresToken: boolean;
  /** A known administrator token (its hash is stored; the value is never printed). */
  readonly adminToken: string | undefined;
  /** Paths of the PEM certificate and key; both set means HTTPS. */
  readonly tls: { readonly certPath: string; readonly keyPath: string } | undefined;
  /** Strict-Transport-Security max-age on HTTPS responses; 0 sends none. */
  readonly hstsMaxAge: number;
  /** Serving processes sharing the port (node:cluster); 1 serves from this process alone. */
  readonly workers: number;
  /** Serve the wire view, POST /api/wire (on unless WIRE_VIEW=0 or --no-wire-view). */
  readonly wireView: boolean;
  /** The key of the lab's digest nonces (LAB_SECRET); unset, the store's own (Store.key), which every worker and instance on the database shares. */
  readonly labSecret: string | undefined;
  /** Print every exchange on the terminal, part by part (TRACE=1 or --trace). */
  readonly trace: boolean;
  /** Bytes of each body the trace shows. */
  readonly traceBodyBytes: number;
  /** Bytes of reads kept in memory while current (KEPT_BYTES), see src/api/kept-reads.ts. */
  readonly kept: KeptSettings;
}

/**
 * Every environment variable startline reads. The environment below is typed
 * by this list, so reading a name that is not in it does not compile: a new
 * setting joins the list, and with it everything that must strip settings
 * (tests and benchmarks start servers from a clean environment, see
 * withoutSettings).
 */
export const SETTING_NAMES = [
  "HOST",
  "PORT",
  "DATA_DIR",
  "DATABASE_URL",
  "DATABASE_POOL_SIZE",
  "DURABILITY",
  "QUIET",
  "LOG_FORMAT",
  "MAX_REQUEST_LINE_BYTES",
  "MAX_HEADER_BYTES",
  "MAX_HEADER_COUNT",
  "MAX_BODY_BYTES",
  "MAX_CHUNK_EXTENSION_BYTES",
  "ALLOW_BARE_LF",
  "HEADERS_TIMEOUT_MS",
  "BODY_TIMEOUT_MS",
  "REQUEST_TIMEOUT_MS",
  "KEEP_ALIVE_TIMEOUT_MS",
  "SEND_TIMEOUT_MS",
  "SHUTDOWN_GRACE_MS",
  "V1_SUNSET",
  "WRITE_REQUIRES_TOKEN",
  "ADMIN_TOKEN",
  "TLS_CERT",
  "TLS_KEY",
  "HSTS_MAX_AGE",
  "MAX_CONNECTIONS",
  "WORKERS",
  "WIRE_VIEW",
  "LAB_SECRET",
  "TRACE",
  "TRACE_BODY_BYTES",
  "KEPT_BYTES",
] as const;

export type SettingName = (typeof SETTING_NAMES)[number];

type Env = { readonly [name in SettingName]?: string | undefined };

/**
 * libpq's variables (PGHOST, PGPASSWORD, PGSSLMODE, ...): node-postgres reads
 * them for whatever DATABASE_URL leaves out, so they configure startline too.
 */
const POSTGRES_CLIENT_VARIABLE = /^(?:NODE_)?PG[A-Z_]*$/;

/**
 * `env` without anything that configures a startline server: the base for a
 * child process whose settings must be exactly the ones its starter gives
 * (tests, benchmarks), whatever the caller's shell exports.
 */
export function withoutSettings(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const names: ReadonlySet<string> = new Set(SETTING_NAMES);
  const clean: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && !names.has(name) && !POSTGRES_CLIENT_VARIABLE.test(name)) clean[name] = value;
  }
  return clean;
}

function integer(env: Env, name: SettingName, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^[0-9]+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got ${JSON.stringify(raw)}`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function flag(env: Env, name: SettingName, argv: readonly string[], option: string): boolean {
  if (argv.includes(option)) return true;
  const raw = env[name];
  return raw !== undefined && raw !== "" && raw !== "0" && raw.toLowerCase() !== "false";
}

function oneOf<T extends string>(env: Env, name: SettingName, values: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!(values as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be one of ${values.join(", ")}, got ${JSON.stringify(raw)}`);
  return raw as T;
}

function date(env: Env, name: SettingName): Date | undefined {
  const raw = env[name];
  if (raw === undefined || raw === "") return undefined;
  const d = new Date(raw);
  if (Number.isNaN(d.getTime())) throw new ConfigError(`${name} must be a date such as 2027-06-30T00:00:00Z, got ${JSON.stringify(raw)}`);
  return d;
}

const KNOWN_OPTIONS = new Set(["--quiet", "--allow-bare-lf", "--write-requires-token", "--no-wire-view", "--trace"]);
const VALUE_OPTIONS = ["--tls-cert=", "--tls-key="];

function option(argv: readonly string[], prefix: string): string | undefined {
  const arg = argv.findLast((a) => a.startsWith(prefix));
  return arg === undefined ? undefined : arg.slice(prefix.length);
}

function tlsPaths(env: Env, argv: readonly string[]): Config["tls"] {
  const certPath = option(argv, "--tls-cert=") ?? env.TLS_CERT;
  const keyPath = option(argv, "--tls-key=") ?? env.TLS_KEY;
  if (!certPath && !keyPath) return undefined;
  if (!certPath || !keyPath) throw new ConfigError("HTTPS needs both TLS_CERT and TLS_KEY (or --tls-cert=PATH and --tls-key=PATH)");
  return { certPath, keyPath };
}

function workers(env: Env): number {
  const n = env.WORKERS === "auto" ? availableParallelism() : integer(env, "WORKERS", 1, 1, 256);
  if (n > 1 && (env.DATA_DIR ?? "") === ":memory:" && !env.DATABASE_URL) {
    throw new ConfigError("WORKERS needs a DATA_DIR on disk (or a DATABASE_URL): with DATA_DIR=:memory: each worker would keep data of its own");
  }
  return n;
}

/** postgres://user:password@host:port/database?options, as libpq and node-postgres read it. */
function databaseUrl(env: Env): string | undefined {
  const raw = env.DATABASE_URL;
  if (raw === undefined || raw === "") return undefined;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== "postgres:" && url.protocol !== "postgresql:")) {
    // The value may hold a password: name its shape, never echo it.
    throw new ConfigError("DATABASE_URL must be a PostgreSQL URL such as postgres://user:password@127.0.0.1:5432/startline");
  }
  return raw;
}

/** A setting that is on unless turned off: 1/true (or unset) and 0/false; anything else is a mistake worth stopping for. */
function onUnlessOff(env: Env, name: SettingName, argv: readonly string[], offOption: string): boolean {
  if (argv.includes(offOption)) return false;
  const raw = env[name];
  if (raw === undefined || raw === "") return true;
  const v = raw.toLowerCase();
  if (v === "1" || v === "true") return true;
  if (v === "0" || v === "false") return false;
  throw new ConfigError(`${name} must be 1 or 0 (true or false), got ${JSON.stringify(raw)}`);
}

function adminToken(env: Env): string | undefined {
  const raw = env.ADMIN_TOKEN;
  if (raw === undefined || raw === "") return undefined;
  if (raw.length < MIN_TOKEN_LENGTH || !/^[A-Za-z0-9\-._~+/]+=*$/.test(raw)) {
    throw new ConfigError(`ADMIN_TOKEN must be at least ${MIN_TOKEN_LENGTH} characters of A-Z a-z 0-9 - . _ ~ + / (a bearer token, RFC 6750 §2.1)`);
  }
  return raw;
}

export function loadConfig(env: Env, argv: readonly string[]): Config {
  for (const arg of argv) {
    if (!KNOWN_OPTIONS.has(arg) && !VALUE_OPTIONS.some((p) => arg.startsWith(p))) {
      throw new ConfigError(`Unknown option ${arg}; known options: ${[...KNOWN_OPTIONS, ...VALUE_OPTIONS.map((p) => `${p}PATH`)].join(", ")}`);
    }
  }
  const d = DEFAULT_LIMITS;
  const c = DEFAULT_CONNECTION_OPTIONS;
  const MiB = 1024 * 1024;
  return {
    host: env.HOST || "127.0.0.1",
    port: integer(env, "PORT", 8080, 0, 65535),
    dataDir: env.DATA_DIR || "./data",
    databaseUrl: databaseUrl(env),
    databasePoolSize: integer(env, "DATABASE_POOL_SIZE", DEFAULT_POOL_SIZE, 1, 10_000),
    durability: oneOf(env, "DURABILITY", ["normal", "full"] as const, "normal"),
    quiet: flag(env, "QUIET", argv, "--quiet"),
    logFormat: oneOf(env, "LOG_FORMAT", LOG_FORMATS, "common"),
    server: {
      limits: {
        maxRequestLineBytes: integer(env, "MAX_REQUEST_LINE_BYTES", d.maxRequestLineBytes, 64, MiB),
        maxHeaderBytes: integer(env, "MAX_HEADER_BYTES", d.maxHeaderBytes, 256, 16 * MiB),
        maxHeaderCount: integer(env, "MAX_HEADER_COUNT", d.maxHeaderCount, 1, 100_000),
        maxBodyBytes: integer(env, "MAX_BODY_BYTES", d.maxBodyBytes, 0, 1024 * MiB),
        maxChunkExtensionBytes: integer(env, "MAX_CHUNK_EXTENSION_BYTES", d.maxChunkExtensionBytes, 0, MiB),
        allowBareLf: flag(env, "ALLOW_BARE_LF", argv, "--allow-bare-lf"),
        raiseBodyLimit: "its MAX_BODY_BYTES setting raises it (docs/settings.md)",
      },
      headersTimeoutMs: integer(env, "HEADERS_TIMEOUT_MS", c.headersTimeoutMs, 1, 3_600_000),
      bodyTimeoutMs: integer(env, "BODY_TIMEOUT_MS", c.bodyTimeoutMs, 1, 3_600_000),
      requestTimeoutMs: integer(env, "REQUEST_TIMEOUT_MS", c.requestTimeoutMs, 1, 3_600_000),
      keepAliveTimeoutMs: integer(env, "KEEP_ALIVE_TIMEOUT_MS", c.keepAliveTimeoutMs, 1, 3_600_000),
      sendTimeoutMs: integer(env, "SEND_TIMEOUT_MS", c.sendTimeoutMs, 1, 3_600_000),
      maxConnections: integer(env, "MAX_CONNECTIONS", 16_384, 1, 10_000_000),
    },
    shutdownGraceMs: integer(env, "SHUTDOWN_GRACE_MS", DEFAULT_SHUTDOWN_GRACE_MS, 0, 3_600_000),
    v1Sunset: date(env, "V1_SUNSET"),
    writeRequiresToken: flag(env, "WRITE_REQUIRES_TOKEN", argv, "--write-requires-token"),
    adminToken: adminToken(env),
    tls: tlsPaths(env, argv),
    hstsMaxAge: integer(env, "HSTS_MAX_AGE", 31_536_000, 0, 2 ** 31 - 1),
    workers: workers(env),
    wireView: onUnlessOff(env, "WIRE_VIEW", argv, "--no-wire-view"),
    labSecret: env.LAB_SECRET === "" ? undefined : env.LAB_SECRET,
    trace: flag(env, "TRACE", argv, "--trace"),
    traceBodyBytes: integer(env, "TRACE_BODY_BYTES", 256, 0, MiB),
    kept: {
      responseBytes: integer(env, "KEPT_BYTES", DEFAULT_KEPT.responseBytes, 0, 64 * 1024 * MiB),
    },
  };
}
