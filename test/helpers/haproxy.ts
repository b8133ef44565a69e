// HAProxy in front of one backend, for the tests: a generated config in a
// temp dir, a free port on 127.0.0.1, run in the foreground (-W -db: master
// and worker, no daemon, messages on stderr) as a child process, stopped and
// removed when the test ends.

import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Test } from "tap";
import { ownForTest } from "./owned-child.js";
import { freePort } from "./ports.js";

export const HAPROXY = process.env.HAPROXY_PATH ?? "/usr/sbin/haproxy";

export interface Haproxy {
  readonly port: number;
  /** What HAProxy wrote, for failure messages. */
  output(): string;
}

/**
 * HTTP mode with HAProxy's defaults (keep-alive on both sides, its own request
 * parser), plus the timeouts it warns about when missing. `extra` lines go in
 * the defaults section.
 */
export function haproxyConfig(listen: string, upstream: number, extra: readonly string[] = []): string {
  return [
    "defaults",
    "  mode http",
    "  timeout connect 5s",
    "  timeout client 30s",
    "  timeout server 30s",
    ...extra.map((line) => `  ${line}`),
    "frontend front",
    `  bind ${listen}`,
    "  default_backend startline",
    "backend startline",
    `  server one 127.0.0.1:${upstream}`,
    "",
  ].join("\n");
}

/** Starts HAProxy in front of 127.0.0.1:`upstream`; it is stopped when `t` ends. */
export async function startHaproxy(t: Test, upstream: number, extra: readonly string[] = []): Promise<Haproxy> {
  // The port is free when chosen, but another process may bind it first:
  // then HAProxy exits saying so, and another port is tried.
  for (let attempt = 1; ; attempt++) {
    const started = await startOnce(t, upstream, extra);
    if (typeof started !== "string") return started;
    if (!/Address already in use|cannot bind/i.test(started) || attempt >= 3) throw new Error(started);
  }
}

async function startOnce(t: Test, upstream: number, extra: readonly string[]): Promise<Haproxy | string> {
  const dir = mkdtempSync(path.join(tmpdir(), "startline-haproxy-"));
  const port = await freePort();
  const cfg = path.join(dir, "haproxy.cfg");
  writeFileSync(cfg, haproxyConfig(`127.0.0.1:${port}`, upstream, extra));
  const child = spawn(HAPROXY, ["-W", "-db", "-f", cfg], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const { exited, running } = ownForTest(t, child, dir);
  // The master binds the listener before it forks the worker, and says
  // "Loading success." once the worker runs: that line is the event to wait
  // for. Exiting first means the port was taken or the config is wrong.
  const ready = await new Promise<boolean>((resolve) => {
    const finish = (value: boolean) => {
      clearTimeout(hangBound);
      resolve(value);
    };
    const onData = (d: Buffer) => {
      output += d.toString();
      if (output.includes("Loading success.")) finish(true);
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    void exited.then(() => finish(false));
    // Only a bound on a broken start: the line or the exit comes first.
    const hangBound = setTimeout(() => finish(false), 30_000);
  });
  if (!ready || !running()) return `HAProxy did not start on 127.0.0.1:${port}: ${output}`;
  return { port, output: () => output };
}
