// `npm start` builds before it serves, and builds exactly when a source
// changed: `tsc -b` with an incremental record (tsconfig.build.json) leaves
// dist/ alone when no source is newer than its output, and after an edit
// recompiles what the edit touches. Held in a copy of the repository by what
// the build writes, never by how long it takes: a start with nothing changed
// writes no file at all; a start after an edit serves the edit.

import { spawn } from "node:child_process";
import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import t from "tap";
import { checkout } from "./helpers/checkout.js";
import { serverEnv } from "./helpers/process.js";

/** Every file under dist/ and its modification time. */
async function written(dir: string): Promise<Map<string, number>> {
  const files = new Map<string, number>();
  for (const entry of await readdir(path.join(dir, "dist"), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    files.set(path.relative(dir, file), (await stat(file)).mtimeMs);
  }
  return files;
}

/** `npm start` in `dir`; resolves with the body of GET /api/v2/status once it listens, then stops it. */
async function startAndAsk(dir: string): Promise<string> {
  // Its own process group, so that npm and the node it starts stop together.
  const child = spawn("npm", ["start"], { cwd: dir, env: serverEnv({ QUIET: "1" }), stdio: ["ignore", "pipe", "pipe"], detached: true });
  const closed = new Promise<number | null>((resolve) => child.once("close", resolve));
  let output = "";
  try {
    const base = await new Promise<string>((resolve, reject) => {
      const look = (data: Buffer) => {
        output += data.toString();
        const m = /^listening on (http:\/\/\S+)$/m.exec(output);
        if (m) resolve(m[1]!);
      };
      child.stdout!.on("data", look);
      child.stderr!.on("data", look);
      void closed.then((code) => reject(new Error(`npm start exited (${code}) before listening:\n${output}`)));
    });
    return await (await fetch(`${base}/api/v2/status`)).text();
  } finally {
    if (child.exitCode === null) process.kill(-child.pid!, "SIGTERM");
    await closed;
  }
}

t.test("npm start rebuilds exactly when a source changed", async (t) => {
  // node_modules as a tree of the copy's own, where the repository's real one is (test/helpers/checkout.ts):
  // the build's record names each library file by its real path, relative to dist/, and from a copy laid out
  // otherwise that path names no file, so the first build after the edit would check and write the whole
  // project again.
  const copy = await checkout({ dist: true, modules: "like-repository" });
  t.teardown(copy.remove);
  // Whatever dist/ the repository had, the first start leaves one that matches the sources.
  t.equal(await startAndAsk(copy.dir), '{"response":"The server is up."}');

  const before = await written(copy.dir);
  t.ok(before.has("dist/tsconfig.build.tsbuildinfo"), "the build keeps its record in dist/");
  t.equal(await startAndAsk(copy.dir), '{"response":"The server is up."}', "a second start serves");
  t.strictSame(await written(copy.dir), before, "and, with no source changed, writes nothing in dist/: nothing was rebuilt");

  const source = path.join(copy.dir, "src", "api", "status.ts");
  const text = await readFile(source, "utf8");
  t.ok(text.includes('"The server is up."'));
  await writeFile(source, text.replace('"The server is up."', '"The server is up, edited."'));
  t.equal(await startAndAsk(copy.dir), '{"response":"The server is up, edited."}', "after an edit, the next start serves the edit");
  const after = await written(copy.dir);
  t.not(after.get("dist/src/api/status.js"), before.get("dist/src/api/status.js"), "the edited source was compiled again");
});
