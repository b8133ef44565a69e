// The shape of src as its imports draw it. An import cycle means two files
// that cannot be read (or changed) one without the other; a type taken from
// the connection means every user of that type sits under the heaviest file
// of the engine; an engine file that imports the API means the layers leak.
// Type-only imports count: they are the edges a reader follows.

import t from "tap";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { ROOT } from "./helpers/root.js";



/** Every .ts file under `dir`, relative to the repository root, with "/" separators. */
function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return sources(relative);
    return entry.name.endsWith(".ts") ? [relative] : [];
  });
}

interface Edge {
  readonly to: string;
  /** `import type` / `export type`, or every name imported is marked `type`. */
  readonly typeOnly: boolean;
  /** `import("...")`: loaded when that line runs, not with the file. */
  readonly dynamic: boolean;
}

/** The repository files a source imports (statically, dynamically, or by re-export). */
function imports(file: string): Edge[] {
  const source = readFileSync(path.join(ROOT, file), "utf8");
  const edges: Edge[] = [];
  const pattern = /(?:^|\n)\s*(import|export)\s+(type\s+)?([^;]*?)\s*from\s*["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']\s*\)/g;
  for (const m of source.matchAll(pattern)) {
    const specifier = m[4] ?? m[5]!;
    if (!specifier.startsWith(".")) continue;
    const to = path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier)).replace(/\.js$/, ".ts");
    const names = m[3] ?? "";
    const braced = /^\{([^}]*)\}$/.exec(names.trim());
    const allTypes = braced !== null && braced[1]!.split(",").filter((n) => n.trim() !== "").every((n) => /^\s*type\s/.test(n));
    edges.push({ to, typeOnly: m[2] !== undefined || allTypes, dynamic: m[5] !== undefined });
  }
  return edges;
}

const files = sources("src");
const graph = new Map(files.map((file) => [file, imports(file)]));

t.test("every relative import in src names a file that exists", async (t) => {
  const known = new Set(files);
  const missing = [...graph].flatMap(([file, edges]) => edges.filter((e) => !known.has(e.to)).map((e) => `${file} -> ${e.to}`));
  t.same(missing, []);
});

/** The strongly connected components of more than one file (Tarjan), each a cycle or a knot of them. */
function cycles(): string[][] {
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    order.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const { to } of graph.get(v) ?? []) {
      if (!graph.has(to)) continue;
      if (!order.has(to)) {
        visit(to);
        low.set(v, Math.min(low.get(v)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(v, Math.min(low.get(v)!, order.get(to)!));
    }
    if (low.get(v) === order.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      const selfImport = graph.get(v)!.some((e) => e.to === v);
      if (component.length > 1 || selfImport) found.push(component.sort());
    }
  };
  for (const file of files) if (!order.has(file)) visit(file);
  return found;
}

t.test("src has no import cycle, type-only imports included", async (t) => {
  t.same(cycles(), []);
});

t.test("the connection is imported only to make connections, never for a type", async (t) => {
  const connection = files.find((f) => /^src\/http\/(connection\/)?connection\.ts$/.test(f));
  t.ok(connection, "the connection's module is where this test looks for it");
  const importers = [...graph].filter(([, edges]) => edges.some((e) => e.to === connection)).map(([file]) => file);
  // The server makes one per socket, inject() one per call: nobody else needs the class.
  t.same(importers.map((f) => path.posix.basename(f)).sort(), ["inject.ts", "server.ts"]);
  for (const file of importers) {
    const edges = graph.get(file)!.filter((e) => e.to === connection);
    t.notOk(
      edges.some((e) => e.typeOnly),
      `${file} imports the class itself, not a type`,
    );
  }
  const source = readFileSync(path.join(ROOT, connection!), "utf8");
  t.notMatch(source, /^export\s+(type\s+)?\{[^}]*\}\s+from/m, "the connection re-exports nothing: types are imported from where they are defined");
});

t.test("the engine (src/http) imports nothing from the layers above it", async (t) => {
  const leaks = [...graph]
    .filter(([file]) => file.startsWith("src/http/"))
    .flatMap(([file, edges]) => edges.filter((e) => !e.to.startsWith("src/http/")).map((e) => `${file} -> ${e.to}`));
  t.same(leaks, []);
});

t.test("node's interface on the engine (src/node) builds on the engine alone, and the server does not use it", async (t) => {
  const beyond = [...graph]
    .filter(([file]) => file.startsWith("src/node/"))
    .flatMap(([file, edges]) => edges.filter((e) => !e.to.startsWith("src/http/") && !e.to.startsWith("src/node/")).map((e) => `${file} -> ${e.to}`));
  t.same(beyond, [], "no router, API, store or settings");
  const users = [...graph].filter(([file, edges]) => !file.startsWith("src/node/") && edges.some((e) => e.to.startsWith("src/node/"))).map(([file]) => file);
  t.same(users, [], "the server and its API do not use it");
});

/** The files loading `file` loads: its static imports and theirs (type-only ones load nothing; `import()` loads later). */
function loads(file: string): Set<string> {
  const seen = new Set<string>();
  const queue = [file];
  for (let f = queue.pop(); f !== undefined; f = queue.pop()) {
    if (seen.has(f)) continue;
    seen.add(f);
    for (const e of graph.get(f) ?? []) if (!e.typeOnly && !e.dynamic) queue.push(e.to);
  }
  return seen;
}

t.test("the settings (src/config.ts) load neither the server, the API, a store nor a validator", async (t) => {
  // Every process reads them first: a WORKERS primary, `npm run token`, a start that a bad setting stops.
  // Loading the engine's server for a default (and the YAML writer with the kept reads, once) cost each of
  // those 40 ms of CPU. The kept reads' settings and their budget (kept-reads.ts, kept.ts) load nothing more.
  const heavy = [...loads("src/config.ts")].filter((f) => /^src\/(http\/connection\/(server|connection)\.ts|api\/(?!kept-reads\.ts|kept\.ts)|representation\/|store\/(?!types\.ts|pg-pool-size\.ts)|validation\/)/.test(f));
  t.same(heavy, []);
});

t.test("a process loads a store's driver only when its settings choose that store", async (t) => {
  // src/store/open.ts imports each store when it opens it: SQLite and better-sqlite3 cost a start 40 ms of
  // CPU, node-postgres 100 ms, and a server in memory (DATA_DIR=:memory:, every test's unless it names one)
  // uses neither.
  for (const entry of ["src/serve.ts", "src/cluster.ts", "src/token.ts"]) {
    const drivers = [...loads(entry)].filter((f) => /^src\/store\/(sqlite|postgres)\.ts$/.test(f));
    t.same(drivers, [], `${entry} loads no store's driver before one is chosen`);
  }
});

t.test("a WORKERS primary loads neither the connection nor the parser: it serves no request", async (t) => {
  // It accepts connections and hands them to its workers, or refuses them past its cap (refuse.ts);
  // loading the engine's server for that cost it 40 ms of CPU at each start.
  const engine = [...loads("src/cluster.ts")].filter((f) => /^src\/http\/(connection\/(connection|server)|parse\/parser)\.ts$/.test(f));
  t.same(engine, []);
});
