// nginx as the load balancer in front of startline instances, for the tests:
// deploy/nginx.conf filled in with a temp prefix, a free port on 127.0.0.1
// and the instances' ports, run in the foreground (daemon off) as a child
// process, stopped and removed when the test ends.

import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Test } from "tap";
import { freePort } from "./postgres.js";

export const NGINX = process.env.NGINX_PATH ?? "/usr/sbin/nginx";
export const TEMPLATE = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "deploy", "nginx.conf");

export interface Nginx {
  readonly port: number;
  /** "http://127.0.0.1:<port>" */
  readonly base: string;
  /** What nginx wrote to its error log, for failure messages. */
  errorLog(): string;
}

/** deploy/nginx.conf with its placeholders filled in. */
export function fillTemplate(prefix: string, listen: string, upstreams: readonly number[]): string {
  const servers = upstreams.map((port) => `server 127.0.0.1:${port} max_fails=1 fail_timeout=10s;`).join("\n    ");
  const text = readFileSync(TEMPLATE, "utf8").replaceAll("{{PREFIX}}", prefix).replaceAll("{{LISTEN}}", listen).replaceAll("{{UPSTREAMS}}", servers);
  const left = /\{\{[A-Z]+\}\}/.exec(text);
  if (left !== null) throw new Error(`deploy/nginx.conf has a placeholder the test does not fill: ${left[0]}`);
  return text;
}

async function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** Starts nginx in front of the instances on `upstreams`; it is stopped when `t` ends. */
export async function startNginx(t: Test, upstreams: readonly number[]): Promise<Nginx> {
  const prefix = mkdtempSync(path.join(tmpdir(), "startline-nginx-"));
  // As root, nginx's workers run as an unprivileged user: they must be able to enter the prefix.
  chmodSync(prefix, 0o755);
  const port = await freePort();
  const conf = path.join(prefix, "nginx.conf");
  writeFileSync(conf, fillTemplate(prefix, `127.0.0.1:${port}`, upstreams));
  const errorLog = path.join(prefix, "error.log");
  const child = spawn(NGINX, ["-p", prefix, "-c", conf, "-e", errorLog], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  let running = true;
  // If this test file dies before its teardown, nginx must not outlive it
  // (SIGTERM, not SIGKILL: the master then takes its workers down with it).
  const reap = () => {
    child.kill("SIGTERM");
    rmSync(prefix, { recursive: true, force: true });
  };
  process.once("exit", reap);
  void exited.then(() => {
    running = false;
    process.removeListener("exit", reap);
  });
  t.teardown(async () => {
    if (running) {
      child.kill("SIGTERM"); // nginx's fast shutdown
      await exited;
    }
    rmSync(prefix, { recursive: true, force: true });
  });
  const readLog = () => {
    try {
      return readFileSync(errorLog, "utf8");
    } catch {
      return "";
    }
  };
  // Ready when the port accepts; nginx exiting first means the config or the binary is wrong.
  const deadline = Date.now() + 10_000;
  while (!(await accepts(port))) {
    if (!running) throw new Error(`nginx exited at start: ${output}${readLog()}`);
    if (Date.now() > deadline) throw new Error(`nginx did not listen on 127.0.0.1:${port} within 10 s: ${output}${readLog()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { port, base: `http://127.0.0.1:${port}`, errorLog: readLog };
}
