// A production install as docs/operations.md describes it, in a fresh copy of
// the repository: everything installed, built, `npm prune --omit=dev`, then
// what `npm run serve` runs. What the server imports at run time must be among the
// dependencies the prune keeps, or it fails at its first import; the test
// serves JSON and YAML from a SQLite file there to show that it does not.

import { execFile } from "node:child_process";
import { lstat, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import t from "tap";
import { checkout } from "./helpers/checkout.js";
import { listeningScript } from "./helpers/process.js";
import { splitResponses, talk } from "./helpers/wire.js";

const run = promisify(execFile);
/** npm without the caller's npm settings (`npm run` passes its own down). */
const npmEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith("npm_")));

t.test("built, pruned of devDependencies, and served: JSON and YAML from SQLite", async (t) => {
  // The copy starts built (`npm ci` and `npm run build` have run for the tests), with dist/ copied; the
  // prune must not touch the repository's node_modules, so the copy gets a tree of its own, as `npm ci`
  // would make it: new directories, files hard-linked (a prune unlinks, it never writes into a file).
  const fresh = await checkout({ dist: true, modules: "tree" });
  t.teardown(fresh.remove);
  t.notOk((await lstat(path.join(fresh.dir, "node_modules"))).isSymbolicLink(), "the copy's node_modules is its own");
  await run("npm", ["prune", "--omit=dev", "--no-audit", "--no-fund"], { cwd: fresh.dir, env: npmEnv });

  const left = new Set(await readdir(path.join(fresh.dir, "node_modules")));
  for (const dev of ["typescript", "tsx", "tap", "fastify", "autocannon", "ajv"]) t.notOk(left.has(dev), `${dev} (a devDependency) is pruned`);
  for (const dep of ["better-sqlite3", "js-yaml", "pg"]) t.ok(left.has(dep), `${dep} stays`);

  const data = await mkdtemp(path.join(tmpdir(), "startline-production-"));
  t.teardown(() => rm(data, { recursive: true, force: true }));
  // What `npm run serve` runs, run here directly so that the test owns the server's process.
  const { scripts } = JSON.parse(await readFile(path.join(fresh.dir, "package.json"), "utf8")) as { scripts: Record<string, string> };
  t.equal(scripts.serve, "node dist/src/main.js", "npm run serve runs the built server and nothing else");
  const { url } = await listeningScript(t, "the server", path.join(fresh.dir, "dist", "src", "main.js"), { DATA_DIR: data, QUIET: "1" }, fresh.dir);
  const port = Number(new URL(url).port);
  const post = JSON.stringify({ title: "Pruned", body: "Served without the compiler." });
  const [status, created, yaml] = splitResponses(
    await talk(port, [
      "GET /api/v2/status HTTP/1.1\r\nHost: x\r\n\r\n",
      `POST /api/v1/post/pruned HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${post.length}\r\n\r\n${post}`,
      "GET /api/v1/posts HTTP/1.1\r\nHost: x\r\nAccept: application/yaml\r\nConnection: close\r\n\r\n",
    ]),
  );
  t.equal(status!.status, 200);
  t.equal(created!.status, 201, "a post stored in SQLite (better-sqlite3) and checked against its schema (no library: Ajv, a devDependency, is pruned)");
  t.equal(yaml!.status, 200);
  t.match(yaml!.headers["content-type"], /^application\/yaml/);
  t.match(yaml!.body, /title: Pruned/, "the list, written by js-yaml");
});
