// HTTPS: the same connection code over node:tls, with a throwaway self-signed
// certificate made by openssl at test time (no key is ever committed).

import t from "tap";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import https from "node:https";
import { promisify } from "node:util";
import { loadConfig } from "../../src/config.js";
import { readTls } from "../../src/serve.js";
import { startServer } from "../helpers/process.js";

const run = promisify(execFile);
const dir = mkdtempSync(path.join(tmpdir(), "startline-tls-"));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const cert = path.join(dir, "cert.pem");
const key = path.join(dir, "key.pem");
await run("openssl", [
  "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
  "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1",
  "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
]);
const ADMIN = "tls-test-admin-token-0001";

t.test("HTTPS: curl and Node's https client, custom verbs included, with HSTS", async (t) => {
  const server = startServer({ TLS_CERT: cert, TLS_KEY: key, ADMIN_TOKEN: ADMIN, QUIET: "1" });
  t.teardown(() => server.child.kill("SIGTERM"));
  const base = await server.url();
  t.match(base, /^https:\/\/127\.0\.0\.1:\d+$/, "the listening line says https://");

  const { stdout } = await run("curl", [
    "-si", "--cacert", cert, "-X", "UPDATE", "-H", `Authorization: Bearer ${ADMIN}`,
    "-H", "Content-Type: application/json", "--data", '{"title":"Over TLS"}', `${base}/api/v1/artigo/2`,
  ]);
  t.match(stdout, /^HTTP\/1\.1 200 OK\r\n/);
  t.match(stdout, /\r\nStrict-Transport-Security: max-age=31536000\r\n/);
  t.match(stdout, /"title":"Over TLS"/);

  const body = await new Promise<string>((resolve, reject) => {
    const req = https.request(`${base}/api/v2/status`, { ca: readFileSync(cert), method: "GET" }, (res) => {
      let text = "";
      res.on("data", (d: Buffer) => (text += d.toString()));
      res.on("end", () => resolve(`${res.statusCode} ${res.headers["strict-transport-security"]} ${text}`));
    });
    req.on("error", reject);
    req.end();
  });
  t.equal(body, '200 max-age=31536000 {"response":"The server is up."}');

  const denied = await run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", cert, "-X", "UPDATE", `${base}/api/v1/artigo/2`]);
  t.equal(denied.stdout, "401");
});

t.test("HSTS_MAX_AGE=0 sends no Strict-Transport-Security", async (t) => {
  const server = startServer({ TLS_CERT: cert, TLS_KEY: key, HSTS_MAX_AGE: "0", QUIET: "1" });
  t.teardown(() => server.child.kill("SIGTERM"));
  const { stdout } = await run("curl", ["-si", "--cacert", cert, `${await server.url()}/api/v2/status`]);
  t.notMatch(stdout, /Strict-Transport-Security/i);
});

t.test("a missing or bad certificate stops the start with one clear line", async (t) => {
  const missing = startServer({ TLS_CERT: path.join(dir, "nope.pem"), TLS_KEY: key });
  t.equal(await missing.exited(), 1);
  t.match(missing.lines.join("\n"), /^startline: cannot read the TLS certificate .*nope\.pem: ENOENT$/);

  // A certificate that cannot be parsed: the same ConfigError, printed the same way, from readTls, which
  // serve() calls first; asked here in process (a start that fails there has loaded the whole server, 0.3 s
  // of CPU), as the missing file above shows the line and the exit status through the binary.
  const garbage = path.join(dir, "garbage.pem");
  writeFileSync(garbage, "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n");
  t.throws(() => readTls(loadConfig({ TLS_CERT: garbage, TLS_KEY: key }, [])), {
    name: "ConfigError",
    message: /^TLS_CERT and TLS_KEY must hold a PEM certificate and its private key[^\n]*$/,
  });

  const half = startServer({ TLS_CERT: cert });
  t.equal(await half.exited(), 1);
  t.match(half.lines[0], /needs both TLS_CERT and TLS_KEY/);
});
