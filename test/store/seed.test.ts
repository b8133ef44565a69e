// The seed data itself, apart from any store.

import t from "tap";
import { SEED_ARTICLES, SEED_FACTS } from "../../src/store/seed.js";

t.test("facts", async (t) => {
  t.ok(SEED_FACTS.length >= 20, `at least 20 facts (${SEED_FACTS.length})`);
  t.equal(new Set(SEED_FACTS.map((f) => f.text)).size, SEED_FACTS.length, "no fact twice");
  for (const fact of SEED_FACTS) {
    t.ok(fact.text.trim() === fact.text && fact.text.length > 0 && fact.text.length <= 500, `text in bounds: ${fact.text}`);
    t.match(fact.source, /\bRFC \d{3,4}\b/, `source cites an RFC: ${fact.source}`);
    t.notMatch(fact.text, /[\u0000-\u001f\u007f]/, "no control characters");
  }
});

t.test("articles", async (t) => {
  t.strictSame(
    SEED_ARTICLES.map((a) => a.id),
    ["1", "2", "3"],
  );
  for (const article of SEED_ARTICLES) {
    t.ok(article.title.length > 0 && article.title.length <= 200, `title ${article.id}`);
    t.ok(article.body.length > 0, `body ${article.id}`);
    t.ok(article.author.length > 0, `author ${article.id}`);
  }
});
