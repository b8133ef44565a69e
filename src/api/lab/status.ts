// /api/lab/status/:code: any final status a client wants to see, 200 to 599,
// with the framing and the fields that status calls for (RFC 9110 §15), so a
// client's handling of each can be tried. A 1xx is refused: it is interim
// (RFC 9110 §15.2), the server sends 100 Continue itself when asked, and a
// 1xx as a final answer would leave the client waiting for the real one.

import { problem } from "../../http/message/problem.js";
import type { Request } from "../../http/message/request.js";
import type { FieldValue, Response } from "../../http/message/response.js";
import { REASONS, statusAllowsBody } from "../../http/message/status.js";
import { refuse, whole } from "./params.js";

/** Where a 3xx points: the echo, which shows what the client sent after following it. */
export const ECHO = "/api/echo";

/** Fields each status requires or leads a client to expect; the ones marked MUST in RFC 9110 first. */
const FIELDS: Readonly<Record<number, Readonly<Record<string, FieldValue>>>> = {
  206: { "Content-Range": "bytes 0-1/2" }, // §15.3.7: MUST, with the part it carries
  300: { Location: ECHO }, // §15.4.1: the server's preferred choice
  301: { Location: ECHO },
  302: { Location: ECHO },
  303: { Location: ECHO },
  307: { Location: ECHO },
  308: { Location: ECHO },
  401: { "WWW-Authenticate": 'Bearer realm="startline-lab"' }, // §15.5.2: MUST
  405: { Allow: "GET, HEAD" }, // §15.5.6: MUST (what this stand-in resource pretends to allow)
  407: { "Proxy-Authenticate": 'Basic realm="startline-lab"' }, // §15.5.8: MUST
  416: { "Content-Range": "bytes */0" }, // §15.5.17: SHOULD, the current length
  429: { "Retry-After": "1" }, // RFC 6585 §4: MAY
  503: { "Retry-After": "1" }, // §15.6.4: MAY
};

/** Statuses this resource cannot send as asked, and why. */
const REFUSED: Readonly<Record<number, string>> = {
  426: "a 426 must carry Upgrade (RFC 9110 §15.5.22), and this server speaks only HTTP/1.1, so it never offers one",
};

export const STATUS_ALLOWED = "a final status, a whole number from 200 to 599 (not 426)";

export function statusAnswer(request: Request, code: string): Response {
  if (/^1[0-9][0-9]$/.test(code)) {
    refuse(
      request,
      "code",
      STATUS_ALLOWED,
      `${code} is an interim (1xx) status: it cannot be a final answer (RFC 9110 §15.2), since the client would wait for the response that follows it; the server sends 100 Continue itself when a request asks for it`,
    );
  }
  const status = whole(request, "code", code, 200, 599);
  const why = REFUSED[status];
  if (why !== undefined) refuse(request, "code", STATUS_ALLOWED, `${status} cannot be sent as asked: ${why}`);
  const fields = FIELDS[status] ?? {};
  if (status >= 400) {
    // An error is an error body like every other this server sends (RFC 9457), saying it was asked for.
    return problem(status, { kind: "lab-status", title: REASONS[status] ?? `Status ${status}`, detail: `You asked for a ${status} (${reasonText(status)}) at ${request.path}.`, instance: request.target, headers: { ...fields, "Cache-Control": "no-store" } });
  }
  // 204 and 304 carry no content and no Content-Length (the writer frames them); 205 carries none either (§15.3.6).
  const body = !statusAllowsBody(status) || status === 205 ? undefined : status === 206 ? "ok" : JSON.stringify({ status, reason: reasonText(status) });
  const headers: Record<string, FieldValue> = { ...fields, "Cache-Control": "no-store" };
  if (body === undefined) return { status, headers };
  return { status, headers: { "Content-Type": status === 206 ? "text/plain; charset=utf-8" : "application/json", ...headers }, body };
}

/** The reason phrase, or what an unlisted code is (the status line then has an empty one, RFC 9112 §4). */
function reasonText(status: number): string {
  return REASONS[status] ?? `an unlisted ${Math.floor(status / 100)}xx status`;
}
