// Starting the servers under test (startline and the comparators of
// bench/servers/), each on a free port of 127.0.0.1, pinned or under a
// wrapper (valgrind), with exactly the settings a scenario gives; and talking
// to them by hand: one request, and the posts the data scenarios start with.

import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { withoutSettings } from "../src/config.js";
import { fillPosts } from "./fill.js";
import { pinned, type Pinning } from "./proc.js";
import { benchPost, type Scenario, type ServerKind } from "./scenarios.js";

const here = path.dirname(fileURLToPath(import.meta.url));
/** The repository: above dist/bench/ when built, above bench/ when run from source. */
export const ROOT = path.resolve(here, here.includes(`${path.sep}dist${path.sep}`) ? "../.." : "..");
export const STARTLINE_MAIN = path.join(ROOT, "dist", "src", "main.js");
const SCRIPTS: Readonly<Record<ServerKind, string>> = {
  startline: STARTLINE_MAIN,
  "node-http": path.join(here, "servers", "node-http.js"),
  ceiling: path.join(here, "servers", "ceiling.js"),
  fastify: path.join(here, "servers", "fastify-data.js"),
  "data-ceiling": path.join(here, "servers", "data-ceiling.js"),
  "app-on-startline": path.join(here, "servers", "node-apps.js"),
  "app-on-node": path.join(here, "servers", "node-apps.js"),
};

export interface Server {
  readonly kind: ServerKind;
  readonly child: ChildProcess;
  readonly pid: number;
  readonly port: number;
  readonly url: string;
  /** SIGTERM, SIGKILL after 15 s; the exit code. */
  stop(): Promise<number | null>;
}

export interface LaunchOptions {
  readonly pinning?: Pinning;
  /** Cores to pin to ("0", "0-1"). */
  readonly cores?: string;
  /** A command the server runs under, e.g. valgrind and its options; then not pinned. */
  readonly wrap?: readonly string[];
  readonly nodeArgs?: readonly string[];
  /** The server's stderr to this process's (default: read, and shown if it fails to start). */
  readonly stderr?: "inherit";
}

/** Starts `kind` with the caller's environment minus every startline setting, plus `env`; resolves once it listens. */
export async function launch(kind: ServerKind, env: Readonly<Record<string, string>>, options: LaunchOptions = {}): Promise<Server> {
  const { NODE_OPTIONS: _hook, ...inherited } = withoutSettings(process.env);
  const node = [...(options.nodeArgs ?? []), SCRIPTS[kind]];
  const [command, args] =
    options.wrap !== undefined
      ? [options.wrap[0]!, [...options.wrap.slice(1), process.execPath, ...node]]
      : options.pinning !== undefined
        ? pinned(options.pinning, options.cores ?? String(options.pinning.serverCore), process.execPath, node)
        : [process.execPath, node];
  const child = spawn(command, args, { cwd: ROOT, env: { ...inherited, PORT: "0", HOST: "127.0.0.1", ...env }, stdio: ["ignore", "pipe", options.stderr ?? "pipe"] });
  let output = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (d: Buffer) => {
      const m = /listening on (https?:\/\/[^\s]*:\d+)/.exec((output += d.toString()));
      if (m !== null) resolve(m[1]!);
    };
    child.stdout!.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("error", reject);
    void exited.then((code) => reject(new Error(`${kind} exited (${code}) before listening:\n${output.slice(-2000)}`)));
  });
  return {
    kind,
    child,
    pid: child.pid!,
    port: Number(new URL(url).port),
    url,
    async stop() {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** What a run shares: its pinning and a temporary directory (certificate, data files). */
export interface Workspace {
  readonly pinning: Pinning;
  readonly dir: string;
  /** The throwaway certificate, made with openssl when an HTTPS scenario runs. */
  tls?: { readonly TLS_CERT: string; readonly TLS_KEY: string };
  /** Data directories filled directly, by scenario: filled once, read by every round. */
  readonly filled: Map<string, string>;
  /** Settings given to every startline server of the run (--set), e.g. KEPT_BYTES=0. */
  readonly settings?: Readonly<Record<string, string>>;
}

function certificate(ws: Workspace): NonNullable<Workspace["tls"]> {
  const [cert, key] = [path.join(ws.dir, "cert.pem"), path.join(ws.dir, "key.pem")];
  execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-keyout", key, "-out", cert, "-subj", "/CN=127.0.0.1"], { stdio: "ignore" });
  return (ws.tls = { TLS_CERT: cert, TLS_KEY: key });
}

/**
 * Starts one server of a scenario with its settings, filled as the scenario
 * asks: a fresh SQLite store per start, or the one filled directly (once).
 * `ceilingResponse`: what the ceiling replays (startline's answer).
 */
export async function startFor(ws: Workspace, kind: ServerKind, scenario: Scenario, ceilingResponse?: Buffer, nodeArgs: readonly string[] = []): Promise<Server> {
  const workers = scenario.workers ?? 1;
  const env: Record<string, string> = scenario.tls ? { ...(ws.tls ?? certificate(ws)) } : {};
  if (workers > 1) env.WORKERS = String(workers);
  if (scenario.idle !== undefined) Object.assign(env, { KEEP_ALIVE_TIMEOUT_MS: "600000", MAX_CONNECTIONS: "100000" });
  const fresh = () => mkdtempSync(path.join(ws.dir, `${kind}-`));
  if (kind === "startline") {
    Object.assign(env, ws.settings);
    env.QUIET = "1";
    let dataDir = ":memory:";
    if (scenario.fill?.direct) {
      dataDir = ws.filled.get(scenario.name) ?? fresh();
      if (!ws.filled.has(scenario.name)) await fillPosts(dataDir, { posts: scenario.fill.posts, bodyChars: scenario.fill.bodyChars ?? 0 });
      ws.filled.set(scenario.name, dataDir);
    } else if (scenario.fill !== undefined || workers > 1) dataDir = fresh();
    env.DATA_DIR = dataDir;
  }
  if (kind === "fastify" || kind === "data-ceiling") env.DATA_FILE = path.join(fresh(), "posts.sqlite");
  if (kind === "ceiling" && ceilingResponse !== undefined) env.CEILING_RESPONSE_B64 = ceilingResponse.toString("base64");
  if (kind === "app-on-startline" || kind === "app-on-node") Object.assign(env, { APP: scenario.app ?? "bare", ON: kind === "app-on-startline" ? "startline" : "node" });
  const cores = workers > 1 ? `${ws.pinning.serverCore},${ws.pinning.clientCore}` : String(ws.pinning.serverCore);
  // Idle scenarios: a full collection on SIGUSR2 before each RSS reading (bench/gc-on-signal.cjs).
  const gc = scenario.idle === undefined ? [] : ["--expose-gc", "--require", path.join(ROOT, "bench", "gc-on-signal.cjs")];
  const server = await launch(kind, env, { pinning: ws.pinning, cores, nodeArgs: [...gc, ...nodeArgs] });
  if (scenario.fill !== undefined && !scenario.fill.direct) await fillHttp(server.url, scenario.fill.posts).catch(async (error: unknown) => (await server.stop(), Promise.reject(error)));
  return server;
}

export interface Answer {
  readonly status: number;
  readonly body: Buffer;
  /** Status line, fields and body as the server wrote them (framed by Content-Length): what the ceiling replays. */
  readonly raw: Buffer;
}

/** One request on a connection of its own (asking for keep-alive, as wrk does: the ceiling replays the answer), closed after the answer. */
export function fetchOne(url: string, method: string, target: string, headers: Readonly<Record<string, string>> = {}, body?: string): Promise<Answer> {
  const client = url.startsWith("https:") ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(`${url}${target}`, { method, headers: { Connection: "keep-alive", ...headers }, agent: false, rejectUnauthorized: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (d: Buffer) => chunks.push(d));
      res.on("end", () => {
        req.destroy();
        const content = Buffer.concat(chunks);
        const fields: string[] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) fields.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}\r\n`);
        const head = `HTTP/1.1 ${res.statusCode} ${res.statusMessage}\r\n${fields.join("")}\r\n`;
        resolve({ status: res.statusCode ?? 0, body: content, raw: Buffer.concat([Buffer.from(head, "latin1"), content]) });
      });
    });
    req.setTimeout(30_000, () => req.destroy(new Error(`no answer to ${method} ${target} within 30 s`)));
    req.on("error", reject);
    req.end(body);
  });
}

/** Posts p0 to p<count - 1>, published through HTTP, 8 at a time on kept-alive connections. */
export async function fillHttp(url: string, count: number): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  try {
    for (let i = 0; i < count; i += 8) {
      await Promise.all(
        Array.from({ length: Math.min(8, count - i) }, (_, k) =>
          new Promise<void>((resolve, reject) => {
            const req = http.request(`${url}/api/v1/post/p${i + k}`, { method: "POST", agent, headers: { "Content-Type": "application/json" } }, (res) => {
              res.resume().on("end", () => (res.statusCode === 201 ? resolve() : reject(new Error(`filling: POST p${i + k} answered ${res.statusCode}`))));
            });
            req.on("error", reject);
            req.end(JSON.stringify(benchPost(i + k)));
          }),
        ),
      );
    }
  } finally {
    agent.destroy();
  }
}
