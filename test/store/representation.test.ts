// The tag of a stored representation: the first 27 base64url characters of
// the SHA-256 of the text's UTF-8 bytes, whichever way this Node computes it
// (representation.ts picks crypto.hash when there is one).

import t from "tap";
import { createHash } from "node:crypto";
import { tagOf } from "../../src/store/representation.js";

t.test("tagOf is SHA-256 of the UTF-8 bytes, base64url, 27 characters", async (t) => {
  for (const text of ["", "{\"id\":\"a\"}", "T\u{1F600} \u00e9 \u2028 line\nbreak", "x".repeat(100_000)]) {
    const expected = createHash("sha256").update(Buffer.from(text, "utf8")).digest("base64url").slice(0, 27);
    t.equal(tagOf(text), expected, `${JSON.stringify(text.slice(0, 20))} (${text.length} characters)`);
  }
});
