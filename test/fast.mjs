// `npm run test:fast`: tap over every test file except those test/external.json
// lists, the ones that need a program from outside this repository (Chromium,
// nginx, PostgreSQL, a load generator). test/tiers.test.ts, itself in the fast
// tier, fails when that list and the test files' imports disagree, so the tiers
// cannot drift apart silently. `npm test` still runs everything.

import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
const external = Object.keys(JSON.parse(readFileSync(path.join(root, "test", "external.json"), "utf8")));
const tap = path.join(root, "node_modules", "tap", "dist", "esm", "run.mjs");
const run = spawnSync(process.execPath, [tap, ...external.map((file) => `--exclude=${file}`), ...process.argv.slice(2)], { cwd: root, stdio: "inherit" });
process.exit(run.status ?? 1);
