// `npm run token -- ...` for the tests, two ways: as the real command (`node
// dist/src/token.js`, a process of its own, as an operator runs it), and in
// this process through the function that command runs
// (src/token-command.ts), with the same exit status and output. A process
// costs about 0.3 s of CPU to load Node, the settings and the store, so the
// tests run most commands in process; each command is still run for real
// somewhere (test/admin-token.test.ts, test/helpers/tokens-suite.ts). Either
// way the command is another process than every server it acts beside.

import { execFile } from "node:child_process";
import path from "node:path";
import { format, promisify } from "node:util";
import { tokenCommand } from "../../src/token-command.js";
import { MAIN, serverEnv } from "./process.js";

const run = promisify(execFile);
const TOKEN_COMMAND = path.join(path.dirname(MAIN), "token.js");

export interface TokenRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** The real command with `settings`, in a server's environment (serverEnv: no startline setting of the caller's, then these). */
export async function tokenProcess(settings: Readonly<Record<string, string>>, ...args: string[]): Promise<TokenRun> {
  try {
    const { stdout, stderr } = await run(process.execPath, [TOKEN_COMMAND, ...args], { env: serverEnv(settings) });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** The same command, run in this process: its lines gathered as the console would print them. */
export async function tokenInProcess(settings: Readonly<Record<string, string>>, ...args: string[]): Promise<TokenRun> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const out = {
    log: (...parts: unknown[]) => void stdout.push(`${format(...parts)}\n`),
    error: (...parts: unknown[]) => void stderr.push(`${format(...parts)}\n`),
  };
  const code = await tokenCommand(args, serverEnv(settings), out);
  return { code, stdout: stdout.join(""), stderr: stderr.join("") };
}
