// `npm run token -- add --role admin|user`: create a bearer token, store its
// hash in DATA_DIR's database, print the token once.

import { generateToken, hashToken } from "./api/auth.js";
import { ConfigError, loadConfig } from "./config.js";
import { openStore } from "./store/open.js";
import { StoreOpenError } from "./store/sqlite.js";
import { isRole } from "./store/types.js";

const USAGE = "usage: npm run token -- add --role admin|user";

function main(argv: readonly string[]): number {
  const [command, flag, role] = argv;
  if (command !== "add" || flag !== "--role" || role === undefined || !isRole(role) || argv.length !== 3) {
    console.error(USAGE);
    return 2;
  }
  const config = loadConfig(process.env, []);
  if (config.dataDir === ":memory:") {
    console.error("startline: DATA_DIR=:memory: keeps nothing, so a token made here would vanish; set DATA_DIR to the server's data directory");
    return 2;
  }
  const store = openStore(config.dataDir, config.durability);
  try {
    const token = generateToken();
    store.tokens.add(hashToken(token), role);
    console.log(`created a ${role} token; it is shown only now, so keep it:`);
    console.log(token);
    return 0;
  } finally {
    store.close();
  }
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (error) {
  if (error instanceof ConfigError || error instanceof StoreOpenError) console.error(`startline: ${error.message}`);
  else console.error("startline: could not create a token:", error);
  process.exitCode = 1;
}
