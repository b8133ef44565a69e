// The server's side of the wire view: the responses in what it wrote, part by
// part, within the answer's budget. The bytes may be only the first part of
// what was written (the wire view stops keeping output once its budget is
// spent); `written` says how much there really was, so a body cut short still
// spans its real length and says how much of it is left out.

import { charge, type Budget } from "./budget.js";
import { latin1, partMaker, utf8, type PartMaker, type WirePart } from "./parts.js";
import type { RequestAccount } from "./requests.js";

const CR = 0x0d;
const LF = 0x0a;

/** A line of the server's own output: where it starts, where its content ends (before CR LF), and after its LF. */
interface Line {
  readonly start: number;
  readonly contentEnd: number;
  readonly end: number;
}

/** The line starting at `pos`, or null when no LF follows. */
function lineAt(bytes: Buffer, pos: number): Line | null {
  const lf = bytes.indexOf(LF, pos);
  if (lf === -1) return null;
  return { start: pos, contentEnd: lf > pos && bytes[lf - 1] === CR ? lf - 1 : lf, end: lf + 1 };
}

const NOT_KEPT = "Not kept: the wire view stopped keeping the server's output here (its answer's budget was spent)";

export interface ResponseAccount {
  readonly start: number;
  readonly end: number;
  readonly status: number;
  readonly statusLine: string;
  /** Which request it answers (from 0); null for an interim 1xx response. */
  readonly answers: number | null;
  readonly fields: readonly { readonly name: string; readonly value: string }[];
  readonly parts: WirePart[];
}

/**
 * The parts of a chunked body the server wrote (a streamed list), from `pos`:
 * each chunk's size line, data and CR LF, the last chunk and the empty line
 * (this server sends no trailer). Returns where the body ends: in the bytes
 * kept, or at `written` when the kept output stops inside it. Once nothing
 * more is shown, the rest is one omitted stretch, found from the sizes alone.
 */
function chunkParts(m: PartMaker, bytes: Buffer, parts: WirePart[], pos: number, written: number): number {
  const len = bytes.length;
  /** The kept bytes ran out inside the body: the rest was written but not kept, or never written. */
  const cut = (from: number): number => {
    if (written > len) {
      m.push(parts, m.part("omitted", NOT_KEPT, from, written));
      return written;
    }
    if (from < len) m.push(parts, m.part("incomplete", "Unfinished output", from, len, undefined, utf8));
    return len;
  };
  let omitFrom = -1;
  for (;;) {
    const line = lineAt(bytes, pos);
    if (line === null) return omitFrom >= 0 ? cut(omitFrom) : cut(pos);
    const hex = latin1(bytes, line.start, line.contentEnd).split(";")[0]!;
    const size = parseInt(hex, 16);
    if (omitFrom < 0 && m.exhausted()) omitFrom = pos;
    if (size === 0 || Number.isNaN(size)) {
      const blank = lineAt(bytes, line.end);
      if (blank === null) return cut(omitFrom >= 0 ? omitFrom : pos);
      if (omitFrom >= 0) m.push(parts, m.part("omitted", "", omitFrom, blank.end));
      else {
        m.push(parts, m.part("last-chunk", "Last chunk (size 0): the body is complete", line.start, line.end));
        m.push(parts, m.part("blank-line", "Blank line: the chunked body ends", blank.start, blank.end));
      }
      return blank.end;
    }
    const dataEnd = line.end + size;
    if (dataEnd + 2 > len) {
      // The kept output stops in this chunk.
      if (omitFrom >= 0 || written <= len) return cut(omitFrom >= 0 ? omitFrom : pos);
      m.push(parts, m.part("chunk-size", `Chunk size: 0x${hex} = ${size} bytes`, line.start, line.end));
      m.push(parts, m.part("chunk-data", `Chunk data (${size} bytes)`, line.end, Math.min(dataEnd, written), undefined, utf8));
      return dataEnd < written ? cut(dataEnd) : written;
    }
    if (omitFrom < 0) {
      m.push(parts, m.part("chunk-size", `Chunk size: 0x${hex} = ${size} bytes`, line.start, line.end));
      m.push(parts, m.part("chunk-data", `Chunk data (${size} bytes)`, line.end, dataEnd, undefined, utf8));
      m.push(parts, m.part("chunk-end", "CR LF after the chunk data", dataEnd, dataEnd + 2));
    }
    pos = dataEnd + 2;
  }
}

/**
 * The responses in the server's output. Framing as this server writes it:
 * Content-Length on every response whose status allows content, or chunked
 * for a streamed body; no content on 1xx, 204, 304, or in answer to HEAD.
 * `bytes` holds the first bytes of the `written` the server wrote (all of
 * them, unless the output was cut).
 */
export function accountOfResponses(bytes: Buffer, requests: readonly RequestAccount[], budget: Budget | null = null, written = bytes.length): ResponseAccount[] {
  const m = partMaker(bytes, budget, "response");
  const out: ResponseAccount[] = [];
  let pos = 0;
  let answered = 0;
  const len = bytes.length;
  const finish = (response: ResponseAccount) => {
    if (budget !== null) charge(budget, { ...response, parts: [] });
    out.push(response);
  };
  while (pos < len) {
    const start = pos;
    const parts: WirePart[] = [];
    const fields: { name: string; value: string }[] = [];
    const first = lineAt(bytes, pos);
    if (first === null) {
      m.push(parts, written > len ? m.part("omitted", NOT_KEPT, pos, written) : m.part("incomplete", "Unfinished output", pos, len, undefined, utf8));
      finish({ start, end: Math.max(len, written), status: 0, statusLine: "", answers: null, fields, parts });
      break;
    }
    const statusLine = latin1(bytes, first.start, first.contentEnd);
    const status = Number(statusLine.split(" ")[1]);
    const interim = status >= 100 && status < 200;
    m.push(parts, m.part("status-line", "Status line", first.start, first.end, `Version ${statusLine.split(" ")[0]}, status ${status}, reason "${statusLine.split(" ").slice(2).join(" ")}"`));
    pos = first.end;
    let contentLength: number | undefined;
    let chunked = false;
    let headEnded = false;
    for (let line = lineAt(bytes, pos); line !== null; line = lineAt(bytes, pos)) {
      pos = line.end;
      if (line.contentEnd === line.start) {
        m.push(parts, m.part("blank-line", "Blank line: the header section ends", line.start, line.end));
        headEnded = true;
        break;
      }
      const text = latin1(bytes, line.start, line.contentEnd);
      const colon = text.indexOf(":");
      const name = text.slice(0, colon);
      const value = text.slice(colon + 1).trim();
      fields.push({ name, value });
      if (name.toLowerCase() === "content-length") contentLength = Number(value);
      if (name.toLowerCase() === "transfer-encoding" && value === "chunked") chunked = true;
      m.push(parts, m.part("field", `Header field ${name}`, line.start, line.end));
    }
    if (!headEnded && written > len) {
      // The output was cut inside this head: what follows is not shown.
      m.push(parts, m.part("omitted", NOT_KEPT, pos, written));
      finish({ start, end: written, status, statusLine, answers: interim ? null : answered, fields, parts });
      break;
    }
    const request = interim ? undefined : requests[answered];
    const noContent = interim || status === 204 || status === 304 || request?.method === "HEAD";
    if (!noContent && chunked) {
      pos = chunkParts(m, bytes, parts, pos, written);
    } else if (!noContent) {
      // A body cut short by the budget still ends where Content-Length says; one cut by the input ending does not.
      const end = contentLength === undefined ? Math.max(len, written) : Math.min(pos + contentLength, Math.max(len, written));
      if (end > pos || contentLength !== undefined) {
        const why = contentLength === undefined ? "until the connection closes" : "by Content-Length";
        m.push(parts, m.part("body", `Body (${end - pos} bytes, ${why})`, pos, end, undefined, utf8));
      }
      pos = end;
    } else if (request?.method === "HEAD" && !interim) {
      parts.push({ kind: "body", label: "No body: this answers HEAD (Content-Length is what GET would send)", start: pos, end: pos, text: "" });
    }
    finish({ start, end: pos, status, statusLine, answers: interim ? null : answered, fields, parts });
    if (!interim) answered++;
  }
  return out;
}
