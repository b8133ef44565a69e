// The README as a newcomer uses it: a front page (under 250 lines), and a
// curl tour whose every line runs as pasted, in order, against a server
// started as `npm start` starts it. A line whose comment begins with a status
// code must get that status: the If-None-Match line among them, which needs
// the ETag that the line before it captured.

import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import t from "tap";
import { ROOT } from "./helpers/checkout.js";
import { serverEnv, startServer } from "./helpers/process.js";

const run = promisify(execFile);
const README = path.join(ROOT, "README.md");

t.test("the README is a front page", async (t) => {
  const lines = (await readFile(README, "utf8")).split("\n").length;
  t.ok(lines < 250, `${lines} lines`);
});

/** The commands of the fenced block under `heading` (a line ending in \\ or | goes on to the next), with the status each one's comment promises. */
function commands(readme: string, heading: string): { text: string; status: number | undefined }[] {
  const section = readme.slice(readme.indexOf(`\n## ${heading}\n`));
  const block = /```sh\n([\s\S]*?)\n```/.exec(section)![1]!;
  const joined = block.split(/(?<![\\|])\n/);
  return joined.map((text) => ({ text, status: /#\s+(\d{3})\b/.exec(text.replace(/'[^']*'|"[^"]*"/g, ""))?.[1] as unknown as number | undefined }));
}

t.test("every line of the curl tour runs as pasted and gets the status its comment names", async (t) => {
  const token = "readme-admin-token-0123456789";
  const server = startServer({ ADMIN_TOKEN: token, QUIET: "1" });
  t.teardown(async () => {
    server.child.kill("SIGTERM");
    await server.exited();
  });
  const base = await server.url();
  const tour = commands(await readFile(README, "utf8"), "A tour with curl");
  t.match(tour[0]!.text, /^B=http:\/\/127\.0\.0\.1:8080$/, "the tour starts by naming the server");
  // Each command after a marker, so that its output can be told apart; B points at this test's server.
  const script = ["set -eu", "exec </dev/null", `B=${base}`, ...tour.slice(1).flatMap((c, i) => [`printf '\\n@@ ${i + 1}\\n'`, c.text])].join("\n");
  const { stdout } = await run("bash", ["-c", script], { env: serverEnv({ ADMIN_TOKEN: token }), maxBuffer: 16 * 1024 * 1024 });
  const outputs = stdout.split(/\n@@ \d+\n/).slice(1);
  t.equal(outputs.length, tour.length - 1, "every line ran");
  const promised = tour.map((c, i) => ({ ...c, i })).filter((c) => c.status !== undefined);
  t.ok(promised.some((c) => /If-None-Match/.test(c.text) && String(c.status) === "304"), "the If-None-Match line promises a 304");
  for (const c of promised) {
    const got = /^HTTP\/1\.1 (\d{3})/m.exec(outputs[c.i - 1] ?? "")?.[1];
    t.equal(got, String(c.status), c.text.slice(0, 80));
  }
});
