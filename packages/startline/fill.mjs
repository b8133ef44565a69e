// Fills this package from the repository's build, when it is packed (its
// prepack step, after the root's `npm run build`): the engine's compiled
// files and declarations (dist/src/index.*, dist/src/http/, dist/src/router/,
// and dist/src/node/: node:http's interface on the engine, the "./node"
// export), the examples and docs/library.md. This directory's package.json is the
// library's own manifest, which declares no dependency; the repository's is
// the server's, whose dependencies (the store drivers, js-yaml) a user of
// the engine never needs. What is copied here is generated: .gitignore keeps
// it out of git, and each fill starts from an empty dist/.
//
// The package is ESM. Its "require" condition points at the same files, so a
// CommonJS program's `require("startline")` loads them through Node's
// require(esm) (Node 20.19 and later): one copy of each module, whichever way
// it is loaded, so a class is the same class from both.

import { cp, rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, "..", "..");
const built = path.join(root, "dist", "src");

/** Compiled output and declarations; source maps stay out, as the sources they point at are not shipped. */
const noMaps = (file) => !file.endsWith(".map");

await rm(path.join(here, "dist"), { recursive: true, force: true });
for (const name of ["index.js", "index.d.ts"]) await cp(path.join(built, name), path.join(here, "dist", name));
for (const dir of ["http", "router", "node"]) await cp(path.join(built, dir), path.join(here, "dist", dir), { recursive: true, filter: noMaps });
await rm(path.join(here, "examples"), { recursive: true, force: true });
await cp(path.join(root, "examples"), path.join(here, "examples"), { recursive: true });
await cp(path.join(root, "docs", "library.md"), path.join(here, "docs", "library.md"));
