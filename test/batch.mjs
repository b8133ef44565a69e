// Several compiled test files run one after another in one process, for
// test/run.mjs: Node and tap take about 0.3 s of CPU to start, which for most
// files is more than the file's own work. Each file is imported once the one
// before it has ended: its top level runs, its tests (queued on tap's one
// root) run, and a last test named `<file> ended` marks the end of its share
// of the output. Between the markers, a line `# startline-file <file> <ms>`
// gives the runner each file's time. A file that fails to load is a failure
// of its own, and the next file still runs. What a file's root teardown
// undoes (a temporary directory, a server it started at its top level) is
// undone when the process ends, after the last file.
//
// Usage (from the repository root): node test/batch.mjs dist/test/a.test.js dist/test/b.test.js ...

import { pathToFileURL } from "node:url";
import path from "node:path";
import t from "tap";

for (const file of process.argv.slice(2)) {
  const started = Date.now();
  try {
    await import(pathToFileURL(path.resolve(file)).href);
  } catch (error) {
    t.fail(`${file} could not be loaded: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  }
  await t.test(`${file} ended`, (t) => t.end());
  t.comment(`startline-file ${file} ${Date.now() - started}`);
}
