// What every part of a benchmark run shares: the options, the pinning, the
// run's temporary directory, and the lists of problems
// and warnings that end up under the table.

import type { Options } from "./options.js";
import type { RawResponse } from "./probe.js";
import type { Pinning } from "./proc.js";

/** A temporary directory for the run: the throwaway certificate, node:http's state files, startline's DATA_DIRs under WORKERS. */
export interface Workspace {
  readonly dir: string;
  /** The throwaway certificate, when an HTTPS scenario runs. */
  readonly tls: { readonly certPath: string; readonly keyPath: string; readonly cert: Buffer } | undefined;
}

export function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

export interface Context {
  readonly options: Options;
  readonly pinning: Pinning;
  readonly workspace: Workspace;
  readonly problems: string[];
  /** Worth knowing, but the figures stand. */
  readonly warnings: string[];
  /** The certificate to verify the current scenario's servers with (HTTPS scenarios). */
  currentCa: Buffer | undefined;
}

/** What startline answered to the scenario's first request, and the state node:http starts with. */
export interface Reference {
  readonly response: RawResponse;
  /** JSON {posts, facts} as startline listed them after the setup requests. */
  readonly stateFile: string | undefined;
}

