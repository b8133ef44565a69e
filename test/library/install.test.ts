// startline as an installed dependency, made the way a user makes it: in a
// fresh copy of the repository (with dist/ as the last build left it, so the
// build has nothing to redo), `npm pack --workspace startline` builds and
// fills packages/startline (its prepack step) and packs
// what that manifest's "files" names; the tarball is then installed into
// empty projects with `npm install --offline` and an empty npm cache, so
// nothing can come from a registry. The package is the engine alone: it
// brings no other package, so nothing is fetched or compiled (no store
// driver, no install script), and it is used there by name through
// "exports": from an ES module project (the shipped example serves PURGE and
// GET over a real socket; a TypeScript consumer type-checks against the
// shipped declarations, node:http's interface from "startline/node" among
// them) and from a CommonJS one as `npm init -y` makes it
// (`require("startline")`, `require("startline/node")` serving UPDATE, and the
// README's snippet pasted as it stands). The tarball is packed again only
// when something it is made from changed (PACK_INPUTS, by digest); otherwise
// the last run's is installed.

import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFile, mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import t from "tap";
import { checkout, ROOT } from "../helpers/checkout.js";
import { listeningScript } from "../helpers/process.js";
import { splitResponses, talk } from "../helpers/wire.js";

const execFileAsync = promisify(execFile);
/**
 * npm with none of the caller's npm settings: `npm run --silent` (as the
 * test runners are started) passes npm_config_loglevel=silent down, which
 * would leave nothing of what `npm install` says to check.
 */
const npmEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith("npm_config_")));
const run = (file: string, args: string[], options: { cwd?: string; maxBuffer?: number } = {}) => execFileAsync(file, args, { ...options, env: npmEnv });

interface Consumer {
  readonly dir: string;
  /** What `npm install` printed. */
  readonly installed: string;
}

/**
 * What a pack is made from: the files git tracks (or would) under these paths, as they are in the working
 * tree. The pack builds the project (src/, its tsconfigs, the manifests) and fills the package from the
 * build, the example and the library's page.
 */
const PACK_INPUTS = ["package.json", "package-lock.json", "tsconfig.json", "tsconfig.build.json", "src", "packages/startline", "examples", "docs/library.md"];

/** A digest of every input's path and bytes: the same digest, the same tarball. */
async function packInputsDigest(): Promise<string> {
  const { stdout } = await run("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", ...PACK_INPUTS], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
  const hash = createHash("sha256");
  for (const file of stdout.split("\0").filter((f) => f !== "").sort()) {
    const bytes = await readFile(path.join(ROOT, file)).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return Buffer.alloc(0); // deleted in the working tree, still in the index
      throw error;
    });
    hash.update(`${file}\0${bytes.length}\0`).update(bytes);
  }
  return hash.digest("hex").slice(0, 32);
}

/** Where the last tarball packed is kept, under the digest of what it was packed from (dist/ is the build's, and git ignores it). */
const PACK_CACHE = path.join(ROOT, "dist", ".pack-cache");

/**
 * The tarball, in a directory removed when the file's tests end: packed in a fresh copy (a pack builds the
 * whole project, and fills packages/startline), or, when nothing it is made from has changed since the
 * last run packed it, that run's tarball (packing cost three seconds of CPU, a third of this file's).
 */
async function pack(): Promise<{ tarball: string; dir: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), "startline-consumer-"));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const digest = await packInputsDigest();
  const kept = path.join(PACK_CACHE, digest);
  const [name] = await readdir(kept).catch(() => []);
  if (name !== undefined) {
    await copyFile(path.join(kept, name), path.join(dir, name));
    return { tarball: path.join(dir, name), dir };
  }
  const fresh = await checkout({ dist: true });
  t.teardown(fresh.remove);
  const packed = await run("npm", ["pack", "--workspace", "startline", "--json", "--pack-destination", dir], { cwd: fresh.dir, maxBuffer: 16 * 1024 * 1024 });
  // npm prints the prepack step's output before the JSON.
  const filename = (JSON.parse(packed.stdout.slice(packed.stdout.indexOf("["))) as { filename: string }[])[0]!.filename;
  const tarball = path.join(dir, filename);
  // Kept for the next run, in place of the last one kept: written aside, then renamed, so a run beside this one finds all of it or none.
  await rm(PACK_CACHE, { recursive: true, force: true });
  const aside = `${kept}.${process.pid}`;
  await mkdir(aside, { recursive: true });
  await copyFile(tarball, path.join(aside, filename));
  await rename(aside, kept).catch(() => rm(aside, { recursive: true, force: true }));
  return { tarball, dir };
}
let packing: Promise<{ tarball: string; dir: string }> | undefined;

/**
 * A fresh project with the tarball installed: `type: "module"`, or the
 * manifest `npm init -y` writes (`type: "commonjs"`).
 */
async function project(type: "module" | "commonjs"): Promise<Consumer> {
  const { tarball, dir } = await (packing ??= pack());
  const project = path.join(dir, `project-${type}`);
  await mkdir(project);
  await writeFile(path.join(project, "package.json"), JSON.stringify({ name: `consumer-${type}`, version: "1.0.0", main: "index.js", type }));
  const install = await run("npm", ["install", "--offline", "--no-audit", "--no-fund", "--cache", path.join(dir, `npm-cache-${type}`), tarball], { cwd: project });
  return { dir: project, installed: install.stdout + install.stderr };
}

// Each project installed once; each test adds its own files.
let esm: Promise<Consumer> | undefined;
let cjs: Promise<Consumer> | undefined;
const consumer = () => (esm ??= project("module"));
const commonjs = () => (cjs ??= project("commonjs"));

t.test("installed into an empty project, offline: one package, nothing compiled, no store driver", async (t) => {
  const { dir, installed } = await consumer();
  t.match(installed, /^added 1 package\b/m, `npm install says it added one package:\n${installed}`);
  t.strictSame((await readdir(path.join(dir, "node_modules"))).sort(), [".package-lock.json", "startline"], "node_modules holds startline and nothing else");
  const manifest = JSON.parse(await readFile(path.join(dir, "node_modules", "startline", "package.json"), "utf8")) as Record<string, unknown>;
  for (const field of ["dependencies", "optionalDependencies", "peerDependencies"]) t.equal(manifest[field], undefined, `the package declares no ${field}`);
  const scripts = (manifest.scripts ?? {}) as Record<string, string>;
  for (const script of ["preinstall", "install", "postinstall", "prepare"]) t.equal(scripts[script], undefined, `no ${script} script runs where it is installed`);
  const files = await readdir(path.join(dir, "node_modules"), { recursive: true });
  t.strictSame(files.filter((f) => /\.node$|(^|\/)binding\.gyp$|(^|\/)build\//.test(f)), [], "no native addon, no build files");
});

t.test("the packed package holds its entry, its types and the example", async (t) => {
  const { dir } = await consumer();
  const installed = path.join(dir, "node_modules", "startline");
  const files = new Set(await readdir(installed, { recursive: true }));
  for (const file of [
    "package.json",
    "dist/index.js",
    "dist/index.d.ts",
    "dist/http/connection/server.js",
    "dist/router/router.d.ts",
    "dist/node/index.js",
    "dist/node/index.d.ts",
    "examples/custom-verb.mjs",
    "examples/express-update.mjs",
    "examples/koa-update.mjs",
    "examples/fastify.mjs",
    "docs/library.md",
  ]) {
    t.ok(files.has(file), `${file} is in the package`);
  }
  t.notOk([...files].some((f) => f.startsWith("test/") || f.startsWith("src/") || f.startsWith("dist/test/") || f.startsWith("dist/api/") || f.startsWith("dist/store/")), "no tests, sources, API or store");
  t.notOk([...files].some((f) => f.endsWith(".ts") && !f.endsWith(".d.ts")), "no TypeScript sources");
});

t.test("examples/custom-verb.mjs, run where startline is installed, serves PURGE and GET", async (t) => {
  const { dir } = await consumer();
  await copyFile(path.join(dir, "node_modules", "startline", "examples", "custom-verb.mjs"), path.join(dir, "custom-verb.mjs"));
  const { url } = await listeningScript(t, "the example", path.join(dir, "custom-verb.mjs"), { PORT: "0", HOST: "127.0.0.1" }, dir);
  t.match(url, /^http:\/\/127\.0\.0\.1:\d+$/, "it prints listening on http://HOST:PORT, with the port picked");
  const port = Number(new URL(url).port);
  t.not(port, 0);

  const req = (line: string, last = false) => `${line} HTTP/1.1\r\nHost: 127.0.0.1\r\n${last ? "Connection: close\r\n" : ""}\r\n`;
  const raw = await talk(port, [
    req("PURGE /cache/x"),
    req("GET /cache/x"),
    req("GET /cache/x"),
    req("PURGE /cache/x"),
    req("purge /cache/x"),
    req("GET /cache/x", true),
  ]);
  const [missing, first, second, purged, lower, again] = splitResponses(raw);
  t.equal(missing!.status, 404, "PURGE of what is not cached");
  t.equal(missing!.body, "x is not cached\n");
  t.equal(first!.status, 200);
  t.equal(first!.headers["x-cache"], "MISS");
  t.equal(first!.headers["content-type"], "text/plain; charset=utf-8");
  t.equal(second!.headers["x-cache"], "HIT");
  t.equal(second!.body, first!.body, "the cached value");
  t.equal(purged!.status, 200);
  t.equal(purged!.body, "purged x\n");
  t.equal(lower!.status, 405, "methods are case-sensitive");
  t.equal(lower!.headers.allow, "GET, HEAD, OPTIONS, PURGE");
  t.equal(again!.headers["x-cache"], "MISS", "computed again after the purge");
});

t.test("a TypeScript consumer type-checks against the shipped declarations", async (t) => {
  const { dir } = await consumer();
  await writeFile(
    path.join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        module: "NodeNext",
        moduleResolution: "NodeNext",
        target: "ES2023",
        // The project's own lib (tsconfig.json): without it, ES2023's default takes in the DOM's declarations
        // too, half a second of CPU to parse and bind, and a declaration that needed them would go unnoticed.
        lib: ["ES2023"],
        strict: true,
        noEmit: true,
        // The consumer's own code is what is checked against the declarations; checking @types/node again only costs time.
        skipLibCheck: true,
        types: ["node"],
        // @types/node is a dev dependency of the consumer; this one borrows the repository's.
        typeRoots: [path.join(ROOT, "node_modules", "@types")],
      },
      files: ["consumer.ts"],
    }),
  );
  await writeFile(
    path.join(dir, "consumer.ts"),
    [
      'import { ANY_METHOD, createRouter, createServer, fail, inject, type Request, type Response, type Route } from "startline";',
      "const routes: Route[] = [",
      '  { method: "PURGE", path: "/cache/:key", summary: "drop", handler: (_request: Request, params): Response => ({ status: 200, body: params.key ?? "" }) },',
      '  { method: ANY_METHOD, path: "/echo/*rest", summary: "any", handler: (request) => fail(418, { detail: request.method }) },',
      "];",
      "const router = createRouter(routes);",
      "createServer(router, { maxConnections: 10 });",
      'const result: Promise<{ output: Buffer }> = inject(router, "GET / HTTP/1.1\\r\\n\\r\\n");',
      'import { createServer as createNodeServer } from "startline/node";',
      "// node:http's listener types: an Express or Koa handler is taken as it is.",
      'createNodeServer((req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => res.end(req.method));',
      "void result;",
      "// @ts-expect-error: a status is a number; if the types did not resolve, this line would not be an error, and tsc would say so",
      'const wrong: Response = { status: "200" };',
      "void wrong;",
      "",
    ].join("\n"),
  );
  const tsc = path.join(ROOT, "node_modules", "typescript", "bin", "tsc");
  const result = await run(process.execPath, [tsc, "-p", dir]).then(
    () => ({ code: 0, out: "" }),
    (error: { code: number; stdout: string }) => ({ code: error.code, out: error.stdout }),
  );
  t.equal(result.code, 0, `tsc found no errors${result.out === "" ? "" : `:\n${result.out}`}`);
});

t.test("required from a CommonJS project as npm init -y makes it: one package, the same modules as import", async (t) => {
  const { dir, installed } = await commonjs();
  t.match(installed, /^added 1 package\b/m, `npm install says it added one package:\n${installed}`);
  await writeFile(
    path.join(dir, "same.js"),
    [
      'const required = require("startline");',
      'import("startline").then((imported) => {',
      "  const names = Object.keys(required).sort();",
      "  const same = names.every((name) => required[name] === imported[name]);",
      "  console.log(JSON.stringify({ names, same }));",
      "});",
      "",
    ].join("\n"),
  );
  const { stdout, stderr } = await run(process.execPath, ["same.js"], { cwd: dir });
  const { names, same } = JSON.parse(stdout) as { names: string[]; same: boolean };
  t.strictSame(names, ["ANY_METHOD", "HttpError", "createRouter", "createServer", "fail", "headerValue", "inject", "problem"], "require gives the entry's names");
  t.ok(same, "each is the very object import gives: one copy of each module, so instanceof HttpError holds both ways");
  t.equal(stderr, "", "no warning on the way");
});

t.test('require("startline/node") from a CommonJS project: node:http\'s interface, serving UPDATE', async (t) => {
  const { dir } = await commonjs();
  await writeFile(
    path.join(dir, "node-server.js"),
    [
      'const { createServer } = require("startline/node");',
      "const server = createServer((req, res) => {",
      '  res.setHeader("Content-Type", "text/plain");',
      "  res.end(`${req.method} ${req.url}`);",
      "});",
      'server.listen(0, "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${server.address().port}`));',
      "",
    ].join("\n"),
  );
  const { url } = await listeningScript(t, "the node-style server", path.join(dir, "node-server.js"), {}, dir);
  const port = Number(new URL(url).port);
  const [update, purge] = splitResponses(
    await talk(port, ["UPDATE /x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "purge /y HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"]),
  );
  t.equal(update!.body, "UPDATE /x", "a method node:http would refuse reaches the listener");
  t.equal(purge!.body, "purge /y");
});

t.test("the README's library snippet, pasted into index.js of a CommonJS project, serves PURGE", async (t) => {
  const { dir } = await commonjs();
  const readme = await readFile(path.join(ROOT, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("\n## The engine as a library\n"));
  const snippet = /```js\n([\s\S]*?)\n```/.exec(section)![1]!;
  t.match(snippet, /\.listen\(8080, "127\.0\.0\.1"\)/, "the snippet listens on 8080");
  // The one change: port 0, so that the test takes a free port and reads it from the line the snippet prints.
  await writeFile(path.join(dir, "index.js"), snippet.replace(".listen(8080,", ".listen(0,"));
  const { url } = await listeningScript(t, "the snippet", path.join(dir, "index.js"), {}, dir);
  const port = Number(new URL(url).port);
  const [purged, other] = splitResponses(
    await talk(port, ["PURGE /cache/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "GET /cache/x HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"]),
  );
  t.equal(purged!.status, 200, "the route the snippet declares");
  t.equal(purged!.body, "purged x\n");
  t.equal(other!.status, 405, "a method it does not declare");
});
