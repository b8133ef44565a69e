// The repository's root, wherever the test runs from: as TypeScript under
// test/ (through tsx or tap), or compiled under dist/test/ (test/run.mjs). A
// path counted up from this file would differ between the two, so the root is
// the nearest directory above that holds a package.json (dist/ holds none).

import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

function findRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "package.json"))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export const ROOT = findRoot(path.dirname(fileURLToPath(import.meta.url)));
