// /api/lab/status/:codes: any final status a client wants to see, 200 to 599,
// with the framing and the fields that status calls for (RFC 9110 §15), so a
// client's handling of each can be tried. As in httpbin, several codes may be
// given (`200,418`: one of them at random, evenly) and weighted
// (`200:0.9,500:0.1`: in proportion to the weights), so a client's retries
// can be tried against a server that fails now and then. A 1xx is refused: it is interim
// (RFC 9110 §15.2), the server sends 100 Continue itself when asked, and a
// 1xx as a final answer would leave the client waiting for the real one.

import { problem } from "../../http/message/problem.js";
import type { Request } from "../../http/message/request.js";
import type { FieldValue, Response } from "../../http/message/response.js";
import { REASONS, statusAllowsBody } from "../../http/message/status.js";
import { refuse, whole } from "./params.js";

/** Where a 3xx points, as httpbin's does (its /redirect/1): one more step, to /api/lab/get, which shows what the client sent. */
export const NEXT_STEP = "/api/lab/redirect/1";

/** Fields each status requires or leads a client to expect; the ones marked MUST in RFC 9110 first. */
const FIELDS: Readonly<Record<number, Readonly<Record<string, FieldValue>>>> = {
  206: { "Content-Range": "bytes 0-1/2" }, // §15.3.7: MUST, with the part it carries
  300: { Location: NEXT_STEP }, // §15.4.1: the server's preferred choice
  301: { Location: NEXT_STEP },
  302: { Location: NEXT_STEP },
  303: { Location: NEXT_STEP },
  307: { Location: NEXT_STEP },
  308: { Location: NEXT_STEP },
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

export const MAX_CODES = 50;
const CHOICE = /^([0-9]{1,3})(?::((?:0|[1-9][0-9]{0,5})(?:\.[0-9]{1,6})?))?$/;
export const CODES_ALLOWED = `a status, or up to ${MAX_CODES} of them separated by commas, each optionally weighted with :<weight> (200,418 or 200:0.9,500:0.1)`;

/**
 * The status to answer with: the one given, or one of several chosen at
 * random in proportion to their weights (1 when not given). Not for
 * anything secret: Math.random is enough to pick a status.
 */
export function chooseCode(request: Request, codes: string): string {
  if (!codes.includes(",") && !codes.includes(":")) return codes;
  const choices = codes.split(",");
  if (choices.length > MAX_CODES) refuse(request, "codes", CODES_ALLOWED, `${choices.length} codes are given`);
  let total = 0;
  const weighted: [string, number][] = [];
  for (const choice of choices) {
    const m = CHOICE.exec(choice);
    if (m === null) refuse(request, "codes", CODES_ALLOWED, `${JSON.stringify(choice)} is not a status with an optional :weight`);
    // Each code is checked as a single one would be, so a bad one is refused every time, not when it is drawn.
    checkCode(request, m[1]!);
    const weight = m[2] === undefined ? 1 : Number(m[2]);
    total += weight;
    weighted.push([m[1]!, weight]);
  }
  if (total === 0) refuse(request, "codes", CODES_ALLOWED, "every weight is 0, so no code can be chosen");
  let point = Math.random() * total;
  for (const [code, weight] of weighted) {
    if (point < weight) return code;
    point -= weight;
  }
  return weighted.findLast(([, weight]) => weight > 0)![0];
}

function checkCode(request: Request, code: string): number {
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
  return status;
}

export function statusAnswer(request: Request, codes: string): Response {
  const status = checkCode(request, chooseCode(request, codes));
  const fields = FIELDS[status] ?? {};
  if (status >= 400) {
    // An error is an error body like every other this server sends (RFC 9457), saying it was asked for.
    return problem(status, { kind: "lab-status", title: REASONS[status] ?? `Status ${status}`, detail: `You asked for a ${status} (${reasonText(status)}) at ${request.path}.`, instance: request.target, headers: fields });
  }
  // 204 and 304 carry no content and no Content-Length (the writer frames them); 205 carries none either (§15.3.6).
  const body = !statusAllowsBody(status) || status === 205 ? undefined : status === 206 ? "ok" : JSON.stringify({ status, reason: reasonText(status) });
  if (body === undefined) return { status, headers: fields };
  return { status, headers: { "Content-Type": status === 206 ? "text/plain; charset=utf-8" : "application/json", ...fields }, body };
}

/** The reason phrase, or what an unlisted code is (the status line then has an empty one, RFC 9112 §4). */
function reasonText(status: number): string {
  return REASONS[status] ?? `an unlisted ${Math.floor(status / 100)}xx status`;
}
