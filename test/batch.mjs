// Several compiled test files run one after another in one process, for
// test/run.mjs: Node and tap take about 0.3 s of CPU to start, which for most
// files is more than the file's own work. Each file is imported, in a test
// named `<file> loaded`, once the one before it has ended: its top level
// runs, its tests (queued on tap's one root) run, and a last test named
// `<file> ended` marks the end of its share of the output. After it, a line
// `# startline-file <file> <ms>` gives the runner the file's time. A file
// that fails to load fails its `loaded` test, and the next file still runs.
// What a file's root teardown undoes (a temporary directory, a server it
// started at its top level) is undone when the process ends, after the last
// file.
//
// Usage (from the repository root): node test/batch.mjs dist/test/a.test.js dist/test/b.test.js ...

import { pathToFileURL } from "node:url";
import path from "node:path";
import t from "tap";

for (const file of process.argv.slice(2)) {
  const started = Date.now();
  // Loaded inside a test of the root's, which its tests wait behind: once a file has given tap's root a
  // teardown, tap ends the root when it has been idle for two timer turns, and loading the next file's
  // modules can take longer than that on a busy machine. A file that fails to load fails this test.
  await t.test(`${file} loaded`, async () => {
    await import(pathToFileURL(path.resolve(file)).href);
  });
  await t.test(`${file} ended`, (t) => t.end());
  t.comment(`startline-file ${file} ${Date.now() - started}`);
}
