// Starting and stopping the servers under test: startline, node:http and the
// ceiling, each pinned (taskset execs node, so the pid is node's: checked),
// with the scenario's settings; and the throwaway certificate of the HTTPS
// scenarios; and the idle connections' client.

import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Context, Workspace } from "./context.js";
import type { IdleClosed, IdleOpened } from "./idle-client.js";
import { GC_ON_SIGNAL_MODULE, ROOT, STARTLINE_MAIN, benchScript } from "./paths.js";
import { fetchOne } from "./probe.js";
import { NODE_EXE, exePath, openFilesLimit, pinnedNode, type Pinning } from "./proc.js";
import { SERVER_LABEL, type ServerKind } from "./report.js";
import type { RequestSpec, Scenario } from "./scenarios.js";
import { withoutSettings } from "../src/config.js";

/** A self-signed P-256 certificate for 127.0.0.1, valid one day, made with openssl; never leaves the temporary directory. */
export function makeCertificate(dir: string): NonNullable<Workspace["tls"]> {
  const certPath = join(dir, "cert.pem");
  const keyPath = join(dir, "key.pem");
  execFileSync(
    "openssl",
    [
      "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
      "-keyout", keyPath, "-out", certPath, "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  return { certPath, keyPath, cert: readFileSync(certPath) };
}

let dataDirs = 0;

export interface RunningServer {
  readonly kind: ServerKind;
  readonly child: ChildProcess;
  readonly pid: number;
  readonly port: number;
  /** /proc/<pid>/exe once listening: node itself. */
  readonly exe: string;
  readonly exited: Promise<{ code: number | null; signal: string | null }>;
  output(): string;
}

/** What the reference servers read besides startline's own settings (src/config.ts, SETTING_NAMES). */
const REFERENCE_SETTINGS = ["STATE_FILE", "CEILING_RESPONSE_B64"];

/** The caller's environment without any server setting: each scenario sets exactly the ones it runs with. */
function inheritedEnv(): Record<string, string> {
  const env = withoutSettings(process.env);
  for (const name of REFERENCE_SETTINGS) delete env[name];
  return env;
}

/** The cores a scenario's servers may use: the server core, or every core for cluster workers. */
export function serverCores(pinning: Pinning, scenario: Scenario): string {
  return (scenario.workers ?? 1) > 1 ? `${Math.min(pinning.serverCore, pinning.clientCore)}-${Math.max(pinning.serverCore, pinning.clientCore)}` : String(pinning.serverCore);
}

/** Idle connections a scenario holds per server (0: not an idle scenario). */
export function idleConnections(ctx: Context, scenario: Scenario): number {
  return scenario.idle === undefined ? 0 : (ctx.options.idleConnections ?? scenario.idle.connections);
}

/** Open files a process needs to hold `connections` sockets, with room for the rest. */
export const openFilesFor = (connections: number) => connections + 1024;

export async function startServer(ctx: Context, kind: ServerKind, scenario: Scenario, extraEnv: Record<string, string> = {}): Promise<RunningServer> {
  const workers = scenario.workers ?? 1;
  const env: Record<string, string> = { ...inheritedEnv(), ...scenario.env };
  let script: string;
  switch (kind) {
    case "startline":
      script = STARTLINE_MAIN;
      env.QUIET = "1";
      // WORKERS needs a database on disk; a fresh one per start, like :memory:.
      env.DATA_DIR = workers > 1 ? join(ctx.workspace.dir, `data-${++dataDirs}`) : ":memory:";
      if (workers > 1) mkdirSync(env.DATA_DIR, { recursive: true });
      break;
    case "node-http":
      script = benchScript("servers/node-http");
      break;
    case "ceiling":
      script = benchScript("servers/ceiling");
      break;
  }
  if (scenario.tls) {
    if (ctx.workspace.tls === undefined) throw new Error(`${scenario.name} needs the throwaway certificate, which could not be made`);
    env.TLS_CERT = ctx.workspace.tls.certPath;
    env.TLS_KEY = ctx.workspace.tls.keyPath;
  }
  if (workers > 1) env.WORKERS = String(workers);
  Object.assign(env, extraEnv, { PORT: "0", HOST: "127.0.0.1" });

  const idle = idleConnections(ctx, scenario);
  // Idle scenarios: a full GC on SIGUSR2 before each RSS reading (bench/gc-on-signal.cjs).
  const nodeArgs = idle > 0 ? ["--expose-gc", "--require", GC_ON_SIGNAL_MODULE, script] : [script];
  const [command, args] = pinnedNode(ctx.pinning, serverCores(ctx.pinning, scenario), nodeArgs, idle > 0 ? openFilesFor(idle) : undefined);
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.setEncoding("utf8");
  child.stderr!.setEncoding("utf8");
  child.stderr!.on("data", (s: string) => (output += s));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${kind} did not print "listening on" within 10 s:\n${output}`)), 10_000);
    child.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`${kind} exited (code ${code}, signal ${signal}) before listening:\n${output}`));
    });
    let buffered = "";
    child.stdout!.on("data", (s: string) => {
      output += s;
      buffered += s;
      const m = /listening on https?:\/\/[^\s]*:(\d+)/.exec(buffered);
      if (m !== null) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
  });
  const pid = child.pid!;
  // taskset (and bash, when it raises the open-files limit) exec node, so the
  // pid must now be node itself; if it were a wrapper, /proc would measure the wrapper.
  const exe = exePath(pid);
  if (exe !== NODE_EXE) {
    child.kill("SIGKILL");
    throw new Error(`pid ${pid} runs ${exe}, not ${NODE_EXE}: the measurement would miss the server`);
  }
  if (idle > 0) {
    const limit = openFilesLimit(pid);
    if (limit < idle + 100) {
      child.kill("SIGKILL");
      throw new Error(`${SERVER_LABEL[kind]} may open ${limit} files, not enough for ${idle} connections (the hard limit is too low, and could not be raised)`);
    }
  }
  return { kind, child, pid, port, exe, exited, output: () => output };
}

export async function stopServer(server: RunningServer): Promise<{ code: number | null; signal: string | null }> {
  server.child.kill("SIGTERM");
  const timer = setTimeout(() => server.child.kill("SIGKILL"), 15_000);
  const result = await server.exited;
  clearTimeout(timer);
  return result;
}

/** Sends the scenario's setup requests to a server, one connection each; each must answer 2xx. */
export async function runSetup(ctx: Context, server: RunningServer, setup: readonly RequestSpec[]): Promise<void> {
  for (const request of setup) {
    const response = await fetchOne(server.port, request, { ca: ctx.currentCa });
    if (response.status < 200 || response.status > 299) {
      throw new Error(`setup request ${request.method} ${request.path} answered ${JSON.stringify(response.statusLine)}: ${response.body.toString("utf8").slice(0, 500)}`);
    }
  }
}

/** The idle connections' client (bench/idle-client.ts) once they are open: what it opened, and how to close them. */
export interface HeldIdle {
  readonly opened: IdleOpened;
  close(): Promise<IdleClosed>;
}

/** Starts the idle connections' client on the load generator's core and waits until it holds them all. */
export async function holdIdle(ctx: Context, port: number, request: RequestSpec, connections: number): Promise<HeldIdle> {
  const [command, args] = pinnedNode(ctx.pinning, ctx.pinning.clientCore, [benchScript("idle-client"), String(port), String(connections), JSON.stringify(request)], openFilesFor(connections));
  const child = spawn(command, args, { cwd: ROOT, stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async <T>(what: string): Promise<T> => {
    const line = await lines.next();
    if (line.done === true) throw new Error(`the idle connections' client exited (code ${await exited}) before it ${what}`);
    return JSON.parse(line.value) as T;
  };
  const opened = await next<IdleOpened>("opened them");
  if (opened.openFilesLimit < connections + 100) {
    ctx.problems.push(`the idle connections' client may open ${opened.openFilesLimit} files, not enough for ${connections} connections (the hard limit is too low, and could not be raised)`);
  }
  return {
    opened,
    async close() {
      child.stdin!.end();
      const closed = await next<IdleClosed>("closed them");
      await exited;
      return closed;
    },
  };
}
