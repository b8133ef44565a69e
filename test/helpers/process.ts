// Running the compiled server (dist/, built by `npm test` before tap) as a
// child process, the way `npm start` runs it.

import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import path from "node:path";

export const MAIN = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "dist", "src", "main.js");

export interface ServerProcess {
  readonly child: ChildProcess;
  readonly lines: string[];
  /** Resolves with the first output line (stdout or stderr) matching `re`, past or future. */
  line(re: RegExp): Promise<string>;
  /** Base URL from the `listening on` line. */
  url(): Promise<string>;
  exited(): Promise<number | null>;
}

export function startServer(env: Record<string, string>, args: string[] = []): ServerProcess {
  return startScript(MAIN, { DATA_DIR: ":memory:", ...env }, args);
}

/** Any script that prints `listening on ...` (the examples, say), on a free loopback port, from `cwd`. */
export function startScript(script: string, env: Record<string, string>, args: string[] = [], cwd?: string): ServerProcess {
  // An operator's DATABASE_URL (read by the PostgreSQL tests) must not turn every other server into a PostgreSQL one.
  const { DATABASE_URL: _operators, ...inherited } = process.env;
  const child = spawn(process.execPath, [script, ...args], {
    env: { ...inherited, PORT: "0", HOST: "127.0.0.1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    ...(cwd === undefined ? {} : { cwd }),
  });
  const lines: string[] = [];
  const waiters: { re: RegExp; resolve: (l: string) => void }[] = [];
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
    }
  };
  child.stdout!.on("data", onText);
  child.stderr!.on("data", onText);
  const exit = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
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
  return {
    child,
    lines,
    line,
    url: async () => /(https?:\/\/\S+)/.exec(await line(/^listening on /))![1]!,
    exited: () => exit,
  };
}
