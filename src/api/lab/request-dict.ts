// The request as httpbin describes it, member for member, so that a client's
// tests written against httpbin read the same JSON here: `args` (the query),
// `data` (the body as text, or a data: URL of base64 when it is not UTF-8),
// `files` and `form` (a form body, form.ts), `headers` (names in httpbin's
// Title-Case), `json` (the body parsed, or null), `method`, `origin` and
// `url` (absolute, from the server's scheme and the request's Host). A name
// or field given more than once is a list, as in httpbin.
//
// A body of more than 64 KiB is not rendered whole: escaped, it may be six
// times its size in JSON, held per client ahead of a client that may never
// read. Its `data` is written in pieces as the client reads them, with the
// echo's own escaping (echo-body.ts), and its `json` is null: parsing a large
// body into objects would cost a multiple of it, and block the event loop.

import { randomBytes } from "node:crypto";
import { headerValue, type Request } from "../../http/message/request.js";
import type { BodyStream } from "../../http/message/response.js";
import { ECHO_PIECE_BYTES, ECHO_WHOLE_BYTES, echoEncoding, escapeInto } from "../echo-body.js";
import { formParts } from "./form.js";
import { requestUrl, type Scheme } from "./origin.js";
import { queryPairs } from "./params.js";

export type DictKey = "args" | "data" | "files" | "form" | "headers" | "json" | "method" | "origin" | "url";

const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Text when the bytes are UTF-8, else a data: URL of their base64 (as httpbin's json_safe). */
function jsonSafe(bytes: Buffer, type = "application/octet-stream"): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    return `data:${type};base64,${bytes.toString("base64")}`;
  }
}

/** Pairs to an object: one value as a string, several as a list in order. */
function flatten(pairs: Iterable<readonly [string, string]>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  for (const [name, value] of pairs) {
    const had = out[name];
    out[name] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
  }
  return { ...out };
}

/** "user-agent" as httpbin shows it: "User-Agent". */
export function titleCase(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
}

/** Every header field, names in Title-Case, repeats joined with ", " (RFC 9110 §5.3). */
export function headersDict(request: Request): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < request.fields.length; i += 2) {
    const name = titleCase(request.fields[i]!);
    const value = request.fields[i + 1]!;
    out[name] = out[name] === undefined ? value : `${out[name]}, ${value}`;
  }
  return out;
}

/**
 * The client as httpbin names it: the X-Forwarded-For a proxy in front
 * added, else the address of the peer the request came from (the
 * connection's, "-" for an in-memory one).
 */
export function originOf(request: Request): string {
  return headerValue(request, "x-forwarded-for") ?? request.peer;
}

export function requestDict(request: Request, scheme: Scheme, keys: readonly DictKey[]): Record<string, unknown> {
  const parts = keys.includes("form") || keys.includes("files") || keys.includes("data") ? formParts(request) : undefined;
  const all: { [K in DictKey]: () => unknown } = {
    args: () => flatten(queryPairs(request)),
    // A form body is shown in form and files, not again in data (as httpbin, whose data is then empty).
    data: () => (parts === undefined ? jsonSafe(request.body) : ""),
    files: () => flatten((parts ?? []).filter((p) => p.filename !== undefined).map((p) => [p.name, jsonSafe(p.value, p.type)] as const)),
    form: () => flatten((parts ?? []).filter((p) => p.filename === undefined).map((p) => [p.name, p.value.toString("utf8")] as const)),
    headers: () => headersDict(request),
    json: () => {
      if (parts !== undefined || request.body.length === 0 || request.body.length > ECHO_WHOLE_BYTES) return null;
      try {
        return JSON.parse(UTF8.decode(request.body)) as unknown;
      } catch {
        return null;
      }
    },
    method: () => request.method,
    origin: () => originOf(request),
    url: () => requestUrl(request, scheme),
  };
  const out: Record<string, unknown> = {};
  for (const key of keys) out[key] = all[key]();
  return out;
}

/** The dict as JSON (a line feed after it, as httpbin's): whole, or for a large body with `data` in pieces. */
export function dictJson(request: Request, scheme: Scheme, keys: readonly DictKey[], extra: Record<string, unknown> = {}): string | BodyStream {
  const large = request.body.length > ECHO_WHOLE_BYTES && keys.includes("data");
  if (!large) return JSON.stringify({ ...requestDict(request, scheme, keys), ...extra }) + "\n";
  // A form body is shown in form and files (small enough to build: each part is a slice of the body), not in
  // data, so the dict is built whole. Asked first: the dict of the body left out below would read a multipart
  // Content-Type over an empty body, and refuse it for holding no delimiter.
  if (formParts(request) !== undefined) return JSON.stringify({ ...requestDict(request, scheme, keys), ...extra }) + "\n";
  // A slot no client can guess, so a header holding the same text cannot be taken for it.
  const slot = `DATA-SLOT-${randomBytes(12).toString("hex")}`;
  const dict = requestDict({ ...request, body: Buffer.alloc(0) }, scheme, keys);
  const text = JSON.stringify({ ...dict, data: slot, ...extra }) + "\n";
  return dataPieces(text, slot, request.body);
}

async function* dataPieces(text: string, slot: string, body: Buffer): AsyncGenerator<string | Uint8Array, void, undefined> {
  const at = text.indexOf(`"${slot}"`);
  yield text.slice(0, at + 1);
  if (echoEncoding(body) === "base64") {
    yield "data:application/octet-stream;base64,";
    const step = ECHO_PIECE_BYTES - (ECHO_PIECE_BYTES % 3);
    for (let i = 0; i < body.length; i += step) yield body.toString("base64", i, Math.min(body.length, i + step));
  } else {
    const out = Buffer.allocUnsafe(ECHO_PIECE_BYTES * 6);
    for (let i = 0; i < body.length; ) {
      let end = Math.min(body.length, i + ECHO_PIECE_BYTES);
      while (end < body.length && end > i && (body[end]! & 0xc0) === 0x80) end--; // whole characters only
      yield out.subarray(0, escapeInto(out, body, i, end, "json"));
      i = end;
    }
  }
  yield text.slice(at + slot.length + 1);
}
