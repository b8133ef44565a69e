// The authorization matrix for every write, with writes open (the default)
// and with writeRequiresToken: article UPDATE always needs an administrator
// (401 otherwise, docs/api.md section 7); post and fact writes need a valid token of any
// role only when writeRequiresToken is set. A refused write changes nothing.

import t from "tap";
import type { RawResponse } from "../helpers/wire.js";
import { ADMIN_TOKEN, checkProblem, jsonOf, raw, startApi, USER_TOKEN, WRONG_TOKEN, type Api } from "./client.js";

interface Credential {
  readonly name: string;
  readonly authorization: string | undefined;
  readonly role: "none" | "invalid" | "user" | "admin";
}

const CREDENTIALS: readonly Credential[] = [
  { name: "no Authorization", authorization: undefined, role: "none" },
  { name: "Basic abc", authorization: "Basic abc", role: "invalid" },
  { name: "Bearer alone", authorization: "Bearer", role: "invalid" },
  { name: "Bearer with an empty token", authorization: "Bearer ", role: "invalid" },
  { name: "a wrong token", authorization: `Bearer ${WRONG_TOKEN}`, role: "invalid" },
  { name: "a token with a character outside token68", authorization: `Bearer ${USER_TOKEN}!`, role: "invalid" },
  { name: "a user token", authorization: `Bearer ${USER_TOKEN}`, role: "user" },
  { name: "an admin token", authorization: `Bearer ${ADMIN_TOKEN}`, role: "admin" },
];

interface Write {
  readonly name: string;
  /** Who may do it: "admin" always needs an admin; "open" needs a token only when writeRequiresToken. */
  readonly needs: "admin" | "open";
  readonly success: number;
  /** Sends the write for case `key` (unique per case, for ids); `authorization` may be absent. */
  send(api: Api, key: string, authorization: string | undefined): Promise<RawResponse>;
  /** True when the write for `key` took effect in the store. */
  happened(api: Api, key: string): Promise<boolean>;
  /** Prepares what the write needs (an existing post), directly in the store. */
  prepare?(api: Api, key: string): Promise<void>;
}

const auth = (authorization: string | undefined): Record<string, string> => (authorization === undefined ? {} : { Authorization: authorization });

const WRITES: readonly Write[] = [
  {
    name: "POST /api/v1/post/:id",
    needs: "open",
    success: 201,
    send: (api, key, a) => raw(api.port, "POST", `/api/v1/post/${key}`, { "Content-Type": "application/json", ...auth(a) }, JSON.stringify({ title: "T", body: "B" })),
    happened: async (api, key) => await api.store.posts.get(key) !== undefined,
  },
  {
    name: "PATCH /api/v1/post/:id",
    needs: "open",
    success: 200,
    prepare: async (api, key) => void await api.store.posts.create({ id: key, title: "Before", body: "B" }),
    send: (api, key, a) => raw(api.port, "PATCH", `/api/v1/post/${key}`, { "Content-Type": "application/merge-patch+json", ...auth(a) }, JSON.stringify({ title: "After" })),
    happened: async (api, key) => (await api.store.posts.get(key))?.title === "After",
  },
  {
    name: "DELETE /api/v1/post/:id",
    needs: "open",
    success: 200,
    prepare: async (api, key) => void await api.store.posts.create({ id: key, title: "T", body: "B" }),
    send: (api, key, a) => raw(api.port, "DELETE", `/api/v1/post/${key}`, auth(a)),
    happened: async (api, key) => await api.store.posts.get(key) === undefined,
  },
  {
    name: "POST /api/v2/facts",
    needs: "open",
    success: 201,
    send: (api, key, a) => raw(api.port, "POST", "/api/v2/facts", { "Content-Type": "text/plain", ...auth(a) }, `Fact ${key}.`),
    happened: async (api, key) => (await api.store.facts.list()).some((f) => f.text === `Fact ${key}.`),
  },
  {
    name: "UPDATE /api/v1/artigo/:id",
    needs: "admin",
    success: 200,
    send: (api, key, a) => raw(api.port, "UPDATE", "/api/v1/artigo/3", { "Content-Type": "application/merge-patch+json", ...auth(a) }, JSON.stringify({ title: `Title ${key}` })),
    happened: async (api, key) => (await api.store.articles.get("3"))?.title === `Title ${key}`,
  },
];

function allowed(write: Write, credential: Credential, writeRequiresToken: boolean): boolean {
  if (write.needs === "admin") return credential.role === "admin";
  if (!writeRequiresToken) return true;
  return credential.role === "user" || credential.role === "admin";
}

/** RFC 6750 §3.1: invalid_token when a bad token was sent, insufficient_scope for too low a role, no error code without credentials. */
function expectedChallenge(credential: Credential): RegExp {
  if (credential.role === "none") return /^Bearer realm="[^"]+"$/;
  if (credential.role === "user") return /^Bearer realm="[^"]+", error="insufficient_scope"$/;
  return /^Bearer realm="[^"]+", error="invalid_token"$/;
}

for (const writeRequiresToken of [false, true]) {
  t.test(`writeRequiresToken: ${writeRequiresToken}`, async (t) => {
    const api = await startApi(t, { writeRequiresToken });
    for (const [w, write] of WRITES.entries()) {
      for (const [i, credential] of CREDENTIALS.entries()) {
        const ok = allowed(write, credential, writeRequiresToken);
        await t.test(`${write.name} with ${credential.name} -> ${ok ? write.success : 401}`, async (t) => {
          const key = `w${w}-c${i}`;
          await write.prepare?.(api, key);
          const r = await write.send(api, key, credential.authorization);
          if (ok) {
            t.equal(r.status, write.success, `status ${write.success}`);
            t.equal(r.headers["content-type"], "application/json");
            t.ok(await write.happened(api, key), "the write took effect");
          } else {
            const problem = checkProblem(t, r, 401, /Bearer|administrator|bearer token/);
            t.match(r.headers["www-authenticate"], /^Bearer/, "WWW-Authenticate starts with Bearer");
            t.match(r.headers["www-authenticate"], expectedChallenge(credential), `challenge: ${r.headers["www-authenticate"]}`);
            t.notOk(await write.happened(api, key), "nothing changed");
            if (credential.role === "user") t.match(problem?.detail, /administrator/, "the detail says an administrator is needed");
          }
        });
      }
    }
  });
}

t.test("the scheme name is case-insensitive (RFC 9110 §11.1)", async (t) => {
  const api = await startApi(t);
  const r = await raw(
    api.port,
    "UPDATE",
    "/api/v1/artigo/1",
    { Authorization: `bearer ${ADMIN_TOKEN}`, "Content-Type": "application/json" },
    '{"title":"Lower-case scheme"}',
  );
  t.equal(r.status, 200);
  t.equal(jsonOf(r).title, "Lower-case scheme");
});

t.test("the token itself is case-sensitive", async (t) => {
  const api = await startApi(t);
  const r = await raw(api.port, "UPDATE", "/api/v1/artigo/1", { Authorization: `Bearer ${ADMIN_TOKEN.toUpperCase()}`, "Content-Type": "application/json" }, '{"title":"x"}');
  t.equal(r.status, 401);
});

t.test("reads never need a token, even with writeRequiresToken", async (t) => {
  const api = await startApi(t, { writeRequiresToken: true });
  await api.store.posts.create({ id: "p", title: "T", body: "B" });
  for (const target of ["/api/v1/posts", "/api/v1/post", "/api/v1/post/p", "/api/v1/artigo/1", "/api/v2/facts/random", "/api/v2/facts/1", "/api/v1/status", "/api/v2/status"]) {
    const r = await raw(api.port, "GET", target);
    t.equal(r.status, 200, target);
  }
});

t.test("a 401 says nothing about whether the article exists", async (t) => {
  const api = await startApi(t);
  const existing = await raw(api.port, "UPDATE", "/api/v1/artigo/1", { Authorization: `Bearer ${USER_TOKEN}`, "Content-Type": "application/json" }, '{"title":"x"}');
  const missing = await raw(api.port, "UPDATE", "/api/v1/artigo/404", { Authorization: `Bearer ${USER_TOKEN}`, "Content-Type": "application/json" }, '{"title":"x"}');
  t.equal(existing.status, 401);
  t.equal(missing.status, 401);
  t.equal(jsonOf(existing).detail, jsonOf(missing).detail);
});
