// Settings: defaults, and a bad value named in the error.

import t from "tap";
import { ConfigError } from "../src/config-error.js";
import { loadConfig, SETTING_NAMES, withoutSettings } from "../src/config.js";

t.test("defaults", async (t) => {
  const c = loadConfig({}, []);
  t.equal(c.host, "127.0.0.1");
  t.equal(c.port, 8080);
  t.equal(c.dataDir, "./data");
  t.equal(c.server.headersTimeoutMs, 10_000);
  t.equal(c.server.keepAliveTimeoutMs, 5_000);
  t.equal(c.server.sendTimeoutMs, 20_000);
  t.equal(c.server.requestTimeoutMs, 30_000);
  t.equal(c.server.limits.maxBodyBytes, 1024 * 1024);
  t.equal(c.workers, 1);
  t.equal(c.tls, undefined);
  t.equal(c.logFormat, "common");
});

t.test("LOG_FORMAT: common or json; anything else stops the start, naming the setting", async (t) => {
  t.equal(loadConfig({ LOG_FORMAT: "json" }, []).logFormat, "json");
  t.equal(loadConfig({ LOG_FORMAT: "common" }, []).logFormat, "common");
  t.equal(loadConfig({ LOG_FORMAT: "" }, []).logFormat, "common", "empty is unset");
  t.throws(() => loadConfig({ LOG_FORMAT: "JSON" }, []), new ConfigError('LOG_FORMAT must be one of common, json, got "JSON"'));
  t.throws(() => loadConfig({ LOG_FORMAT: "combined" }, []), new ConfigError('LOG_FORMAT must be one of common, json, got "combined"'));
});

t.test("timeouts and limits are configurable", async (t) => {
  const c = loadConfig({ SEND_TIMEOUT_MS: "1500", HEADERS_TIMEOUT_MS: "250", MAX_BODY_BYTES: "10", REQUEST_TIMEOUT_MS: "4000" }, ["--quiet"]);
  t.equal(c.server.sendTimeoutMs, 1500);
  t.equal(c.server.requestTimeoutMs, 4000);
  t.equal(c.server.headersTimeoutMs, 250);
  t.equal(c.server.limits.maxBodyBytes, 10);
  t.equal(c.quiet, true);
});

t.test("a bad value is refused with its name", async (t) => {
  t.throws(() => loadConfig({ SEND_TIMEOUT_MS: "soon" }, []), new ConfigError('SEND_TIMEOUT_MS must be a whole number, got "soon"'));
  t.throws(() => loadConfig({ PORT: "70000" }, []), new ConfigError("PORT must be between 0 and 65535, got 70000"));
  t.throws(() => loadConfig({}, ["--bogus"]), { name: "ConfigError", message: /^Unknown option --bogus/ });
  t.throws(() => loadConfig({ TLS_CERT: "c.pem" }, []), { name: "ConfigError", message: /needs both TLS_CERT and TLS_KEY/ });
});

t.test("SETTING_NAMES lists every variable loadConfig reads, whatever the values", async (t) => {
  // Record every name read, once with nothing set and once with every setting set
  // (some reads only happen when another setting has a value).
  const readWith = (values: Record<string, string>) => {
    const read = new Set<string>();
    const env = new Proxy(values, {
      get(target, name) {
        if (typeof name === "string") read.add(name);
        return target[name as string];
      },
    });
    try {
      loadConfig(env, []);
    } catch {
      // a combination of values loadConfig refuses still shows what it read
    }
    return read;
  };
  const everything = Object.fromEntries(SETTING_NAMES.map((name) => [name, "1"]));
  const read = new Set([...readWith({}), ...readWith(everything)]);
  t.same([...read].filter((name) => !(SETTING_NAMES as readonly string[]).includes(name)), [], "no name outside SETTING_NAMES");
  t.ok(read.size > 20, `${read.size} names read`);
});

t.test("withoutSettings: the caller's environment minus every setting and libpq's PG* variables", async (t) => {
  const shell: Record<string, string> = { PATH: "/usr/bin", HOME: "/root", PG_BIN: "/opt/pg", PGSSLMODE: "require", NODE_PG_FORCE_NATIVE: "1" };
  for (const name of SETTING_NAMES) shell[name] = "from-the-shell";
  t.same(withoutSettings(shell), { PATH: "/usr/bin", HOME: "/root" });
});

t.test("TRACE and TRACE_BODY_BYTES: off by default, --trace or TRACE=1 turns it on", async (t) => {
  const d = loadConfig({}, []);
  t.equal(d.trace, false);
  t.equal(d.traceBodyBytes, 256);
  t.equal(loadConfig({ TRACE: "1" }, []).trace, true);
  t.equal(loadConfig({ TRACE: "0" }, []).trace, false);
  t.equal(loadConfig({}, ["--trace"]).trace, true);
  t.equal(loadConfig({ TRACE_BODY_BYTES: "0" }, []).traceBodyBytes, 0, "0: bodies are only counted");
  t.throws(() => loadConfig({ TRACE_BODY_BYTES: "lots" }, []), new ConfigError('TRACE_BODY_BYTES must be a whole number, got "lots"'));
  t.throws(() => loadConfig({ TRACE_BODY_BYTES: "2000000" }, []), new ConfigError("TRACE_BODY_BYTES must be between 0 and 1048576, got 2000000"));
});
