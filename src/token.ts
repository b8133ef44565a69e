// `npm run token -- <command>`: manage the bearer tokens in the server's
// database (DATABASE_URL, or DATA_DIR's SQLite file), while it runs or not.
// What each command does is in src/token-command.ts; this runs it with the
// process's command line and settings, and its status is the exit status.
//
//   add --role admin|user    create a token, store its hash, print it once
//   list                     id, role, origin, created, last used; never a secret
//   revoke <token-or-id>     remove a token; every server refuses it from then on

import { tokenCommand } from "./token-command.js";

process.exitCode = await tokenCommand(process.argv.slice(2), process.env, console);
