// nginx as the load balancer in front of startline instances, for the tests:
// deploy/nginx.conf filled in with a temp prefix, a free port on 127.0.0.1
// and the instances' ports, run in the foreground (daemon off) as a child
// process, stopped and removed when the test ends.

import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, watch, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Test } from "tap";
import { ownForTest } from "./owned-child.js";
import { freePort } from "./ports.js";
import { ROOT } from "./root.js";

export const NGINX = process.env.NGINX_PATH ?? "/usr/sbin/nginx";
export const TEMPLATE = path.join(ROOT, "deploy", "nginx.conf");

export interface Nginx {
  readonly port: number;
  /** "http://127.0.0.1:<port>" */
  readonly base: string;
  /** What nginx wrote to its error log, for failure messages. */
  errorLog(): string;
}

/** Lines of deploy/nginx.conf a test replaces (each must be there): [from, to]. */
export interface Changes {
  readonly replace?: readonly (readonly [string, string])[];
}

/** deploy/nginx.conf with its placeholders filled in. */
export function fillTemplate(prefix: string, listen: string, upstreams: readonly number[], change: Changes = {}): string {
  const servers = upstreams.map((port) => `server 127.0.0.1:${port} max_fails=1 fail_timeout=10s;`).join("\n    ");
  const text = readFileSync(TEMPLATE, "utf8").replaceAll("{{PREFIX}}", prefix).replaceAll("{{LISTEN}}", listen).replaceAll("{{UPSTREAMS}}", servers);
  const left = /\{\{[A-Z]+\}\}/.exec(text);
  if (left !== null) throw new Error(`deploy/nginx.conf has a placeholder the test does not fill: ${left[0]}`);
  let changed = text;
  for (const [from, to] of change.replace ?? []) {
    if (!changed.includes(from)) throw new Error(`deploy/nginx.conf no longer holds the line a test changes: ${from}`);
    changed = changed.replace(from, to);
  }
  return changed;
}

/** Starts nginx in front of the instances on `upstreams`; it is stopped when `t` ends. */
export async function startNginx(t: Test, upstreams: readonly number[], change: Changes = {}): Promise<Nginx> {
  // The port is free when chosen, but another process may bind it before
  // nginx does: then nginx exits saying so, and another port is tried.
  for (let attempt = 1; ; attempt++) {
    const started = await startOnce(t, upstreams, change);
    if (started.kind === "running") return started.nginx;
    if (!started.addressInUse || attempt >= 3) throw new Error(started.message);
  }
}

type Attempt = { readonly kind: "running"; readonly nginx: Nginx } | { readonly kind: "failed"; readonly addressInUse: boolean; readonly message: string };

async function startOnce(t: Test, upstreams: readonly number[], change: Changes): Promise<Attempt> {
  const prefix = mkdtempSync(path.join(tmpdir(), "startline-nginx-"));
  // As root, nginx's workers run as an unprivileged user: they must be able to enter the prefix.
  chmodSync(prefix, 0o755);
  const port = await freePort();
  const conf = path.join(prefix, "nginx.conf");
  writeFileSync(conf, fillTemplate(prefix, `127.0.0.1:${port}`, upstreams, change));
  const errorLog = path.join(prefix, "error.log");
  const child = spawn(NGINX, ["-p", prefix, "-c", conf, "-e", errorLog], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const { exited, running } = ownForTest(t, child, prefix);
  const readLog = () => {
    try {
      return readFileSync(errorLog, "utf8");
    } catch {
      return "";
    }
  };
  // nginx writes its pid file once its listening socket is bound (and says
  // nothing on the terminal): that file, holding this child's pid, is the
  // event to wait for. Exiting first means the port was taken, or the config
  // or the binary is wrong.
  const pidFile = path.join(prefix, "nginx.pid");
  const pidWritten = () => {
    try {
      return readFileSync(pidFile, "utf8").trim() === String(child.pid);
    } catch {
      return false;
    }
  };
  const ready = await new Promise<boolean>((resolve) => {
    const finish = (value: boolean) => {
      watcher.close();
      clearTimeout(hangBound);
      resolve(value);
    };
    const watcher = watch(prefix, () => {
      if (pidWritten()) finish(true);
    });
    void exited.then(() => finish(pidWritten()));
    // Only a bound on a broken start: the pid file or the exit comes first.
    const hangBound = setTimeout(() => finish(pidWritten()), 30_000);
    if (pidWritten()) finish(true);
  });
  if (!ready || !running()) {
    const said = `${output}${readLog()}`;
    return { kind: "failed", addressInUse: /Address already in use/.test(said), message: `nginx did not start on 127.0.0.1:${port}: ${said}` };
  }
  return { kind: "running", nginx: { port, base: `http://127.0.0.1:${port}`, errorLog: readLog } };
}
