// A copy of this repository as a clone would have it: the files git tracks
// (and new ones it would track), as they are in the working tree, with their
// modification times, and node_modules linked rather than copied, since
// `npm ci` has run. What a build or a pack does there cannot disturb the
// repository that runs the tests.

import { execFile } from "node:child_process";
import { cp, mkdtemp, realpath, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { ROOT } from "./root.js";

export { ROOT };

const run = promisify(execFile);

/**
 * A fresh copy in a new temporary directory; `dist` also copies the built
 * output (and the build's record) as it is, times included. `modules: "tree"`
 * gives the copy a node_modules of its own, as `npm ci` makes one: new
 * directories, each file hard-linked to the repository's (nothing done in a
 * copy writes into one: a prune unlinks, a build writes under dist/);
 * otherwise node_modules is a link to the repository's. Remove it with the
 * returned `remove`.
 */
export async function checkout(options: { dist: boolean; modules?: "link" | "tree" }): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), "startline-checkout-"));
  const remove = () => rm(dir, { recursive: true, force: true });
  try {
    const { stdout } = await run("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
    const files = stdout.split("\0").filter((f) => f !== "");
    for (const file of files) {
      // A file deleted in the working tree but still in the index is not in a clone of the working tree either.
      await cp(path.join(ROOT, file), path.join(dir, file), { preserveTimestamps: true }).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "ENOENT") throw error;
      });
    }
    if (options.dist) await cp(path.join(ROOT, "dist"), path.join(dir, "dist"), { recursive: true, preserveTimestamps: true });
    // The real directory (a worktree may link its node_modules to another's): copied as a tree of its own, never as a link to it.
    if (options.modules === "tree") await run("cp", ["-al", await realpath(path.join(ROOT, "node_modules")), path.join(dir, "node_modules")]);
    else await symlink(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");
  } catch (error) {
    await remove();
    throw error;
  }
  return { dir, remove };
}
