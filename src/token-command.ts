// What `npm run token -- <command>` does (src/token.ts runs it): manage the
// bearer tokens in the server's database (DATABASE_URL, or DATA_DIR's SQLite
// file), while it runs or not.
//
//   add --role admin|user    create a token, store its hash, print it once
//   list                     id, role, origin, created, last used; never a secret
//   revoke <token-or-id>     remove a token; every server refuses it from then on
//
// Servers look tokens up in the database on every request (nothing is
// cached), so a revoked token gets 401 at once, in every worker and instance.
//
// A function of its command line, settings and output, returning the exit
// status, so that tests can run it many times without a process each (a
// process costs about 0.3 s of CPU to load Node, the settings and the store),
// while one test per command still runs the real one.

import { generateToken, hashToken } from "./policies/auth.js";
import { ConfigError } from "./config-error.js";
import { loadConfig } from "./config.js";
import { StoreOpenError, StoreUnavailableError } from "./store/errors.js";
import { openStore } from "./store/open.js";
import { parseSequentialId } from "./store/records.js";
import { isRole, ROLES, type Role, type Store, type TokenRecord } from "./store/types.js";

const USAGE = [
  "usage: npm run token -- add --role admin|user",
  "       npm run token -- list",
  "       npm run token -- revoke <token-or-id>",
].join("\n");

/** Where a command's lines go: the console, for the real command. */
export type TokenOutput = Pick<Console, "log" | "error">;

type Command = (store: Store, out: TokenOutput) => Promise<number>;

/**
 * The command line as a command to run; otherwise what is wrong with it, when
 * more can be said than the usage (an empty string when it cannot).
 */
function parse(argv: readonly string[]): Command | string {
  const [command, ...rest] = argv;
  if (command === "add" && rest.length === 2 && rest[0] === "--role") {
    const role = rest[1]!;
    return isRole(role) ? add(role) : `startline: ${JSON.stringify(role)} is not a role; a token's role is ${ROLES.join(" or ")}`;
  }
  if (command === "list" && rest.length === 0) return list;
  if (command === "revoke" && rest.length === 1 && rest[0] !== "") return revoke(rest[0]!);
  return "";
}

/** "an admin", "a user": the article goes by sound, and a table says it plainly. */
const A_ROLE: Record<Role, string> = { admin: "an admin", user: "a user" };

const add =
  (role: Role): Command =>
  async (store, out) => {
    const token = generateToken();
    await store.tokens.add(hashToken(token), role, "command");
    out.log(`created ${A_ROLE[role]} token; it is shown only now, so keep it:`);
    out.log(token);
    return 0;
  };

const ORIGINS: Record<TokenRecord["origin"], string> = {
  setting: "ADMIN_TOKEN",
  command: "token add",
  "first-start": "first start",
  unknown: "unknown",
};

/** Rows as aligned columns; the secret is never among them (the store has only its hash, and the hash is not shown either). */
async function list(store: Store, out: TokenOutput): Promise<number> {
  const tokens = await store.tokens.list();
  if (tokens.length === 0) {
    out.log("no tokens");
    return 0;
  }
  const rows = [
    ["id", "role", "origin", "created", "last used"],
    ...tokens.map((t) => [t.id, t.role, ORIGINS[t.origin], t.createdAt, t.lastUsedAt ?? "never"]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  for (const row of rows) out.log(row.map((cell, column) => cell.padEnd(widths[column]!)).join("  ").trimEnd());
  return 0;
}

/**
 * An id as `list` prints it ("3"), or else the token itself. Ids are at most
 * 15 digits and ADMIN_TOKEN at least 16 characters, so the two never meet.
 */
const revoke =
  (given: string): Command =>
  async (store, out) => {
    const byId = parseSequentialId(given) !== undefined;
    const revoked = await store.tokens.revoke(byId ? { id: given } : { hash: hashToken(given) });
    if (revoked === undefined) {
      out.error(
        byId
          ? `startline: there is no token with id ${given} (npm run token -- list shows the ids)`
          : "startline: that token is not stored (revoked already, or never created here); npm run token -- list shows the ids",
      );
      return 1;
    }
    out.log(`revoked token ${revoked.id} (${revoked.role}, created ${revoked.createdAt}); it is refused from now on`);
    if (revoked.origin === "setting") {
      out.log("it came from ADMIN_TOKEN: a server started with that value grants it again, so change or remove ADMIN_TOKEN too");
    }
    return 0;
  };

/** Runs the command `argv` names against the database `env`'s settings name; resolves with its exit status. */
export async function tokenCommand(argv: readonly string[], env: NodeJS.ProcessEnv, out: TokenOutput): Promise<number> {
  try {
    return await run(argv, env, out);
  } catch (error) {
    if (error instanceof ConfigError || error instanceof StoreOpenError || error instanceof StoreUnavailableError) out.error(`startline: ${error.message}`);
    else out.error("startline: the token command failed:", error);
    return 1;
  }
}

async function run(argv: readonly string[], env: NodeJS.ProcessEnv, out: TokenOutput): Promise<number> {
  const command = parse(argv);
  if (typeof command === "string") {
    if (command !== "") out.error(command);
    out.error(USAGE);
    return 2;
  }
  const config = loadConfig(env, []);
  if (config.dataDir === ":memory:" && config.databaseUrl === undefined) {
    out.error("startline: DATA_DIR=:memory: keeps nothing, so there are no tokens to manage here; set DATA_DIR to the server's data directory (or DATABASE_URL to its database)");
    return 2;
  }
  const store = await openStore(config);
  try {
    return await command(store, out);
  } finally {
    await store.close();
  }
}
