// What an acknowledged write survives, through the HTTP API of the real
// server process: a restart, and a SIGKILL in the middle of writes.

import t from "tap";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { startServer } from "../helpers/process.js";

const dir = mkdtempSync(path.join(tmpdir(), "startline-durability-"));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

// One data directory throughout: a start, a clean restart, then a SIGKILL under writes and a start
// after it. The server that checks the restart is the one killed under writes: a process of its own for
// each cost a start more (about 0.45 s of CPU), and what the kill test asserts (facts written by the API,
// and whole) does not depend on what the restart test stored before it.
const dataDir = path.join(dir, "data");

t.test("a restart keeps posts and facts, and seeds only once", async (t) => {
  const first = startServer({ DATA_DIR: dataDir, QUIET: "1", ADMIN_TOKEN: "restart-admin-token-0001" });
  let base = await first.url();
  const created = await fetch(`${base}/api/v1/post/survivor`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ title: "Still here", body: "after a restart" }) });
  t.equal(created.status, 201);
  const factsBefore = ((await (await fetch(`${base}/api/v2/facts`)).json()) as { facts: unknown[] }).facts.length;
  first.child.kill("SIGTERM");
  t.equal(await first.exited(), 0);

  const second = startServer({ DATA_DIR: dataDir, QUIET: "1", ADMIN_TOKEN: "restart-admin-token-0001" });
  base = await second.url();
  const post = (await (await fetch(`${base}/api/v1/post/survivor`)).json()) as { title: string };
  t.equal(post.title, "Still here");
  const factsAfter = ((await (await fetch(`${base}/api/v2/facts`)).json()) as { facts: unknown[] }).facts.length;
  t.equal(factsAfter, factsBefore, "seed facts are not inserted a second time");
  const update = await fetch(`${base}/api/v1/artigo/1`, {
    method: "UPDATE",
    headers: { "Content-Type": "application/json", Authorization: "Bearer restart-admin-token-0001" },
    body: JSON.stringify({ title: "t" }),
  });
  t.equal(update.status, 200, "the admin token (stored hashed) still works");

  await t.test("SIGKILL during writes loses no acknowledged write", async (t) => {
    const server = second;
    const acknowledged = new Set<string>();
    let attempted = 0;
    let killed = false;
    // Four connections write until the process dies under them.
    const writer = async (w: number) => {
      for (let i = 0; !killed; i++) {
        const text = `Crash test fact ${w}-${i}.`;
        attempted++;
        let res: Response;
        try {
          res = await fetch(`${base}/api/v2/facts`, { method: "POST", headers: { "Content-Type": "text/plain" }, body: text });
        } catch {
          return; // the server is gone
        }
        // A process killed sends no status at all: any status but 201 is a write refused while all was well.
        const refused = res.status !== 201;
        if (refused) t.fail(`${text}: answered ${res.status}, not 201`);
        else acknowledged.add(text); // the status line says it is stored, whatever becomes of the body
        try {
          await res.arrayBuffer();
        } catch {
          return;
        }
        if ((acknowledged.size >= 200 || refused) && !killed) {
          killed = true;
          server.child.kill("SIGKILL");
        }
      }
    };
    await Promise.all([0, 1, 2, 3].map(writer));
    await server.exited();

    const again = startServer({ DATA_DIR: dataDir, QUIET: "1" });
    const base2 = await again.url();
    const { facts } = (await (await fetch(`${base2}/api/v2/facts`)).json()) as { facts: { text: string; source: string }[] };
    const stored = new Set(facts.filter((f) => f.source === "api").map((f) => f.text));
    const lost = [...acknowledged].filter((text) => !stored.has(text));
    t.equal(lost.length, 0, `acknowledged ${acknowledged.size} of ${attempted} attempted writes; lost ${lost.length}`);
    t.ok(
      facts.every((f) => typeof f.text === "string" && f.text.length > 0 && typeof f.source === "string"),
      "every stored fact is whole",
    );
    t.ok(stored.size >= acknowledged.size, "unacknowledged writes may have landed too; none is half-written");
    again.child.kill("SIGTERM");
    t.equal(await again.exited(), 0, "a start after the kill stops cleanly on SIGTERM too");
  });
});
