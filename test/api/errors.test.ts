// Every error the API answers, over real sockets: the status code that fits
// the outcome (never 200), an RFC 9457 problem+json body with type, title,
// status, detail and instance, and a detail that names the field or the rule.

import t from "tap";
import { SEED_FACTS } from "../../src/store/seed.js";
import { ADMIN_TOKEN, bearer, checkProblem, jsonOf, raw, startApi, USER_TOKEN } from "./client.js";
import { splitResponses, talk } from "../helpers/wire.js";

const JSON_CT = { "Content-Type": "application/json" };
const valid = (extra: Record<string, unknown> = {}) => JSON.stringify({ title: "A title", body: "A body", ...extra });

t.test("400: a body that is not JSON, an empty body, a body that is not UTF-8", async (t) => {
  const api = await startApi(t);
  await raw(api.port, "POST", "/api/v1/post/exists", JSON_CT, valid());

  const cases: [string, string, string, Record<string, string>, string | Buffer, RegExp][] = [
    ["bad JSON on publish", "POST", "/api/v1/post/p1", JSON_CT, '{"title": "x", ', /not valid JSON/],
    ["bad JSON on patch", "PATCH", "/api/v1/post/exists", JSON_CT, "{title: 'x'}", /not valid JSON/],
    ["bad JSON on article update", "UPDATE", "/api/v1/artigo/1", { ...JSON_CT, ...bearer(ADMIN_TOKEN) }, "[1,", /not valid JSON/],
    ["empty body on publish", "POST", "/api/v1/post/p2", JSON_CT, "", /empty/],
    ["whitespace body on publish", "POST", "/api/v1/post/p3", JSON_CT, " \r\n\t ", /empty/],
    ["empty body on patch", "PATCH", "/api/v1/post/exists", JSON_CT, "", /empty/],
    ["invalid UTF-8 JSON", "POST", "/api/v1/post/p4", JSON_CT, Buffer.from([0x7b, 0x22, 0x74, 0xff, 0xfe, 0x22, 0x7d]), /UTF-8/],
    ["overlong UTF-8 encoding", "POST", "/api/v1/post/p5", JSON_CT, Buffer.from('{"title":"\xc0\xaf","body":"x"}', "latin1"), /UTF-8/],
    ["invalid UTF-8 fact", "POST", "/api/v2/facts", { "Content-Type": "text/plain" }, Buffer.from([0x48, 0x54, 0x54, 0x50, 0xc3, 0x28]), /UTF-8/],
    ["lone surrogate encoded in UTF-8 fact", "POST", "/api/v2/facts", { "Content-Type": "text/plain" }, Buffer.from([0x61, 0xed, 0xa0, 0x80]), /UTF-8/],
  ];
  for (const [name, method, target, headers, body, detail] of cases) {
    await t.test(name, async (t) => {
      const r = await raw(api.port, method, target, headers, body);
      checkProblem(t, r, 400, detail, target);
    });
  }
  t.equal((await api.store.posts.list()).length, 1, "nothing was published");
  t.equal((await api.store.facts.list()).length, SEED_FACTS.length, "no fact was added");
});

t.test("401: no credentials, or not enough, with a Bearer challenge", async (t) => {
  const api = await startApi(t, { writeRequiresToken: true });
  const cases: [string, string, string, Record<string, string>, string | undefined][] = [
    ["article update, anonymous", "UPDATE", "/api/v1/artigo/1", JSON_CT, '{"title":"x"}'],
    ["article update, standard user", "UPDATE", "/api/v1/artigo/1", { ...JSON_CT, ...bearer(USER_TOKEN) }, '{"title":"x"}'],
    ["article update of a missing article, standard user", "UPDATE", "/api/v1/artigo/999", { ...JSON_CT, ...bearer(USER_TOKEN) }, '{"title":"x"}'],
    ["publish, anonymous, when writes need a token", "POST", "/api/v1/post/p", JSON_CT, valid()],
    ["fact, anonymous, when writes need a token", "POST", "/api/v2/facts", { "Content-Type": "text/plain" }, "A fact."],
  ];
  for (const [name, method, target, headers, body] of cases) {
    await t.test(name, async (t) => {
      const r = await raw(api.port, method, target, headers, body);
      checkProblem(t, r, 401, /[Bb]earer|administrator/, target);
      t.match(r.headers["www-authenticate"], /^Bearer( |$)/, "WWW-Authenticate starts with Bearer");
    });
  }
});

t.test("404: unknown post, article, fact, path; random fact on an empty store", async (t) => {
  const api = await startApi(t);
  const cases: [string, string, string, Record<string, string>, string | undefined, RegExp][] = [
    ["unknown post", "GET", "/api/v1/post/nope", {}, undefined, /post.*"nope"/],
    ["patch an unknown post", "PATCH", "/api/v1/post/nope", JSON_CT, '{"title":"x"}', /post.*"nope"/],
    ["delete an unknown post", "DELETE", "/api/v1/post/nope", {}, undefined, /post.*"nope"/],
    ["unknown article", "GET", "/api/v1/artigo/999", {}, undefined, /article.*"999"/],
    ["update an unknown article as admin", "UPDATE", "/api/v1/artigo/999", { ...JSON_CT, ...bearer(ADMIN_TOKEN) }, '{"title":"x"}', /article.*"999"/],
    ["unknown fact", "GET", "/api/v2/facts/9999", {}, undefined, /fact.*"9999"/],
    ["fact id that is not a number", "GET", "/api/v2/facts/abc", {}, undefined, /fact.*"abc"/],
    ["fact id 0", "GET", "/api/v2/facts/0", {}, undefined, /fact.*"0"/],
    ["unknown path", "GET", "/api/v1/nothing-here", {}, undefined, /\/api\/v1\/nothing-here/],
    ["unknown path outside the API", "GET", "/index.html", {}, undefined, /\/index\.html/],
    ["unknown version", "GET", "/api/v3/status", {}, undefined, /v3.*v1.*v2|v3.*v2.*v1/],
  ];
  for (const [name, method, target, headers, body, detail] of cases) {
    await t.test(name, async (t) => {
      const r = await raw(api.port, method, target, headers, body);
      checkProblem(t, r, 404, detail, target);
    });
  }
  await t.test("random fact on an unseeded store", async (t) => {
    const empty = await startApi(t, { seed: false });
    const r = await raw(empty.port, "GET", "/api/v2/facts/random");
    checkProblem(t, r, 404, /no facts/i, "/api/v2/facts/random");
    t.equal(r.headers["cache-control"], undefined, "an error is not cached for an hour");
    // Once a fact exists, the same request succeeds.
    const created = await raw(empty.port, "POST", "/api/v2/facts", { "Content-Type": "text/plain" }, "The first fact.");
    t.equal(created.status, 201);
    const again = await raw(empty.port, "GET", "/api/v2/facts/random");
    t.equal(again.status, 200);
    t.equal(jsonOf(again).text, "The first fact.");
  });
});

t.test("405: a known path with a method it does not serve, with Allow", async (t) => {
  const api = await startApi(t);
  const cases: [string, string, string[]][] = [
    ["PUT", "/api/v1/artigo/1", ["GET", "UPDATE"]],
    ["DELETE", "/api/v1/artigo/1", ["GET", "UPDATE"]],
    ["PATCH", "/api/v1/artigo/1", ["GET", "UPDATE"]],
    ["UPDATE", "/api/v1/post/x", ["GET", "POST", "PATCH", "DELETE"]],
    ["PUT", "/api/v1/post/x", ["GET", "POST", "PATCH", "DELETE"]],
    ["POST", "/api/v1/posts", ["GET"]],
    ["POST", "/api/v2/status", ["GET"]],
    ["DELETE", "/api/v2/facts/random", ["GET"]],
    ["PUT", "/api/v2/facts", ["GET", "POST"]],
  ];
  for (const [method, target, allowed] of cases) {
    await t.test(`${method} ${target}`, async (t) => {
      const r = await raw(api.port, method, target);
      checkProblem(t, r, 405, new RegExp(`${method}.*Allowed methods`), target);
      const allow = (r.headers.allow ?? "").split(",").map((m) => m.trim());
      for (const m of allowed) t.ok(allow.includes(m), `Allow names ${m}: ${r.headers.allow}`);
      t.notOk(allow.includes(method), `Allow does not name ${method}`);
    });
  }
  await t.test("the Allow field of the article is exactly its methods", async (t) => {
    const r = await raw(api.port, "PUT", "/api/v1/artigo/1");
    t.equal(r.headers.allow, "GET, HEAD, OPTIONS, UPDATE");
  });
});

t.test("406: nothing acceptable", async (t) => {
  const api = await startApi(t);
  const cases: [string, string, Record<string, string>, RegExp][] = [
    ["list asked for HTML via Accept", "/api/v1/posts", { Accept: "text/html" }, /text\/html.*application\/json, application\/yaml/],
    ["list asked for HTML via Content-Type", "/api/v1/posts", { "Content-Type": "text/html" }, /text\/html.*Content-Type/],
    ["article asked for YAML", "/api/v1/artigo/1", { Accept: "application/yaml" }, /application\/yaml.*application\/json/],
    ["random fact asked for YAML via Content-Type", "/api/v2/facts/random", { "Content-Type": "application/yaml" }, /application\/yaml/],
    ["list with every type refused", "/api/v1/posts", { Accept: "application/json;q=0, application/yaml;q=0" }, /Accept/],
  ];
  for (const [name, target, headers, detail] of cases) {
    await t.test(name, async (t) => {
      const r = await raw(api.port, "GET", target, headers);
      checkProblem(t, r, 406, detail, target);
      t.equal(r.headers.vary, "Accept, Content-Type");
    });
  }
});

t.test("409: publishing under an id that exists", async (t) => {
  const api = await startApi(t);
  const first = await raw(api.port, "POST", "/api/v1/post/dup", JSON_CT, valid({ title: "First" }));
  t.equal(first.status, 201);
  const second = await raw(api.port, "POST", "/api/v1/post/dup", JSON_CT, valid({ title: "Second" }));
  checkProblem(t, second, 409, /"dup" already exists/, "/api/v1/post/dup");
  t.equal((await api.store.posts.get("dup"))?.title, "First", "the first post is untouched");
});

t.test("412: If-Match that does not match", async (t) => {
  const api = await startApi(t);
  await raw(api.port, "POST", "/api/v1/post/p", JSON_CT, valid());
  const r = await raw(api.port, "PATCH", "/api/v1/post/p", { ...JSON_CT, "If-Match": '"stale"' }, '{"title":"x"}');
  checkProblem(t, r, 412, /If-Match.*"stale".*ETag/, "/api/v1/post/p");
  const a = await raw(api.port, "UPDATE", "/api/v1/artigo/1", { ...JSON_CT, ...bearer(ADMIN_TOKEN), "If-Match": '"stale"' }, '{"title":"x"}');
  checkProblem(t, a, 412, /If-Match.*"stale".*ETag/, "/api/v1/artigo/1");
});

t.test("413: a body over the limit is refused from its Content-Length", async (t) => {
  const api = await startApi(t, { server: { limits: { maxBodyBytes: 1000 } } });
  for (const [target, type] of [
    ["/api/v1/post/big", "application/json"],
    ["/api/v2/facts", "text/plain"],
  ] as const) {
    await t.test(target, async (t) => {
      const r = await raw(api.port, "POST", target, { "Content-Type": type }, "x".repeat(1001));
      checkProblem(t, r, 413, /1001.*1000|limit/, target);
      t.equal(r.headers.connection, "close");
    });
  }
  await t.test("exactly at the limit is accepted", async (t) => {
    const body = JSON.stringify({ title: "T", body: "" });
    const padded = body.slice(0, -1) + " ".repeat(1000 - body.length) + "}";
    t.equal(Buffer.byteLength(padded), 1000);
    const r = await raw(api.port, "POST", "/api/v1/post/at-limit", JSON_CT, padded);
    t.equal(r.status, 201);
  });
  t.equal(await api.store.posts.get("big"), undefined);
});

t.test("415: a body type the endpoint does not take", async (t) => {
  const api = await startApi(t);
  await raw(api.port, "POST", "/api/v1/post/exists", JSON_CT, valid());
  const cases: [string, string, string, Record<string, string>, string, RegExp][] = [
    ["post as text/plain", "POST", "/api/v1/post/p", { "Content-Type": "text/plain" }, valid(), /text\/plain.*application\/json/],
    ["post as form data", "POST", "/api/v1/post/p", { "Content-Type": "application/x-www-form-urlencoded" }, "title=x&body=y", /application\/json/],
    ["post without Content-Type", "POST", "/api/v1/post/p", {}, valid(), /no Content-Type/],
    ["post as merge-patch (publish takes application/json)", "POST", "/api/v1/post/p", { "Content-Type": "application/merge-patch+json" }, valid(), /application\/json/],
    ["post in latin-1", "POST", "/api/v1/post/p", { "Content-Type": "application/json; charset=iso-8859-1" }, valid(), /charset=iso-8859-1.*UTF-8/],
    ["patch as text/plain", "PATCH", "/api/v1/post/exists", { "Content-Type": "text/plain" }, '{"title":"x"}', /merge-patch\+json/],
    ["patch as YAML", "PATCH", "/api/v1/post/exists", { "Content-Type": "application/yaml" }, "title: x", /merge-patch\+json/],
    ["article update as text/plain", "UPDATE", "/api/v1/artigo/1", { "Content-Type": "text/plain", ...bearer(ADMIN_TOKEN) }, '{"title":"x"}', /merge-patch\+json/],
    ["fact as JSON", "POST", "/api/v2/facts", JSON_CT, '"A fact."', /application\/json.*text\/plain/],
    ["fact without Content-Type", "POST", "/api/v2/facts", {}, "A fact.", /no Content-Type.*text\/plain/],
    ["fact in latin-1", "POST", "/api/v2/facts", { "Content-Type": "text/plain; charset=ISO-8859-1" }, "A fact.", /charset=iso-8859-1.*UTF-8/],
    ["fact in UTF-16", "POST", "/api/v2/facts", { "Content-Type": "text/plain; charset=utf-16" }, "A fact.", /charset=utf-16/],
  ];
  for (const [name, method, target, headers, body, detail] of cases) {
    await t.test(name, async (t) => {
      const r = await raw(api.port, method, target, headers, body);
      checkProblem(t, r, 415, detail, target);
    });
  }
  t.equal(await api.store.posts.get("p"), undefined, "nothing was published");
  t.equal((await api.store.facts.list()).length, SEED_FACTS.length, "no fact was added");
  t.equal((await api.store.posts.get("exists"))?.title, "A title", "nothing was patched");

  await t.test("charset=UTF-8 in any case, and utf8, are accepted", async (t) => {
    for (const [i, charset] of ["UTF-8", "utf-8", '"utf-8"', "utf8"].entries()) {
      const r = await raw(api.port, "POST", `/api/v1/post/cs${i}`, { "Content-Type": `application/json; charset=${charset}` }, valid());
      t.equal(r.status, 201, charset);
    }
  });
});

t.test("422: valid JSON that breaks the post rules", async (t) => {
  const api = await startApi(t);
  await raw(api.port, "POST", "/api/v1/post/exists", JSON_CT, valid({ author: "Ana", tags: ["a"] }));
  const long = (n: number) => "x".repeat(n);
  const cases: [string, string, string, unknown, RegExp][] = [
    ["unknown field", "POST", "/api/v1/post/p", { title: "T", body: "B", color: "red" }, /"color" is not a field/],
    ["missing title", "POST", "/api/v1/post/p", { body: "B" }, /"title" is required/],
    ["missing body", "POST", "/api/v1/post/p", { title: "T" }, /"body" is required/],
    ["empty title", "POST", "/api/v1/post/p", { title: "", body: "B" }, /"title" must have at least 1 character/],
    ["title over 200 characters", "POST", "/api/v1/post/p", { title: long(201), body: "B" }, /"title" must have at most 200 characters/],
    ["title not a string", "POST", "/api/v1/post/p", { title: 42, body: "B" }, /"title" must be a string/],
    ["body over 100000 characters", "POST", "/api/v1/post/p", { title: "T", body: long(100_001) }, /"body" must have at most 100000 characters/],
    ["tags not strings", "POST", "/api/v1/post/p", { title: "T", body: "B", tags: ["ok", 7] }, /"tags\/1" must be a string/],
    ["tags not an array", "POST", "/api/v1/post/p", { title: "T", body: "B", tags: "a,b" }, /"tags" must be a array/],
    ["author not a string", "POST", "/api/v1/post/p", { title: "T", body: "B", author: { name: "Ana" } }, /"author" must be a string/],
    ["server-set publishedAt", "POST", "/api/v1/post/p", { title: "T", body: "B", publishedAt: "2020-01-01T00:00:00Z" }, /"publishedAt" is set by the server/],
    ["server-set updatedAt", "POST", "/api/v1/post/p", { title: "T", body: "B", updatedAt: "2020-01-01T00:00:00Z" }, /"updatedAt" is set by the server/],
    ["server-set id", "POST", "/api/v1/post/p", { id: "other", title: "T", body: "B" }, /"id" is set by the server/],
    ["a JSON array", "POST", "/api/v1/post/p", [{ title: "T", body: "B" }], /the body must be a JSON object/],
    ["a JSON string", "POST", "/api/v1/post/p", "T", /the body must be a JSON object/],
    ["JSON null", "POST", "/api/v1/post/p", null, /the body must be a JSON object/],
    ["patch: title over 200 characters", "PATCH", "/api/v1/post/exists", { title: long(201) }, /"title" must have at most 200 characters/],
    ["patch: unknown field", "PATCH", "/api/v1/post/exists", { colour: "red" }, /"colour" is not a field/],
    ["patch: server-set publishedAt", "PATCH", "/api/v1/post/exists", { publishedAt: "2020-01-01T00:00:00Z" }, /"publishedAt" is set by the server/],
    ["patch: removing a required field", "PATCH", "/api/v1/post/exists", { title: null }, /"title" is required/],
    ["patch: tags not strings", "PATCH", "/api/v1/post/exists", { tags: [true] }, /"tags\/0" must be a string/],
    ["patch: an array", "PATCH", "/api/v1/post/exists", [], /must be a JSON object/],
    // U+0000: PostgreSQL's text cannot hold it, so no store takes it.
    ["NUL in the body", "POST", "/api/v1/post/p", { title: "T", body: "before\u0000after" }, /"body" must not contain the NUL character \(U\+0000\)/],
    ["NUL in a tag", "POST", "/api/v1/post/p", { title: "T", body: "B", tags: ["ok", "\u0000"] }, /"tags\/1" must not contain the NUL character/],
    ["patch: NUL in the title", "PATCH", "/api/v1/post/exists", { title: "a\u0000" }, /"title" must not contain the NUL character/],
  ];
  for (const [name, method, target, value, detail] of cases) {
    await t.test(name, async (t) => {
      const r = await raw(api.port, method, target, JSON_CT, JSON.stringify(value));
      const problem = checkProblem(t, r, 422, detail, target);
      if (problem?.errors !== undefined) t.ok(Array.isArray(problem.errors), "errors lists every violation");
    });
  }
  await t.test("the limits themselves are allowed", async (t) => {
    const r = await raw(api.port, "POST", "/api/v1/post/limits", JSON_CT, JSON.stringify({ title: long(200), body: long(100_000) }));
    t.equal(r.status, 201);
    const u = await raw(api.port, "POST", "/api/v1/post/limits-u", JSON_CT, JSON.stringify({ title: "é".repeat(200), body: "B" }));
    t.equal(u.status, 201, "200 two-byte characters are 200 characters");
  });
  t.same(
    (await api.store.posts.list()).map((p) => p.id),
    ["exists", "limits", "limits-u"],
    "no invalid post was published",
  );
  const stored = (await api.store.posts.get("exists"))!;
  t.same({ title: stored.title, author: stored.author, tags: stored.tags }, { title: "A title", author: "Ana", tags: ["a"] }, "no invalid patch was applied");
});

t.test("422: a post id in the path that breaks the id rule", async (t) => {
  const api = await startApi(t);
  for (const id of ["a.b", "a%20b", "caf%C3%A9", "x".repeat(65), "semi%3Bcolon", "%2E%2E"]) {
    await t.test(id.length > 20 ? `${id.length} characters` : id, async (t) => {
      const target = `/api/v1/post/${id}`;
      const r = await raw(api.port, "POST", target, JSON_CT, valid());
      checkProblem(t, r, 422, /post id .* is invalid: use 1 to 64 characters of A-Z, a-z, 0-9, _ and -/, target);
    });
  }
  const ok = await raw(api.port, "POST", `/api/v1/post/${"x".repeat(64)}`, JSON_CT, valid());
  t.equal(ok.status, 201, "64 characters is allowed");
  t.equal((await api.store.posts.list()).length, 1, "only the valid id was published");
});

t.test("422: a fact that breaks the fact rules", async (t) => {
  const api = await startApi(t);
  const cases: [string, string, RegExp][] = [
    ["empty", "", /empty/],
    ["whitespace only", "  \t \r\n ", /empty/],
    ["over 500 characters", "x".repeat(501), /501 characters; the limit is 500/],
    ["over 500 characters after trimming spaces", ` ${"é".repeat(501)} `, /501 characters; the limit is 500/],
    ["with a newline", "First line.\nSecond line.", /control characters/],
    ["with a tab", "A\tfact.", /control characters/],
    ["with a NUL", "A\u0000fact.", /control characters/],
    ["with DEL", "A\u007ffact.", /control characters/],
  ];
  for (const [name, text, detail] of cases) {
    await t.test(name, async (t) => {
      const r = await raw(api.port, "POST", "/api/v2/facts", { "Content-Type": "text/plain" }, text);
      checkProblem(t, r, 422, detail, "/api/v2/facts");
    });
  }
  await t.test("exactly 500 characters, counted as characters and not UTF-16 units, is allowed", async (t) => {
    const ascii = await raw(api.port, "POST", "/api/v2/facts", { "Content-Type": "text/plain" }, "x".repeat(500));
    t.equal(ascii.status, 201);
    const astral = await raw(api.port, "POST", "/api/v2/facts", { "Content-Type": "text/plain" }, "😀".repeat(500));
    t.equal(astral.status, 201, "500 emoji are 500 characters");
  });
  t.equal((await api.store.facts.list()).length, SEED_FACTS.length + 2, "only the valid facts were added");
});

t.test("422: an article patch that breaks the article rules", async (t) => {
  const api = await startApi(t);
  const before = await api.store.articles.get("1");
  const admin = { ...JSON_CT, ...bearer(ADMIN_TOKEN) };
  const cases: [string, unknown, RegExp][] = [
    ["unknown field", { tags: ["x"] }, /"tags" is not a field/],
    ["removing the author", { author: null }, /"author" is required/],
    ["title over 200 characters", { title: "x".repeat(201) }, /"title" must have at most 200 characters/],
    ["server-set updatedAt", { updatedAt: "2020-01-01T00:00:00Z" }, /"updatedAt" is set by the server/],
    ["not an object", "a string", /must be a JSON object/],
  ];
  for (const [name, value, detail] of cases) {
    await t.test(name, async (t) => {
      const r = await raw(api.port, "UPDATE", "/api/v1/artigo/1", admin, JSON.stringify(value));
      checkProblem(t, r, 422, detail, "/api/v1/artigo/1");
    });
  }
  t.same(await api.store.articles.get("1"), before, "the article is unchanged");
});

t.test("413: a chunked body that grows past the limit", async (t) => {
  const api = await startApi(t, { server: { limits: { maxBodyBytes: 1000 } } });
  const chunk = "x".repeat(600);
  const head = "POST /api/v2/facts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
  const body = `258\r\n${chunk}\r\n258\r\n${chunk}\r\n0\r\n\r\n`;
  const [r] = splitResponses(await talk(api.port, [head + body]));
  checkProblem(t, r!, 413, /limit of 1000 bytes/, "/api/v2/facts");
  t.equal((await api.store.facts.list()).length, SEED_FACTS.length, "no fact was added");
});

t.test("400 from the parser: a space where a field name goes on, with a colon after it or none", async (t) => {
  const api = await startApi(t);
  for (const [line, name] of [["Broken header", "Broken"], ["My Header: v", "My"], ["Host : x", "Host"]] as const) {
    const [answer] = splitResponses(await talk(api.port, [`GET /api/v2/status HTTP/1.1\r\nHost: x\r\n${line}\r\n\r\n`]));
    t.equal(answer!.status, 400, line);
    const problem = JSON.parse(answer!.body) as { title: string; detail: string };
    t.equal(problem.title, "Whitespace in a field name, or before its colon", `${line}: the title`);
    t.match(problem.detail, `A space follows "${name}", where only more of the field name or its colon may come`, `${line}: what was found`);
    t.match(problem.detail, "A field name is a token, so it holds no space or tab, and its colon follows it directly.", `${line}: the rule`);
    t.notMatch(problem.detail, /Remove the space/, `${line}: no fix that assumes a colon`);
  }
});
