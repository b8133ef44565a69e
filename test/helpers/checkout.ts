// A copy of this repository as a clone would have it: the files git tracks
// (and new ones it would track), as they are in the working tree, with their
// modification times, and node_modules linked rather than copied, since
// `npm ci` has run. What a build or a pack does there cannot disturb the
// repository that runs the tests.

import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, realpath, symlink } from "node:fs/promises";
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
 *
 * The copying and the removing are cp's and rm's: done file by file in
 * JavaScript (fs.cp, fs.rm), a copy with its tree of 17,000 links cost two
 * seconds of CPU, as much as the prune the copy was made for.
 */
export async function checkout(options: { dist: boolean; modules?: "link" | "tree" }): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), "startline-checkout-"));
  const remove = async () => void (await run("rm", ["-rf", dir]));
  try {
    const { stdout } = await run("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
    // A file deleted in the working tree but still in the index is not in a clone of the working tree either.
    const files = stdout.split("\0").filter((f) => f !== "" && existsSync(path.join(ROOT, f)));
    // Each file at its path under dir (--parents), with its modification time (-p).
    await run("cp", ["-p", "--parents", "-t", dir, "--", ...files], { cwd: ROOT });
    if (options.dist) await run("cp", ["-a", path.join(ROOT, "dist"), path.join(dir, "dist")]);
    // The real directory (a worktree may link its node_modules to another's): copied as a tree of its own, never as a link to it.
    if (options.modules === "tree") await run("cp", ["-al", await realpath(path.join(ROOT, "node_modules")), path.join(dir, "node_modules")]);
    else await symlink(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");
  } catch (error) {
    await remove();
    throw error;
  }
  return { dir, remove };
}
