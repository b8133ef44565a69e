// DATABASE_URL and DATABASE_POOL_SIZE: checked at start like every setting.

import t from "tap";
import { ConfigError } from "../../src/config-error.js";
import { loadConfig } from "../../src/config.js";

t.test("DATABASE_URL: unset by default; a postgres:// or postgresql:// URL when set", async (t) => {
  t.equal(loadConfig({}, []).databaseUrl, undefined);
  t.equal(loadConfig({ DATABASE_URL: "" }, []).databaseUrl, undefined);
  for (const url of ["postgres://u:p@127.0.0.1:5432/db", "postgresql://u@db.internal/startline?options=-c%20search_path%3Dapp"]) {
    t.equal(loadConfig({ DATABASE_URL: url }, []).databaseUrl, url);
  }
});

t.test("a DATABASE_URL of another kind is refused without echoing it (it may hold a password)", async (t) => {
  for (const url of ["mysql://root:pw@db/x", "sqlite:///tmp/x", "db.internal:5432", "not a url at all"]) {
    const error = (() => {
      try {
        loadConfig({ DATABASE_URL: url }, []);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    t.type(error, ConfigError, url);
    t.notOk((error as Error).message.includes(url), "the value is not in the message");
  }
});

t.test("DATABASE_POOL_SIZE: 10 by default, a whole number from 1", async (t) => {
  t.equal(loadConfig({}, []).databasePoolSize, 10);
  t.equal(loadConfig({ DATABASE_POOL_SIZE: "25" }, []).databasePoolSize, 25);
  t.throws(() => loadConfig({ DATABASE_POOL_SIZE: "0" }, []), /DATABASE_POOL_SIZE must be between 1 and/);
  t.throws(() => loadConfig({ DATABASE_POOL_SIZE: "ten" }, []), /DATABASE_POOL_SIZE must be a whole number/);
});

t.test("WORKERS with DATA_DIR=:memory: is fine when DATABASE_URL holds the data", async (t) => {
  t.equal(loadConfig({ WORKERS: "2", DATA_DIR: ":memory:", DATABASE_URL: "postgres://u@h/d" }, []).workers, 2);
  t.throws(() => loadConfig({ WORKERS: "2", DATA_DIR: ":memory:" }, []), /WORKERS needs a DATA_DIR on disk \(or a DATABASE_URL\)/);
});
