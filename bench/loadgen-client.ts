// The runner's side of the load generator (bench/loadgen.ts): a child process
// pinned to its own core, sent one job per line and answering one per line.

import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import type { IdleCloseJob, IdleClosed, IdleOpenJob, IdleOpened, LoadReady, LoadReply, LoadSummary, ThroughputJob } from "./loadgen.js";
import { AUTOCANNON_METHODS_MODULE, ROOT, benchScript } from "./paths.js";
import { pinnedNode, type Pinning } from "./proc.js";
import type { RequestSpec } from "./scenarios.js";

export class LoadGenerator {
  private readonly pending = new Map<number, { resolve: (r: LoadReply & { ok: true }) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private readonly exited: Promise<void>;
  private readonly ready: Promise<LoadReady>;

  private constructor(readonly child: ChildProcess) {
    const lines = createInterface({ input: child.stdout! });
    let onReady: (ready: LoadReady) => void = () => {};
    this.ready = new Promise((resolve) => (onReady = resolve));
    lines.on("line", (line) => {
      const parsed = JSON.parse(line) as LoadReply | LoadReady;
      if ("ready" in parsed) {
        onReady(parsed);
        return;
      }
      const reply = parsed;
      const waiter = this.pending.get(reply.id);
      if (waiter === undefined) return;
      this.pending.delete(reply.id);
      if (reply.ok) waiter.resolve(reply);
      else waiter.reject(new Error(`load generator: ${reply.error}`));
    });
    this.exited = new Promise((resolve) =>
      child.once("exit", (code, signal) => {
        for (const waiter of this.pending.values()) waiter.reject(new Error(`load generator exited (code ${code}, signal ${signal})`));
        this.pending.clear();
        resolve();
      }),
    );
  }

  /** Resolves once the load generator runs (node itself, after taskset's exec), with the methods autocannon accepts there. */
  async whenReady(): Promise<LoadReady> {
    const exited = this.exited.then(() => {
      throw new Error("the load generator exited before it was ready");
    });
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error("the load generator did not start within 10 s")), 10_000).unref());
    return Promise.race([this.ready, exited, timeout]);
  }

  /** `openFiles`: raise its limit on open files that far (for idle connections). */
  static start(pinning: Pinning, methods: readonly string[], openFiles: number | undefined): LoadGenerator {
    // --require makes autocannon accept the extra methods (bench/autocannon-methods.cjs,
    // found from the repository root, as it is not compiled into dist/).
    const [command, args] = pinnedNode(pinning, pinning.clientCore, ["--require", AUTOCANNON_METHODS_MODULE, benchScript("loadgen")], openFiles);
    const child = spawn(command, args, {
      cwd: ROOT,
      env: { ...process.env, AUTOCANNON_EXTRA_METHODS: methods.join(",") },
      stdio: ["pipe", "pipe", "inherit"],
    });
    return new LoadGenerator(child);
  }

  private send(job: Omit<ThroughputJob, "id"> | Omit<IdleOpenJob, "id"> | Omit<IdleCloseJob, "id">): Promise<LoadReply & { ok: true }> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.stdin!.write(JSON.stringify({ ...job, id }) + "\n");
    });
  }

  async run(job: Omit<ThroughputJob, "id" | "kind">): Promise<LoadSummary> {
    const reply = await this.send({ ...job, kind: "throughput" });
    if (reply.summary === undefined) throw new Error("load generator: no summary");
    return reply.summary;
  }

  async idleOpen(port: number, request: RequestSpec, connections: number): Promise<IdleOpened> {
    const reply = await this.send({ kind: "idle-open", port, request, connections, concurrency: 100, timeoutMs: 10_000 });
    if (reply.opened === undefined) throw new Error("load generator: no idle-open result");
    return reply.opened;
  }

  async idleClose(): Promise<IdleClosed> {
    const reply = await this.send({ kind: "idle-close" });
    if (reply.closed === undefined) throw new Error("load generator: no idle-close result");
    return reply.closed;
  }

  async close(): Promise<void> {
    this.child.stdin!.end();
    await this.exited;
  }
}
