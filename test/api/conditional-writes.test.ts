// Every precondition on every write to an existing resource (RFC 9110 §13.1.1,
// §13.1.2, §13.2): If-Match with the current tag, `*`, a stale tag and the
// current tag made weak; If-None-Match with the current tag, `*` and another
// tag. A write goes ahead exactly when the conditions hold; a 412 changes
// nothing, which the resource read back after it shows. On a resource that
// does not exist yet, If-Match can never hold (there is no current
// representation), so a publish that would create one is a 412.

import t, { type Test } from "tap";
import { ADMIN_TOKEN, jsonOf, raw, startApi, type Api } from "./client.js";

interface Write {
  readonly name: string;
  readonly method: string;
  readonly target: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  /** The status of the write when it goes ahead. */
  readonly ok: number;
}

const PATCH = { "Content-Type": "application/merge-patch+json" };
const WRITES: readonly Write[] = [
  { name: "PATCH a post", method: "PATCH", target: "/api/v1/post/w", headers: PATCH, body: '{"title":"Changed"}', ok: 200 },
  { name: "DELETE a post", method: "DELETE", target: "/api/v1/post/w", headers: {}, ok: 200 },
  { name: "UPDATE an article", method: "UPDATE", target: "/api/v1/artigo/1", headers: { ...PATCH, Authorization: `Bearer ${ADMIN_TOKEN}` }, body: '{"title":"Changed"}', ok: 200 },
];

/** Each precondition, from the current tag, and whether it lets the write through. */
const CONDITIONS: readonly { readonly field: string; readonly value: (etag: string) => string; readonly holds: boolean }[] = [
  { field: "If-Match", value: (etag) => etag, holds: true },
  { field: "If-Match", value: () => "*", holds: true },
  { field: "If-Match", value: (etag) => `"stale", ${etag}`, holds: true },
  { field: "If-Match", value: () => '"stale"', holds: false },
  { field: "If-Match", value: (etag) => `W/${etag}`, holds: false },
  { field: "If-None-Match", value: (etag) => etag, holds: false },
  { field: "If-None-Match", value: (etag) => `W/${etag}`, holds: false },
  { field: "If-None-Match", value: () => "*", holds: false },
  { field: "If-None-Match", value: () => '"other"', holds: true },
];

async function fresh(t: Test): Promise<Api> {
  const api = await startApi(t);
  await api.store.posts.create({ id: "w", title: "Original", body: "B" });
  return api;
}

for (const write of WRITES) {
  for (const condition of CONDITIONS) {
    t.test(`${write.name} with ${condition.field}: ${condition.value('"<current>"')} ${condition.holds ? "goes ahead" : "is a 412 and changes nothing"}`, async (t) => {
      const api = await fresh(t);
      const before = await raw(api.port, "GET", write.target);
      t.equal(before.status, 200);
      const value = condition.value(before.headers.etag!);
      const r = await raw(api.port, write.method, write.target, { ...write.headers, [condition.field]: value }, write.body);
      const after = await raw(api.port, "GET", write.target);
      if (condition.holds) {
        t.equal(r.status, write.ok, `${write.method} went ahead`);
        t.not(after.body, before.body, "the resource changed");
      } else {
        t.equal(r.status, 412, `${condition.field}: ${value}`);
        t.equal(jsonOf(r).type, "/problems/precondition-failed");
        t.match(jsonOf(r).detail, new RegExp(condition.field), "the detail names the field that failed");
        t.equal(after.status, before.status, "nothing changed");
        t.equal(after.body, before.body, "nothing changed");
        t.equal(after.headers.etag, before.headers.etag, "the tag is the one before");
      }
    });
  }
}

t.test("publishing a post that does not exist yet: If-Match never holds (412, nothing made), If-None-Match always does", async (t) => {
  const api = await startApi(t);
  const body = JSON.stringify({ title: "T", body: "B" });
  const json = { "Content-Type": "application/json" };
  for (const value of ["*", '"any"']) {
    const r = await raw(api.port, "POST", "/api/v1/post/new", { ...json, "If-Match": value }, body);
    t.equal(r.status, 412, `If-Match: ${value} on a post that does not exist`);
    t.match(jsonOf(r).detail, /If-Match/);
    t.equal((await raw(api.port, "GET", "/api/v1/post/new")).status, 404, "nothing was published");
  }
  t.equal((await raw(api.port, "POST", "/api/v1/post/new", { ...json, "If-None-Match": "*" }, body)).status, 201, "If-None-Match: * makes a publish create-only, which it is");
  // An existing post: the answer without preconditions would be a 409, so they are not evaluated (§13.2.1).
  for (const h of [{ "If-Match": "*" }, { "If-None-Match": "*" }, {}] as Record<string, string>[]) {
    t.equal((await raw(api.port, "POST", "/api/v1/post/new", { ...json, ...h }, body)).status, 409, `exists, with ${JSON.stringify(h)}: 409`);
  }
});

t.test("adding a fact: the preconditions are the collection's, whose ETag is weak", async (t) => {
  const api = await startApi(t);
  const add = (h: Record<string, string>) => raw(api.port, "POST", "/api/v2/facts", { "Content-Type": "text/plain", ...h }, "RFC 9110 §13 defines preconditions.");
  const count = async () => jsonOf(await raw(api.port, "GET", "/api/v2/facts")).facts.length as number;
  const list = await raw(api.port, "GET", "/api/v2/facts");
  const etag = list.headers.etag!;
  t.match(etag, /^W\//, "the collection's tag is weak");
  const n = await count();
  for (const [h, why] of [
    [{ "If-Match": etag }, "a weak tag never matches strongly"],
    [{ "If-Match": etag.slice(2) }, "the tag made strong is still not the collection's"],
    [{ "If-None-Match": "*" }, "the collection exists"],
    [{ "If-None-Match": etag }, "the collection is as it was"],
  ] as [Record<string, string>, string][]) {
    const r = await add(h);
    t.equal(r.status, 412, `${JSON.stringify(h)}: ${why}`);
    t.match(jsonOf(r).detail, new RegExp(Object.keys(h)[0]!));
    t.equal(await count(), n, "no fact was added");
  }
  t.equal((await add({ "If-Match": "*" })).status, 201, "If-Match: * holds: the collection exists");
  t.equal((await add({ "If-None-Match": etag })).status, 201, "the tag from before that addition no longer matches");
  t.equal(await count(), n + 2);
});
