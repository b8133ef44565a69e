// A request as the parser would hand it to a handler, without a body: for
// tests that call a router or a handler directly, with no connection.

import type { Request } from "../../src/http/message/request.js";

/** `fields` are name/value pairs, flat, names lower-case, after Host. */
export function bodilessRequest(method: string, target: string, fields: readonly string[] = []): Request {
  const q = target.indexOf("?");
  return {
    method,
    target,
    path: q === -1 ? target : target.slice(0, q),
    query: q === -1 ? "" : target.slice(q + 1),
    minor: 1,
    fields: ["host", "t", ...fields],
    host: "t",
    framing: { kind: "none" },
    keepAlive: true,
    expectContinue: false,
    peer: "-",
    body: Buffer.alloc(0),
  };
}
