// `npm run token -- add --role admin|user`: create a bearer token, store its
// hash in the server's database (DATABASE_URL, or DATA_DIR's SQLite file),
// print the token once.

import { generateToken, hashToken } from "./api/auth.js";
import { ConfigError, loadConfig } from "./config.js";
import { StoreOpenError, StoreUnavailableError } from "./store/errors.js";
import { openStore } from "./store/open.js";
import { isRole } from "./store/types.js";

const USAGE = "usage: npm run token -- add --role admin|user";

async function main(argv: readonly string[]): Promise<number> {
  const [command, flag, role] = argv;
  if (command !== "add" || flag !== "--role" || role === undefined || !isRole(role) || argv.length !== 3) {
    console.error(USAGE);
    return 2;
  }
  const config = loadConfig(process.env, []);
  if (config.dataDir === ":memory:" && config.databaseUrl === undefined) {
    console.error("startline: DATA_DIR=:memory: keeps nothing, so a token made here would vanish; set DATA_DIR to the server's data directory (or DATABASE_URL to its database)");
    return 2;
  }
  const store = await openStore(config);
  try {
    const token = generateToken();
    await store.tokens.add(hashToken(token), role);
    console.log(`created a ${role} token; it is shown only now, so keep it:`);
    console.log(token);
    return 0;
  } finally {
    await store.close();
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  if (error instanceof ConfigError || error instanceof StoreOpenError || error instanceof StoreUnavailableError) console.error(`startline: ${error.message}`);
  else console.error("startline: could not create a token:", error);
  process.exitCode = 1;
}
