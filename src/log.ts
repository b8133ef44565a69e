// The access log: one line per response on stdout, written in batches so that
// logging costs one write per event-loop turn, not one per request.
//
// Two formats: "common", the Common Log Format that log tools already read
// (client, time, request line, status, body bytes) plus the time taken, and
// "json", one object per line for log pipelines. Times are UTC and are those
// of the response, not of the request's first byte.

import type { Exchange } from "./http/connection/options.js";

export type LogFormat = "common" | "json";

export const LOG_FORMATS: readonly LogFormat[] = ["common", "json"];

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

const two = (n: number) => (n < 10 ? "0" : "") + n;

// Every line needs the time, but it changes once a second: both forms of the
// current second are built when the second changes, not per line (as
// src/http/message/date.ts does for the Date field).
let second = NaN;
let commonTime = "";
let isoSecond = "";

function toSecond(ms: number): void {
  const s = Math.floor(ms / 1000);
  if (s === second) return;
  second = s;
  const d = new Date(s * 1000);
  commonTime = `${two(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} +0000`;
  isoSecond = d.toISOString().slice(0, 19);
}

// The parser admits no quote, backslash or control byte in a method or target
// (RFC 9110 §5.6.2, RFC 3986), but a log line must stay one parseable line
// whatever a future parser lets through: escape the way Apache's %r does.
const UNSAFE = /["\\\x00-\x1f\x7f-\uffff]/;

function quoteSafe(s: string): string {
  if (!UNSAFE.test(s)) return s;
  let out = "";
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === "\\") out += "\\" + ch;
    else if (c < 0x20 || (c >= 0x7f && c <= 0xff)) out += "\\x" + c.toString(16).padStart(2, "0");
    else out += ch;
  }
  return out;
}

/**
 * `client - - [time] "request line" status bytes duration`: Common Log Format
 * (no identd, no user) with the duration after it. The request line is "-"
 * when none was read; its version is "-" when the head after it was refused
 * (too long, malformed) before the server kept it. Bytes are the body's, "-"
 * for none, as CLF writes them.
 */
export function formatCommon(e: Exchange, now: number): string {
  toSecond(now);
  const request = e.method === "-" && e.target === "-" ? "-" : `${quoteSafe(e.method)} ${quoteSafe(e.target)} ${e.version}`;
  return `${e.client} - - [${commonTime}] "${request}" ${e.status} ${e.bodyBytes === 0 ? "-" : e.bodyBytes} ${e.ms.toFixed(2)}ms`;
}

/** One JSON object: {time, client, method, target, version, status, bytes, ms}, plus `worker` under WORKERS. */
export function formatJson(e: Exchange, now: number, worker?: number): string {
  toSecond(now);
  const millis = String(Math.floor(now) - second * 1000).padStart(3, "0");
  return (
    `{"time":"${isoSecond}.${millis}Z","client":${JSON.stringify(e.client)},"method":${JSON.stringify(e.method)},` +
    `"target":${JSON.stringify(e.target)},"version":${JSON.stringify(e.version)},"status":${e.status},"bytes":${e.bodyBytes},` +
    `"ms":${Math.round(e.ms * 100) / 100}${worker === undefined ? "" : `,"worker":${worker}`}}`
  );
}

export interface AccessLogOptions {
  readonly format?: LogFormat;
  /** The worker a line comes from under WORKERS: a `w<N> ` prefix in common format, a field in JSON. */
  readonly worker?: number;
}

export function accessLog(out: NodeJS.WritableStream = process.stdout, options: AccessLogOptions = {}): (e: Exchange) => void {
  const worker = options.worker;
  const format =
    options.format === "json"
      ? (e: Exchange) => formatJson(e, Date.now(), worker)
      : worker === undefined
        ? (e: Exchange) => formatCommon(e, Date.now())
        : (e: Exchange) => `w${worker} ` + formatCommon(e, Date.now());
  let pending = "";
  const flush = () => {
    const text = pending;
    pending = "";
    out.write(text);
  };
  return (e) => {
    if (pending === "") setImmediate(flush);
    pending += format(e) + "\n";
  };
}
