// A copy of this repository as a clone would have it: the files git tracks
// (and new ones it would track), as they are in the working tree, with their
// modification times, and node_modules linked rather than copied, since
// `npm ci` has run. What a build or a pack does there cannot disturb the
// repository that runs the tests.

import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, realpath, symlink } from "node:fs/promises";
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
 * otherwise node_modules is a link to the repository's. `"like-repository"`
 * is such a tree too, placed where the repository's real node_modules is
 * (in the copy, or, for a git worktree whose node_modules links to another
 * checkout's, beside the copy and linked from it the same way): the build's
 * record names the libraries by paths relative to dist/, and in a copy laid
 * out otherwise they name no file, so the first build there checks the
 * whole project again (8 s of CPU). Remove it with the returned `remove`.
 *
 * The copying and the removing are cp's and rm's: done file by file in
 * JavaScript (fs.cp, fs.rm), a copy with its tree of 17,000 links cost two
 * seconds of CPU, as much as the prune the copy was made for.
 */
export async function checkout(options: { dist: boolean; modules?: "link" | "tree" | "like-repository" }): Promise<{ dir: string; remove: () => Promise<void> }> {
  const base = await mkdtemp(path.join(tmpdir(), "startline-checkout-"));
  const remove = async () => void (await run("rm", ["-rf", base]));
  // The real node_modules, from the repository: "node_modules" in a checkout, "../main/node_modules" in a worktree
  // that links to main's. For "like-repository", the copy sits as deep in base as that path climbs out of it.
  const real = await realpath(path.join(ROOT, "node_modules"));
  const modules = path.relative(await realpath(ROOT), real);
  const climbs = options.modules === "like-repository" ? modules.split(path.sep).filter((part) => part === "..").length : 0;
  const dir = path.join(base, ...Array.from({ length: climbs }, () => "copy"));
  try {
    await mkdir(dir, { recursive: true });
    const { stdout } = await run("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
    // A file deleted in the working tree but still in the index is not in a clone of the working tree either.
    const files = stdout.split("\0").filter((f) => f !== "" && existsSync(path.join(ROOT, f)));
    // Each file at its path under dir (--parents), with its modification time (-p).
    await run("cp", ["-p", "--parents", "-t", dir, "--", ...files], { cwd: ROOT });
    if (options.dist) await run("cp", ["-a", path.join(ROOT, "dist"), path.join(dir, "dist")]);
    // The real directory (a worktree may link its node_modules to another's): copied as a tree of its own, never as a link to it.
    if (options.modules === "tree") await run("cp", ["-al", real, path.join(dir, "node_modules")]);
    else if (options.modules === "like-repository") {
      const own = path.join(dir, modules);
      await mkdir(path.dirname(own), { recursive: true });
      await run("cp", ["-al", real, own]);
      if (own !== path.join(dir, "node_modules")) await symlink(own, path.join(dir, "node_modules"), "dir");
    } else await symlink(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");
  } catch (error) {
    await remove();
    throw error;
  }
  return { dir, remove };
}
