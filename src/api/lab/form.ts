// Form bodies, read as httpbin reads them into `form` and `files`:
// application/x-www-form-urlencoded (WHATWG URL's rules, + is a space) and
// multipart/form-data (RFC 7578: parts delimited by the boundary, each named
// by its Content-Disposition, a part with a filename a file). The body is
// already whole and within the body limit, so the work is one pass over it;
// the number of parts is bounded as well, since each costs an object.

import { trimOws } from "../../http/message/field-lists.js";
import { mediaType } from "../../http/message/media.js";
import { headerValue, type Request } from "../../http/message/request.js";
import { queryOf, refuse } from "./params.js";

export const MAX_PARTS = 1000;

export interface FormPart {
  readonly name: string;
  /** Present for a file part: its filename parameter. */
  readonly filename?: string;
  /** The part's own Content-Type, when it sent one. */
  readonly type?: string;
  readonly value: Buffer;
}

/** What a form body held, in order; undefined when the body is not a form. */
export function formParts(request: Request): FormPart[] | undefined {
  const raw = headerValue(request, "content-type");
  const type = mediaType(raw);
  if (type === "application/x-www-form-urlencoded") {
    const pairs = [...new URLSearchParams(request.body.toString("utf8"))];
    if (pairs.length > MAX_PARTS) refuse(request, "(body)", `at most ${MAX_PARTS} form fields`, `The form has ${pairs.length} fields`);
    return pairs.map(([name, value]) => ({ name, value: Buffer.from(value, "utf8") }));
  }
  if (type === "multipart/form-data") return multipart(request, boundaryOf(raw!));
  return undefined;
}

/** The boundary parameter, as sent (it is case-sensitive, unlike most parameters). */
function boundaryOf(value: string): string | undefined {
  for (const part of value.split(";").slice(1)) {
    const eq = part.indexOf("=");
    if (eq === -1 || trimOws(part.slice(0, eq)).toLowerCase() !== "boundary") continue;
    const v = trimOws(part.slice(eq + 1));
    return v.startsWith('"') && v.endsWith('"') && v.length >= 2 ? v.slice(1, -1) : v;
  }
  return undefined;
}

const BOUNDARY = /^[0-9A-Za-z'()+_,\-./:=? ]{1,70}$/; // RFC 2046 §5.1.1 bchars, at most 70

function multipart(request: Request, boundary: string | undefined): FormPart[] {
  const allowed = "a multipart/form-data body with a boundary parameter of 1 to 70 characters (RFC 2046 §5.1.1)";
  if (boundary === undefined || !BOUNDARY.test(boundary) || boundary.endsWith(" ")) refuse(request, "Content-Type", allowed, "The multipart/form-data Content-Type has no valid boundary");
  const body = request.body;
  const delimiter = Buffer.from(`--${boundary}`, "latin1");
  // Every delimiter after the first follows a line break that belongs to it (RFC 2046 §5.1.1).
  const closing = Buffer.from(`\r\n--${boundary}`, "latin1");
  const parts: FormPart[] = [];
  let at = body.indexOf(delimiter);
  if (at === -1) refuse(request, "(body)", allowed, `The body holds no --${boundary} delimiter`);
  for (;;) {
    let from = at + delimiter.length;
    if (body[from] === 0x2d && body[from + 1] === 0x2d) return parts; // the close delimiter
    // Transport padding after the delimiter, then its line break (RFC 2046 §5.1.1).
    while (body[from] === 0x20 || body[from] === 0x09) from++;
    if (body[from] === 0x0d && body[from + 1] === 0x0a) from += 2;
    else refuse(request, "(body)", allowed, `The delimiter at byte ${at} is not followed by CR LF`);
    const next = body.indexOf(closing, from);
    if (next === -1) refuse(request, "(body)", allowed, `The part at byte ${from} has no delimiter after it (the body ends without --${boundary}--)`);
    // The part's header fields end at an empty line; a part without any starts with it.
    const bare = body[from] === 0x0d && body[from + 1] === 0x0a;
    const headEnd = bare ? from : body.indexOf("\r\n\r\n", from);
    if (headEnd === -1 || headEnd > next) refuse(request, "(body)", allowed, `The part at byte ${from} has no empty line after its header fields`);
    const fields = bare ? [] : body.toString("latin1", from, headEnd).split("\r\n");
    const valueStart = bare ? from + 2 : headEnd + 4;
    parts.push(part(request, fields, body.subarray(valueStart, next), from, allowed));
    if (parts.length > MAX_PARTS) refuse(request, "(body)", `at most ${MAX_PARTS} parts`, `The form has more than ${MAX_PARTS} parts`);
    at = next + 2;
  }
}

function part(request: Request, lines: readonly string[], value: Buffer, offset: number, allowed: string): FormPart {
  let disposition: string | undefined;
  let type: string | undefined;
  for (const line of lines) {
    const colon = line.indexOf(":");
    const name = line.slice(0, colon).toLowerCase();
    if (name === "content-disposition") disposition = trimOws(line.slice(colon + 1));
    else if (name === "content-type") type = trimOws(line.slice(colon + 1));
  }
  const params = disposition === undefined ? undefined : dispositionParams(disposition);
  const name = params?.get("name");
  if (name === undefined) refuse(request, "(body)", allowed, `The part at byte ${offset} has no Content-Disposition: form-data; name="..." (RFC 7578 §4.2)`);
  const filename = params!.get("filename");
  return { name, ...(filename === undefined ? {} : { filename }), ...(type === undefined ? {} : { type }), value };
}

/** form-data; name="a"; filename="b.txt": the parameters, quoted strings unquoted (field bytes read as UTF-8, as browsers send them). */
function dispositionParams(value: string): Map<string, string> {
  const out = new Map<string, string>();
  const text = Buffer.from(value, "latin1").toString("utf8");
  const re = /;\s*([A-Za-z0-9!#$%&'*+.^_`|~-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]*))/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) out.set(m[1]!.toLowerCase(), m[2] !== undefined ? m[2].replace(/\\(.)/g, "$1") : m[3]!);
  return out;
}

/** Parameters a resource reads from its query or, failing that, from a form body (as httpbin's redirect-to does). */
export function formOrQuery<const N extends string>(request: Request, names: readonly N[]): Partial<Record<N, string>> {
  const fromQuery = queryOf(request, names);
  if (Object.keys(fromQuery).length > 0 || request.body.length === 0) return fromQuery;
  const out: Partial<Record<N, string>> = {};
  for (const p of formParts(request) ?? []) {
    if ((names as readonly string[]).includes(p.name) && p.filename === undefined) out[p.name as N] ??= p.value.toString("utf8");
  }
  return out;
}

