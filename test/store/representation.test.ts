// The tag of a stored representation: the first 27 base64url characters of
// the SHA-256 of the text's UTF-8 bytes, whichever way this Node computes it
// (representation.ts picks crypto.hash when there is one).

import t from "tap";
import { createHash } from "node:crypto";
import { tagOf } from "../../src/store/representation.js";

t.test("tagOf is SHA-256 of the UTF-8 bytes, base64url, 27 characters", async (t) => {
  const texts = { empty: "", ascii: '{"id":"a"}', "astral, accented, line separator, newline": "T\u{1F600} \u00e9 \u2028 line\nbreak", "100,000 characters": "x".repeat(100_000) };
  for (const [name, text] of Object.entries(texts)) {
    const expected = createHash("sha256").update(Buffer.from(text, "utf8")).digest("base64url").slice(0, 27);
    t.equal(tagOf(text), expected, name);
  }
});
