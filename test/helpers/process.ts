// Running the compiled server (dist/, built by `npm test` before tap) as a
// child process, the way `npm start` runs it.

import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { withoutSettings } from "../../src/config.js";
import { ROOT } from "./root.js";
import type { Test } from "tap";

export const MAIN = path.join(ROOT, "dist", "src", "main.js");

export interface ServerProcess {
  readonly child: ChildProcess;
  readonly lines: string[];
  /** Resolves with the first output line (stdout or stderr) matching `re`, past or future. */
  line(re: RegExp): Promise<string>;
  /** Calls `listener` after every new output line; returns the function that stops it. */
  onLine(listener: () => void): () => void;
  /** Base URL from the `listening on` line. */
  url(): Promise<string>;
  exited(): Promise<number | null>;
}

/**
 * The environment of a server under test: the caller's, without any startline
 * setting (an ADMIN_TOKEN or WORKERS exported in the shell must not change
 * what a test sees) and without NODE_OPTIONS (tap's process-info hook would
 * load into every server and worker), then the test's defaults, then what
 * the test sets.
 */
export function serverEnv(env: Readonly<Record<string, string>>): Record<string, string> {
  const { NODE_OPTIONS: _hook, ...inherited } = withoutSettings(process.env);
  return { ...inherited, PORT: "0", HOST: "127.0.0.1", DATA_DIR: ":memory:", ...env };
}

export function startServer(env: Record<string, string>, args: string[] = []): ServerProcess {
  return startScript(MAIN, env, args);
}

/** Any script that prints `listening on ...` (the examples, say), on a free loopback port, from `cwd`. */
export function startScript(script: string, env: Record<string, string>, args: string[] = [], cwd?: string): ServerProcess {
  const child = spawn(process.execPath, [script, ...args], {
    env: serverEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
    ...(cwd === undefined ? {} : { cwd }),
  });
  const lines: string[] = [];
  const waiters: { re: RegExp; resolve: (l: string) => void }[] = [];
  const onLine = new Set<() => void>();
  let partial = "";
  const onText = (d: Buffer) => {
    partial += d.toString();
    let nl: number;
    while ((nl = partial.indexOf("\n")) !== -1) {
      const l = partial.slice(0, nl);
      partial = partial.slice(nl + 1);
      lines.push(l);
      for (const w of [...waiters]) {
        if (w.re.test(l)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(l);
        }
      }
      for (const listener of [...onLine]) listener();
    }
  };
  child.stdout!.on("data", onText);
  child.stderr!.on("data", onText);
  // "close", not "exit": it comes once the child's stdout and stderr are drained too, so every
  // line the process printed before it exited is in `lines` when this resolves.
  const exit = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  // A test file that dies before its teardown (an uncaught error) must not leave servers behind.
  const reap = () => child.kill("SIGKILL");
  process.once("exit", reap);
  void exit.then(() => process.removeListener("exit", reap));
  const line = (re: RegExp) =>
    new Promise<string>((resolve) => {
      const seen = lines.find((l) => re.test(l));
      if (seen !== undefined) resolve(seen);
      else waiters.push({ re, resolve });
    });
  const subscribe = (listener: () => void) => {
    onLine.add(listener);
    return () => void onLine.delete(listener);
  };
  return {
    child,
    lines,
    line,
    onLine: subscribe,
    url: async () => /(https?:\/\/\S+)/.exec(await line(/^listening on /))![1]!,
    exited: () => exit,
  };
}

/**
 * Runs `script` (from `cwd`) for the length of test `t`, stopped at its end,
 * and resolves with the URL its `listening on` line names; a script that
 * exits before it listens fails with everything it printed, named `what`.
 */
export async function listeningScript(t: Test, what: string, script: string, env: Record<string, string>, cwd: string): Promise<{ server: ServerProcess; url: string }> {
  const server = startScript(script, env, [], cwd);
  t.teardown(async () => {
    server.child.kill("SIGTERM");
    await server.exited();
  });
  const url = await Promise.race([
    server.url(),
    server.exited().then((code) => {
      throw new Error(`${what} exited (${code}) before listening:\n${server.lines.join("\n")}`);
    }),
  ]);
  return { server, url };
}
