// One request by hand, before measuring: to capture the response the ceiling
// server replays, and to check that every server answers the scenario with the
// same status line, header fields and body (a comparison of servers that
// answer differently would be meaningless).

import net from "node:net";
import tls from "node:tls";
import type { BodyCheck, RequestSpec } from "./scenarios.js";

/** The request as a load generator writes it (request line, Host, Connection: keep-alive, fields, Content-Length). */
export function formatRequest(req: RequestSpec, host: string): Buffer {
  const body = req.body === undefined ? Buffer.alloc(0) : Buffer.from(req.body, "utf8");
  const lines = [`${req.method} ${req.path} HTTP/1.1`];
  const fields = Object.entries(req.headers ?? {});
  if (!fields.some(([name]) => name.toLowerCase() === "host")) lines.push(`Host: ${host}`);
  lines.push("Connection: keep-alive");
  for (const [name, value] of fields) lines.push(`${name}: ${value}`);
  if (body.length > 0) lines.push(`Content-Length: ${body.length}`);
  return Buffer.concat([Buffer.from(lines.join("\r\n") + "\r\n\r\n", "utf8"), body]);
}

export interface RawResponse {
  /** Head and body, exactly as received. */
  readonly raw: Buffer;
  readonly statusLine: string;
  readonly status: number;
  readonly fields: ReadonlyArray<readonly [string, string]>;
  readonly body: Buffer;
}

/**
 * Where a chunked body (RFC 9112 §7.1) that starts at `start` ends, and its
 * content; undefined while its last chunk has not arrived.
 */
function dechunk(bytes: Buffer, start: number): { end: number; content: Buffer } | undefined {
  const parts: Buffer[] = [];
  let pos = start;
  for (;;) {
    const eol = bytes.indexOf("\r\n", pos);
    if (eol < 0) return undefined;
    const size = parseInt(bytes.toString("latin1", pos, eol), 16);
    if (!(size >= 0)) throw new Error(`bad chunk size line ${JSON.stringify(bytes.toString("latin1", pos, eol))}`);
    if (size === 0) return bytes.length < eol + 4 ? undefined : { end: eol + 4, content: Buffer.concat(parts) };
    if (bytes.length < eol + 2 + size + 2) return undefined;
    parts.push(bytes.subarray(eol + 2, eol + 2 + size));
    pos = eol + 2 + size + 2;
  }
}

/**
 * Sends one request on a new connection and reads one response: framed by
 * Content-Length, chunked (a streamed list; `body` is then the content, `raw`
 * the bytes as sent), or without content (304).
 */
export function fetchOne(port: number, req: RequestSpec, options: { readonly timeoutMs?: number; readonly ca?: Buffer } = {}): Promise<RawResponse> {
  const timeoutMs = options.timeoutMs ?? 5000;
  return new Promise((resolve, reject) => {
    // Over TLS, the certificate is verified against `ca` (the throwaway certificate; its subjectAltName is IP:127.0.0.1).
    const socket = options.ca === undefined ? net.connect(port, "127.0.0.1") : tls.connect({ port, host: "127.0.0.1", ca: options.ca });
    const connectEvent = options.ca === undefined ? "connect" : "secureConnect";
    let received = Buffer.alloc(0);
    const timer = setTimeout(() => fail(new Error(`no complete response within ${timeoutMs} ms`)), timeoutMs);
    function fail(error: Error): void {
      clearTimeout(timer);
      socket.destroy();
      reject(error);
    }
    socket.on("error", fail);
    socket.on(connectEvent, () => socket.write(formatRequest(req, `127.0.0.1:${port}`)));
    socket.on("end", () => fail(new Error(`connection closed after ${received.length} bytes: ${JSON.stringify(received.toString("latin1"))}`)));
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const headEnd = received.indexOf("\r\n\r\n");
      if (headEnd < 0) return;
      const lines = received.subarray(0, headEnd).toString("latin1").split("\r\n");
      const statusLine = lines[0] ?? "";
      const status = Number(statusLine.split(" ")[1]);
      const fields = lines.slice(1).map((line): [string, string] => {
        const colon = line.indexOf(":");
        return [line.slice(0, colon), line.slice(colon + 1).trim()];
      });
      const field = (name: string) => fields.find(([n]) => n.toLowerCase() === name)?.[1];
      let end: number;
      let body: Buffer;
      if (status === 304 || status === 204) {
        end = headEnd + 4;
        body = Buffer.alloc(0);
      } else if (field("transfer-encoding") === "chunked") {
        const chunked = dechunk(received, headEnd + 4);
        if (chunked === undefined) return;
        end = chunked.end;
        body = chunked.content;
      } else {
        const length = field("content-length");
        if (length === undefined) {
          fail(new Error(`response without Content-Length or chunked framing: ${JSON.stringify(received.toString("latin1"))}`));
          return;
        }
        end = headEnd + 4 + Number(length);
        if (received.length < end) return;
        body = received.subarray(headEnd + 4, end);
      }
      clearTimeout(timer);
      socket.destroy();
      resolve({ raw: received.subarray(0, end), statusLine, status, fields, body });
    });
  });
}

/** An RFC 3339 timestamp as Date.prototype.toISOString() writes it (fixed width). */
const TIMESTAMP = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g;

/** The body with every timestamp replaced by a placeholder of the same width. */
export function maskTimestamps(body: Buffer): string {
  return body.toString("utf8").replace(TIMESTAMP, "YYYY-MM-DDTHH:MM:SS.mmmZ");
}

/**
 * Field values that derive from the body, so are not compared when the body
 * is not compared exactly. (A list's ETag names its database's random epoch:
 * never the same in two servers, so lists are compared with "timestamps".)
 */
const DERIVED: Readonly<Record<BodyCheck, readonly string[]>> = {
  exact: [],
  timestamps: ["etag"],
  none: ["etag", "content-length", "location"],
};

/** Differences between two responses that matter for a fair comparison (Date values are ignored); empty when alike. */
export function compareResponses(expected: RawResponse, actual: RawResponse, check: BodyCheck): string[] {
  const diffs: string[] = [];
  if (expected.statusLine !== actual.statusLine) diffs.push(`status line ${JSON.stringify(actual.statusLine)}, expected ${JSON.stringify(expected.statusLine)}`);
  // Field names compare exactly, case included: the heads should be byte-identical but for Date values.
  const names = (r: RawResponse) => r.fields.map(([name]) => name).join(", ");
  if (names(expected) !== names(actual)) diffs.push(`header fields [${names(actual)}], expected [${names(expected)}]`);
  for (const [name, value] of expected.fields) {
    const lower = name.toLowerCase();
    if (lower === "date" || DERIVED[check].includes(lower)) continue;
    const other = actual.fields.find(([n]) => n.toLowerCase() === lower);
    if (other !== undefined && other[1] !== value) diffs.push(`${name}: ${JSON.stringify(other[1])}, expected ${JSON.stringify(value)}`);
  }
  const show = (b: Buffer) => JSON.stringify(b.length > 2000 ? `${b.subarray(0, 2000).toString("utf8")}...` : b.toString("utf8"));
  if (check === "exact" && !expected.body.equals(actual.body)) {
    diffs.push(`body ${show(actual.body)}, expected ${show(expected.body)}${firstDifference(expected.body.toString("utf8"), actual.body.toString("utf8"))}`);
  }
  if (check === "timestamps") {
    const [e, a] = [maskTimestamps(expected.body), maskTimestamps(actual.body)];
    if (e !== a) diffs.push(`body (timestamps masked) ${show(actual.body)}, expected ${show(expected.body)}${firstDifference(e, a)}`);
  }
  return diffs;
}

function firstDifference(expected: string, actual: string): string {
  let i = 0;
  while (i < expected.length && i < actual.length && expected[i] === actual[i]) i++;
  return `; first difference at character ${i}: ${JSON.stringify(actual.slice(Math.max(0, i - 40), i + 40))}, expected ${JSON.stringify(expected.slice(Math.max(0, i - 40), i + 40))}`;
}
