// Settings: defaults, and a bad value named in the error.

import t from "tap";
import { ConfigError, loadConfig } from "../src/config.js";

t.test("defaults", async (t) => {
  const c = loadConfig({}, []);
  t.equal(c.host, "127.0.0.1");
  t.equal(c.port, 8080);
  t.equal(c.dataDir, "./data");
  t.equal(c.headersTimeoutMs, 10_000);
  t.equal(c.keepAliveTimeoutMs, 5_000);
  t.equal(c.sendTimeoutMs, 20_000);
  t.equal(c.requestTimeoutMs, 30_000);
  t.equal(c.limits.maxBodyBytes, 1024 * 1024);
  t.equal(c.workers, 1);
  t.equal(c.tls, undefined);
});

t.test("timeouts and limits are configurable", async (t) => {
  const c = loadConfig({ SEND_TIMEOUT_MS: "1500", HEADERS_TIMEOUT_MS: "250", MAX_BODY_BYTES: "10", REQUEST_TIMEOUT_MS: "4000" }, ["--quiet"]);
  t.equal(c.sendTimeoutMs, 1500);
  t.equal(c.requestTimeoutMs, 4000);
  t.equal(c.headersTimeoutMs, 250);
  t.equal(c.limits.maxBodyBytes, 10);
  t.equal(c.quiet, true);
});

t.test("a bad value is refused with its name", async (t) => {
  t.throws(() => loadConfig({ SEND_TIMEOUT_MS: "soon" }, []), new ConfigError('SEND_TIMEOUT_MS must be a whole number, got "soon"'));
  t.throws(() => loadConfig({ PORT: "70000" }, []), new ConfigError("PORT must be between 0 and 65535, got 70000"));
  t.throws(() => loadConfig({}, ["--bogus"]), { name: "ConfigError", message: /^Unknown option --bogus/ });
  t.throws(() => loadConfig({ TLS_CERT: "c.pem" }, []), { name: "ConfigError", message: /needs both TLS_CERT and TLS_KEY/ });
});
