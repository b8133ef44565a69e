// Content negotiation on the list endpoint (docs/api.md, section 5):
// JSON by default, YAML on request. An Accept that names a specific type
// wins; an absent Accept or */* falls back to the Content-Type of the
// bodiless GET; otherwise JSON. 406 when the only stated choice cannot be
// produced. Every negotiated response says Vary: Accept, Content-Type.

import t from "tap";
import { load } from "js-yaml";
import { ADMIN_TOKEN, checkProblem, jsonOf, raw, startApi } from "./client.js";

type Outcome = "json" | "yaml" | 406;

interface AcceptCase {
  readonly accept: string | undefined;
  /** What Accept decides by itself; "defer" when it leaves the choice to Content-Type. */
  readonly decides: Outcome | "defer";
}

const ACCEPTS: readonly AcceptCase[] = [
  { accept: undefined, decides: "defer" },
  { accept: "*/*", decides: "defer" },
  { accept: "application/json", decides: "json" },
  { accept: "application/yaml", decides: "yaml" },
  { accept: "text/yaml", decides: "yaml" },
  { accept: "application/yaml;q=0.5, application/json", decides: "json" },
  { accept: "application/json;q=0, application/yaml", decides: "yaml" },
  { accept: "text/html", decides: 406 },
  { accept: "text/html, */*;q=0.1", decides: "json" },
];

const CONTENT_TYPES: readonly { readonly contentType: string | undefined; readonly wish: Outcome | undefined }[] = [
  { contentType: undefined, wish: undefined },
  { contentType: "application/json", wish: "json" },
  { contentType: "application/yaml", wish: "yaml" },
  { contentType: "text/html", wish: 406 },
];

function expected(a: AcceptCase, wish: Outcome | undefined): Outcome {
  if (a.decides !== "defer") return a.decides;
  return wish ?? "json";
}

t.test("the negotiation matrix for GET /api/v1/posts (Accept x Content-Type)", async (t) => {
  const api = await startApi(t);
  for (const id of ["first", "second"]) {
    const r = await raw(api.port, "POST", `/api/v1/post/${id}`, { "Content-Type": "application/json" }, JSON.stringify({ title: `T ${id}`, body: "B: yes", tags: ["1", "no"] }));
    t.equal(r.status, 201);
  }
  const reference = jsonOf(await raw(api.port, "GET", "/api/v1/posts"));
  t.same(reference.posts.map((p: { id: string }) => p.id), ["first", "second"]);

  for (const a of ACCEPTS) {
    for (const c of CONTENT_TYPES) {
      const want = expected(a, c.wish);
      const name = `Accept ${a.accept ?? "(absent)"} / Content-Type ${c.contentType ?? "(absent)"} -> ${want}`;
      await t.test(name, async (t) => {
        const headers: Record<string, string> = {};
        if (a.accept !== undefined) headers.Accept = a.accept;
        if (c.contentType !== undefined) headers["Content-Type"] = c.contentType;
        const r = await raw(api.port, "GET", "/api/v1/posts", headers);
        // A 200 may be coded, so it names Accept-Encoding too (cacheFields, src/http/message/conditional.ts).
        t.equal(r.headers.vary, want === 406 ? "Accept, Content-Type" : "Accept, Content-Type, Accept-Encoding", "Vary names both fields");
        if (want === 406) {
          checkProblem(t, r, 406, /application\/json, application\/yaml/, "/api/v1/posts");
          return;
        }
        t.equal(r.status, 200);
        if (want === "json") {
          t.equal(r.headers["content-type"], "application/json");
          t.same(JSON.parse(r.body), reference);
        } else {
          t.equal(r.headers["content-type"], "application/yaml");
          t.throws(() => JSON.parse(r.body), "not JSON");
          t.same(load(r.body), reference, "the same posts as YAML");
        }
      });
    }
  }
});

t.test("the other list endpoint, GET /api/v1/post, negotiates the same way", async (t) => {
  const api = await startApi(t);
  const yaml = await raw(api.port, "GET", "/api/v1/post", { "Content-Type": "application/yaml" });
  t.equal(yaml.status, 200);
  t.equal(yaml.headers["content-type"], "application/yaml");
  t.same(load(yaml.body), { posts: [] });
  const json = await raw(api.port, "GET", "/api/v1/post", { Accept: "application/json", "Content-Type": "application/yaml" });
  t.equal(json.headers["content-type"], "application/json", "Accept wins over Content-Type");
  t.equal(json.headers.vary, "Accept, Content-Type, Accept-Encoding");
});

t.test("more Accept forms", async (t) => {
  const api = await startApi(t);
  const cases: [string, Outcome][] = [
    ["application/*", "json"],
    ["application/*;q=0.9, text/yaml", "yaml"],
    ["APPLICATION/YAML", "yaml"],
    ["application/x-yaml", "yaml"],
    ["application/json;q=0.1, application/yaml;q=0.2", "yaml"],
    ["application/yaml, application/json", "yaml"],
    ["application/json, application/yaml", "json"],
    ["*/*;q=0.5, application/yaml", "yaml"],
    ["image/png, text/html;q=0.9", 406],
    ["application/yaml;q=0", 406],
  ];
  for (const [accept, want] of cases) {
    await t.test(`Accept: ${accept}`, async (t) => {
      const r = await raw(api.port, "GET", "/api/v1/posts", { Accept: accept });
      t.equal(r.headers.vary, want === 406 ? "Accept, Content-Type" : "Accept, Content-Type, Accept-Encoding");
      if (want === 406) checkProblem(t, r, 406, /available as/, "/api/v1/posts");
      else {
        t.equal(r.status, 200);
        t.equal(r.headers["content-type"], want === "json" ? "application/json" : "application/yaml");
      }
    });
  }
});

t.test("a Content-Type with parameters still states the wish", async (t) => {
  const api = await startApi(t);
  const r = await raw(api.port, "GET", "/api/v1/posts", { "Content-Type": "application/yaml; charset=utf-8" });
  t.equal(r.status, 200);
  t.equal(r.headers["content-type"], "application/yaml");
});

t.test("single resources are JSON only: YAML gives 406", async (t) => {
  const api = await startApi(t);
  await raw(api.port, "POST", "/api/v1/post/one", { "Content-Type": "application/json" }, '{"title":"T","body":"B"}');
  const targets = ["/api/v1/post/one", "/api/v1/artigo/1", "/api/v2/facts/1", "/api/v2/facts/random"];
  for (const target of targets) {
    await t.test(target, async (t) => {
      for (const headers of [{ Accept: "application/yaml" } as Record<string, string>, { "Content-Type": "application/yaml" }, { Accept: "text/yaml" }]) {
        const r = await raw(api.port, "GET", target, headers);
        checkProblem(t, r, 406, /application\/json/, target);
        t.equal(r.headers.vary, "Accept, Content-Type");
      }
      const ok = await raw(api.port, "GET", target, { Accept: "application/json" });
      t.equal(ok.status, 200, "JSON is served");
      t.equal(ok.headers["content-type"], "application/json");
      // A body over 1 KiB (the article) also depends on Accept-Encoding (see test/http/compress.test.ts).
      t.match(ok.headers.vary, /^Accept, Content-Type(?:, Accept-Encoding)?$/, "Vary on the 200 too");
      const any = await raw(api.port, "GET", target, { Accept: "application/yaml, */*;q=0.1" });
      t.equal(any.status, 200, "YAML preferred but anything accepted: JSON");
    });
  }
});

t.test("on a request with a body, Content-Type describes the body, not the wished format", async (t) => {
  const api = await startApi(t);
  await raw(api.port, "POST", "/api/v1/post/p", { "Content-Type": "application/json" }, '{"title":"T","body":"B"}');
  const r = await raw(api.port, "PATCH", "/api/v1/post/p", { "Content-Type": "application/merge-patch+json" }, '{"title":"U"}');
  t.equal(r.status, 200, "merge-patch+json is not taken as a wish for that format");
  t.equal(r.headers["content-type"], "application/json");
});

// A write whose response the client says it cannot accept: the status must
// match the outcome (docs/api.md, section 10). Either the server refuses before changing
// anything (406, nothing changed) or it makes the change and answers in JSON
// (RFC 9110 §12.5.1 lets it disregard Accept); a 406 after the change was
// made tells the client that a write failed when it happened.
for (const [name, method, target, headers] of [
  ["PATCH /api/v1/post/:id", "PATCH", "/api/v1/post/p", { "Content-Type": "application/merge-patch+json" }],
  ["UPDATE /api/v1/artigo/:id", "UPDATE", "/api/v1/artigo/1", { "Content-Type": "application/merge-patch+json", Authorization: `Bearer ${ADMIN_TOKEN}` }],
] as const) {
  t.test(`${name} with Accept: application/yaml: a 406 means nothing changed`, async (t) => {
    const api = await startApi(t);
    await api.store.posts.create({ id: "p", title: "Before", body: "B" });
    const before = (await raw(api.port, "GET", target)).body;
    const r = await raw(api.port, method, target, { ...headers, Accept: "application/yaml" }, JSON.stringify({ title: "After" }));
    const after = (await raw(api.port, "GET", target)).body;
    const changed = after !== before;
    t.ok(r.status === 406 || r.status === 200, `406 or 200, got ${r.status}`);
    if (r.status === 406) t.notOk(changed, "answered 406, so the write must not have happened");
    else t.ok(changed, "answered 200, so the write happened");
  });
}
