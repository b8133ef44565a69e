// One run of the wire view's bytes: the server's connection code reads them
// (inject(), src/http/connection/inject.ts: the parser, the service's judge of
// heads, the handlers and the writer a socket has, with the same limits), a
// request per turn of the event loop, and the account of the requests
// (requests.ts) is made from what that one run tells its trace. The bytes are
// parsed once, by the connection: what the view shows is what the server
// read, and what it ran.

import type { ParserLimits } from "../http/parse/limits.js";
import type { Response } from "../http/message/response.js";
import { inject, type InjectResult } from "../http/connection/inject.js";
import type { Handler, Service } from "../http/connection/service.js";
import type { Budget } from "./budget.js";
import { RequestReader, type RequestStreamAccount } from "./requests.js";

export interface RunOptions {
  /** The application's service: its handler and its judge of heads. */
  readonly service: Service;
  readonly limits: ParserLimits;
  /** What the account of the requests is charged to as it grows; null for no limit (tools and tests). */
  readonly budget?: Budget | null;
  /** Requests one run may hold: the head of one more stops the run, before that request runs. */
  readonly maxRequests?: number;
  /** Bytes of output kept (inject's keepBytes): once a response reaches it, no further request runs. */
  readonly keepBytes?: number;
  /** Bytes the connection is given per read, each read on a turn of the event loop of its own. */
  readonly slice?: number;
  /** The client the bytes are run for (inject's peer). */
  readonly peer?: string;
  readonly onHandlerError?: (error: unknown) => void;
}

export interface Run {
  readonly requests: RequestStreamAccount;
  readonly result: InjectResult;
  /**
   * When the input holds more than maxRequests: where the first request past them begins (the run stopped at its
   * head, and the account's `unread` holds it and every byte after it, none of them run), and how many of those
   * bytes the unread part leaves out past its first PAST_LIMIT_SHOWN (requests.ts). null when there is none.
   */
  readonly pastLimit: { readonly start: number; readonly notShown: number } | null;
}

/** Most input the connection reads in one turn of the event loop, unless said. */
export const SLICE = 64 * 1024;

/** The answer to a request past maxRequests: it never runs, and the connection reads nothing after it. */
const NOT_RUN: Response = { status: 204, close: true };

/** `input` in reads of at most `slice` bytes. */
function reads(input: Buffer, slice: number): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < input.length; at += slice) out.push(input.subarray(at, at + slice));
  return out;
}

/** Runs `input` as one client's connection, and makes the account of its requests as the connection reads them. */
export async function runRequests(input: Buffer, options: RunOptions): Promise<Run> {
  const stop = new AbortController();
  const reader = new RequestReader(input, options.budget ?? null, options.maxRequests, () => stop.abort());
  // The account stops growing at the head past the limit; that request, read on in the same turn, is not run.
  const handle: Handler = (request) => (reader.over >= 0 ? NOT_RUN : options.service.handle(request));
  const admit = options.service.admit;
  const result = await inject(admit === undefined ? { handle } : { handle, admit }, reads(input, options.slice ?? SLICE), {
    limits: options.limits,
    stepwise: true,
    trace: reader,
    signal: stop.signal,
    ...(options.keepBytes === undefined ? {} : { keepBytes: options.keepBytes }),
    ...(options.peer === undefined ? {} : { peer: options.peer }),
    ...(options.onHandlerError === undefined ? {} : { onHandlerError: options.onHandlerError }),
  });
  const requests = reader.account();
  return { requests, result, pastLimit: reader.over >= 0 ? { start: reader.over, notShown: reader.pastLimitNotShown } : null };
}

/** A handler that answers every request at once, for an account of the requests alone. */
const ANSWER: Handler = () => ({ status: 200, body: "ok" });

/**
 * The account of the requests in `bytes`, as a connection whose handler
 * answers each at once reads them (for tools and tests): `slice` bytes per
 * read.
 */
export async function accountOfRequests(bytes: Buffer, limits: ParserLimits, budget: Budget | null = null, slice = SLICE): Promise<RequestStreamAccount> {
  return (await runRequests(bytes, { service: { handle: ANSWER }, limits, budget, slice })).requests;
}
