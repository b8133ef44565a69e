// bench:instructions names JIT code through node's perf map. V8 reuses the
// space of code it freed and never says so, so an address can lie in an old
// range and a newer one: the name is the newer one's (the code that ran).

import t from "tap";
import { perfMapNames } from "../bench/instructions.js";

t.test("an address in a freed range and in code written later over it is named for the later code", async (t) => {
  // normalizeString optimized at start-up, then its space reused for two functions of the hot path.
  const find = perfMapNames(
    ["1000 400 JS:*normalizeString node:path:94:25", "2000 100 JS:*other", "1100 80 JS:*update flow.js:58:11", "1200 100 JS:*write connection.js:214:10", ""].join("\n"),
  );
  t.equal(find(0x1000), "JS:*normalizeString node:path:94:25", "before the reused part, the old code is all there is");
  t.equal(find(0x1100), "JS:*update flow.js:58:11");
  t.equal(find(0x117f), "JS:*update flow.js:58:11");
  t.equal(find(0x1180), "JS:*normalizeString node:path:94:25", "between the two newer ranges");
  t.equal(find(0x1250), "JS:*write connection.js:214:10");
  t.equal(find(0x2050), "JS:*other");
  t.equal(find(0x1400), undefined, "the end of a range is outside it");
  t.equal(find(0x0fff), undefined);
});

t.test("a range written later that starts before an older one still wins inside it", async (t) => {
  const find = perfMapNames("1100 100 JS:*old\n1000 400 JS:*new\n");
  t.equal(find(0x1150), "JS:*new");
  t.equal(find(0x1050), "JS:*new");
});
