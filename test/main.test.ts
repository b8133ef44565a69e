// The command users run: `node dist/src/main.js` as `npm start` runs it
// (npm test builds dist/ before the tests start).

import t from "tap";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import path from "node:path";

const main = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "dist", "src", "main.js");

function start(env: Record<string, string>, args: string[] = []): { child: ChildProcess; lines: string[]; nextLine: (re: RegExp) => Promise<string> } {
  const child = spawn(process.execPath, [main, ...args], { env: { ...process.env, PORT: "0", DATA_DIR: ":memory:", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  const waiters: { re: RegExp; resolve: (l: string) => void }[] = [];
  let buffered = "";
  const onText = (d: Buffer) => {
    buffered += d.toString();
    let nl: number;
    while ((nl = buffered.indexOf("\n")) !== -1) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      lines.push(line);
      for (const w of [...waiters]) if (w.re.test(line)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  };
  child.stdout!.on("data", onText);
  child.stderr!.on("data", onText);
  const nextLine = (re: RegExp) =>
    new Promise<string>((resolve) => {
      const seen = lines.find((l) => re.test(l));
      if (seen !== undefined) resolve(seen);
      else waiters.push({ re, resolve });
    });
  return { child, lines, nextLine };
}

t.test("npm start: prints the address, serves the status endpoints, logs, exits 0 on SIGTERM", async (t) => {
  const { child, lines, nextLine } = start({});
  const listening = await nextLine(/^listening on /);
  const m = /^listening on (http:\/\/127\.0\.0\.1:(\d+))$/.exec(listening);
  t.ok(m, `the address line: ${listening}`);
  const base = m![1]!;
  const v1 = await fetch(`${base}/api/v1/status`);
  t.same(await v1.json(), { resposta: "O servidor está no ar." });
  t.equal(v1.headers.get("deprecation"), "@1767225600");
  t.equal(v1.headers.get("link"), '</api/v2/status>; rel="successor-version"');
  const v11 = await fetch(`${base}/api/v1-1/status`);
  t.same(await v11.json(), { resposta: "O servidor está no ar.", versao: "v1-1" });
  const v2 = await fetch(`${base}/api/v2/status`);
  t.same(await v2.json(), { response: "The server is up." });
  t.equal(v2.headers.get("content-type"), "application/json");
  await nextLine(/^GET \/api\/v2\/status 200 \d+B [\d.]+ms$/);
  child.kill("SIGTERM");
  const [code] = await once(child, "exit");
  t.equal(code, 0);
  t.ok(lines.some((l) => l === "requests per API version: v1=1 v1-1=1 v2=1"), lines.join("\n"));
});

t.test("--quiet: no access log", async (t) => {
  const { child, lines, nextLine } = start({}, ["--quiet"]);
  const base = /(http:\/\/\S+)/.exec(await nextLine(/^listening on /))![1];
  await (await fetch(`${base}/api/v2/status`)).text();
  child.kill("SIGINT");
  const [code] = await once(child, "exit");
  t.equal(code, 0);
  t.notOk(lines.some((l) => l.startsWith("GET ")), "no access-log line");
});

t.test("a bad setting stops the start with one clear line", async (t) => {
  const { child, lines } = start({ PORT: "eighty" });
  const [code] = await once(child, "exit");
  t.equal(code, 1);
  t.same(lines, ['startline: PORT must be a whole number, got "eighty"']);
});
