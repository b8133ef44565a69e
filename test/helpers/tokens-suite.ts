// The checks of test/scaling/tokens-sqlite.test.ts (fast tier) and
// tokens-postgres.test.ts (external tier): credentials that can be taken
// back, with several processes on one database (WORKERS=2 on SQLite, two
// instances on PostgreSQL): a new
// ADMIN_TOKEN revokes the old one at start, and `npm run token -- revoke`
// makes a token fail at once, in every worker and instance.
//
// "Every worker": each check sends its request on several new connections,
// which the cluster hands to its workers in turn, so both answer it.
//
// The token commands run in this process (test/helpers/token-command.ts:
// still another process than every server), but for the first revocation,
// which runs as the real command.

import type { Test } from "tap";
import { startServer, type ServerProcess } from "./process.js";
import { tokenInProcess as token, tokenProcess } from "./token-command.js";

const OLD = "old-admin-token-0123456789";
const NEW = "new-admin-token-0123456789";

/** Where the data is: the settings a server and the token command share. */
export type Where = { readonly DATA_DIR: string } | { readonly DATABASE_URL: string };

function serve(t: Test, where: Where, env: Record<string, string> = {}): ServerProcess {
  const server = startServer({ QUIET: "1", ...where, ...env });
  t.teardown(() => stop(server));
  return server;
}

async function stop(server: ServerProcess): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  server.child.kill("SIGTERM");
  await server.exited();
}

/** The statuses of an administrator's UPDATE with `bearer`, sent `times` times, each on its own connection, to each base. */
async function updates(bases: readonly string[], bearer: string, times = 4): Promise<number[]> {
  const statuses: number[] = [];
  for (const base of bases) {
    for (let i = 0; i < times; i++) {
      const r = await fetch(`${base}/api/v1/artigo/1`, {
        method: "UPDATE",
        headers: { Authorization: `Bearer ${bearer}`, "Content-Type": "application/merge-patch+json", Connection: "close" },
        body: JSON.stringify({ title: `by ${bearer.slice(0, 6)} ${i}` }),
      });
      await r.arrayBuffer();
      statuses.push(r.status);
    }
  }
  return statuses;
}

const all = (status: number, n: number) => Array.from({ length: n }, () => status);

/** Starts `count` servers on `where` at once and waits until all listen. */
async function servers(t: Test, where: Where, count: number, env: Record<string, string>): Promise<{ procs: ServerProcess[]; bases: string[] }> {
  const procs = Array.from({ length: count }, () => serve(t, where, env));
  return { procs, bases: await Promise.all(procs.map((p) => p.url())) };
}

export async function rotation(t: Test, where: Where, count: number, env: Record<string, string>): Promise<void> {
  const first = await servers(t, where, count, { ...env, ADMIN_TOKEN: OLD });
  t.strictSame(await updates(first.bases, OLD), all(200, 4 * count), "the first value is an administrator's token");
  await Promise.all(first.procs.map(stop));

  const second = await servers(t, where, count, { ...env, ADMIN_TOKEN: NEW });
  t.strictSame(await updates(second.bases, OLD), all(401, 4 * count), "after a restart with a new value, the old one is refused everywhere");
  t.strictSame(await updates(second.bases, NEW), all(200, 4 * count), "and the new one works");
  const said = second.procs.flatMap((p) => p.lines).filter((l) => /^revoked token \d+ \(admin, created .*\): an earlier ADMIN_TOKEN granted it/.test(l));
  t.equal(said.length, 1, `the start says so, once: ${said.join(" | ")}`);
  await Promise.all(second.procs.map(stop));

  const third = await servers(t, where, count, env);
  t.strictSame(await updates(third.bases, NEW), all(401, 4 * count), "with ADMIN_TOKEN removed, what it granted is revoked too");
  const created = third.procs.flatMap((p) => p.lines).filter((l) => /created an administrator token/.test(l));
  t.equal(created.length, 1, "and, as on a first start, one new administrator token is made and printed");
  const generated = /: (sl_\S+)$/.exec(created[0] ?? "")?.[1] ?? "";
  t.strictSame(await updates(third.bases, generated), all(200, 4 * count), "which works");
  await Promise.all(third.procs.map(stop));
}

export async function commands(t: Test, where: Where, count: number, env: Record<string, string>): Promise<void> {
  const { bases } = await servers(t, where, count, { ...env, ADMIN_TOKEN: OLD });

  const made = [await token(where, "add", "--role", "admin"), await token(where, "add", "--role", "admin")];
  const [one, two] = made.map((r) => /^(sl_[A-Za-z0-9_-]{43})$/m.exec(r.stdout)?.[1] ?? "");
  t.ok(one !== "" && two !== "", "add prints each new token");
  t.strictSame(await updates(bases, one!), all(200, 4 * count), "a new token works at once, everywhere");

  const listed = await token(where, "list");
  t.equal(listed.code, 0);
  const rows = listed.stdout.trim().split("\n");
  t.match(rows[0], /^id\s+role\s+origin\s+created\s+last used$/, `a header: ${rows[0]}`);
  t.equal(rows.length, 4, "the header, the ADMIN_TOKEN token and the two made here");
  t.match(rows[1], /^1\s+admin\s+ADMIN_TOKEN\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\s+never$/, "the setting's token, not used yet");
  t.match(rows[2], /^2\s+admin\s+token add\s+\S+Z\s+\d{4}-\S+Z$/, "the token just used has a last use");
  t.match(rows[3], /^3\s+admin\s+token add\s+\S+Z\s+never$/, "the unused one says never");
  for (const secret of [OLD, one!, two!]) t.notOk(listed.stdout.includes(secret), "no secret is listed");

  const byId = await tokenProcess(where, "revoke", "2");
  t.equal(byId.code, 0, byId.stderr);
  t.match(byId.stdout, /^revoked token 2 \(admin, created \S+\); it is refused from now on$/m);
  t.strictSame(await updates(bases, one!), all(401, 4 * count), "revoked by id: refused at once, in every process");

  const byToken = await token(where, "revoke", two!);
  t.equal(byToken.code, 0, byToken.stderr);
  t.match(byToken.stdout, /^revoked token 3 /m);
  t.strictSame(await updates(bases, two!), all(401, 4 * count), "revoked by the token itself: refused at once");

  const setting = await token(where, "revoke", "1");
  t.match(setting.stdout, /it came from ADMIN_TOKEN: a server started with that value grants it again/, "revoking the setting's token warns that a start grants it again");
  t.strictSame(await updates(bases, OLD), all(401, 4 * count), "until then it is refused");

  const again = await token(where, "revoke", "2");
  t.equal(again.code, 1, "revoking what is gone fails");
  t.match(again.stderr, /^startline: there is no token with id 2 \(npm run token -- list shows the ids\)$/m);
  const unknown = await token(where, "revoke", "sl_not-a-token-anyone-made-0123456789");
  t.equal(unknown.code, 1);
  t.match(unknown.stderr, /that token is not stored/);
  t.strictSame((await token(where, "list")).stdout.trim(), "no tokens");
  const usage = await token(where, "revoke");
  t.equal(usage.code, 2, "a command line that is not a command: usage, exit 2");
  t.match(usage.stderr, /usage: npm run token -- add --role admin\|user\n\s+npm run token -- list\n\s+npm run token -- revoke <token-or-id>/);
}

export async function userTokenAsSetting(t: Test, where: Where, env: Record<string, string>): Promise<void> {
  const made = await token(where, "add", "--role", "user");
  const user = /^(sl_\S+)$/m.exec(made.stdout)?.[1] ?? "";
  const server = serve(t, where, { ...env, ADMIN_TOKEN: user });
  const outcome = await Promise.race([server.exited().then((code) => ({ code })), server.line(/^listening on /).then((line) => ({ line }))]);
  t.strictSame(outcome, { code: 1 }, "the start stops, exit code 1");
  t.equal(server.lines.length, 1, server.lines.join(" | "));
  t.match(server.lines[0], /^startline: ADMIN_TOKEN is the value of token 1, a standard user's token; a token's role never changes, so choose another value \(or revoke that token: npm run token -- revoke 1\)$/);
  t.notOk(server.lines[0]?.includes(user), "without printing the token");
}
