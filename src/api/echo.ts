// The echo resource: /api/echo and every path below it answer any method
// token with what the server made of the request: method, target, version,
// header fields in arrival order, the framing decided from the head, and the
// body. For clients testing a custom verb (UPDATE, PURGE, lower-case ones,
// anything RFC 9110 §9.1 calls a token) and for people learning what a
// request is made of.

import type { CacheDeclared } from "../policies/cache.js";
import type { Request } from "../http/message/request.js";
import { ANY_METHOD, type Route, type RouteResponseDoc } from "../router/route.js";
import { JSON_OR_YAML, NOT_ACCEPTABLE } from "./docs.js";
import type { BodyStream, Response } from "../http/message/response.js";
import { ECHO_WHOLE_BYTES, echoEncoding, echoPieces } from "./echo-body.js";
import { chooseFormat, MEDIA_TYPES, VARY, type Format } from "../representation/negotiate.js";
import { echoYaml } from "./echo-yaml.js";

/** What the server received, as the echo reports it. */
export interface Echo {
  readonly method: string;
  readonly target: string;
  readonly path: string;
  readonly query: string;
  readonly queryParams: readonly { readonly name: string; readonly value: string }[];
  readonly version: string;
  readonly host: string;
  readonly headers: readonly { readonly name: string; readonly value: string }[];
  readonly framing: { readonly kind: "none" } | { readonly kind: "content-length"; readonly length: number } | { readonly kind: "chunked" };
  readonly keepAlive: boolean;
  readonly body: { readonly length: number; readonly encoding: "utf-8" | "base64"; readonly content: string };
}

// fatal: a byte sequence that is not UTF-8 must fall to base64, not turn into U+FFFD.
// ignoreBOM: a byte order mark that arrived is shown, not swallowed.
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function describeBody(body: Buffer): Echo["body"] {
  try {
    return { length: body.length, encoding: "utf-8", content: UTF8.decode(body) };
  } catch {
    return { length: body.length, encoding: "base64", content: body.toString("base64") };
  }
}

export function describe(request: Request): Echo {
  const headers: { name: string; value: string }[] = [];
  for (let i = 0; i < request.fields.length; i += 2) headers.push({ name: request.fields[i]!, value: request.fields[i + 1]! });
  const f = request.framing;
  return {
    method: request.method,
    target: request.target,
    path: request.path,
    query: request.query,
    // application/x-www-form-urlencoded rules (WHATWG URL), the way HTML forms and most clients write a query.
    queryParams: [...new URLSearchParams(request.query)].map(([name, value]) => ({ name, value })),
    version: `HTTP/1.${request.minor}`,
    host: request.host,
    headers,
    framing: f.kind === "length" ? { kind: "content-length", length: f.length } : f,
    keepAlive: request.keepAlive,
    body: describeBody(request.body),
  };
}

/**
 * JSON of `wrap(the echo of request)`, for the lab's answers that hold the
 * echo: whole for a small body, and for a large one in pieces as the client
 * reads them, as the echo's own answer is (echo-body.ts). Rendered whole,
 * 1 MiB of control bytes is 6 MB of JSON held per client.
 */
export function echoJson(request: Request, wrap: (echo: object) => object): string | BodyStream {
  if (request.body.length <= ECHO_WHOLE_BYTES) return JSON.stringify(wrap(describe(request)));
  const { body: _empty, ...rest } = describe({ ...request, body: Buffer.alloc(0) });
  return echoPieces(rest, request.body, echoEncoding(request.body), "json", wrap);
}

const OFFERED: readonly Format[] = ["json", "yaml"];
// Content-Type is data here, never a wish: a body-less PURGE with Content-Type: text/plain is echoed, not refused.
const LENIENT = { contentType: "lenient" } as const;

function answer(request: Request): Response {
  // HEAD gets the header fields GET would get (RFC 9110 §9.3.2), Content-Length included:
  // so it is described as the GET it stands for, and the connection drops the body.
  const asked = request.method === "HEAD" ? { ...request, method: "GET" } : request;
  const format = chooseFormat(request, OFFERED, LENIENT);
  if (request.body.length <= ECHO_WHOLE_BYTES) {
    const echo = describe(asked);
    return { status: 200, headers: { "Content-Type": MEDIA_TYPES[format], Vary: VARY }, body: format === "json" ? JSON.stringify(echo) : echoYaml(echo) };
  }
  // A large body is echoed in pieces as the client reads them (echo-body.ts): never rendered whole.
  const { body: _empty, ...rest } = describe({ ...asked, body: Buffer.alloc(0) });
  const headers = { "Content-Type": MEDIA_TYPES[format], Vary: VARY };
  return { status: 200, headers, body: echoPieces(rest, request.body, echoEncoding(request.body), format) };
}

const nameValue = {
  type: "object",
  additionalProperties: false,
  required: ["name", "value"],
  properties: { name: { type: "string" }, value: { type: "string" } },
} as const;

export const echoSchema = {
  title: "Echo",
  description: "What the server received: the request as parsed, before any route looked at it",
  type: "object",
  additionalProperties: false,
  required: ["method", "target", "path", "query", "queryParams", "version", "host", "headers", "framing", "keepAlive", "body"],
  properties: {
    method: { type: "string", description: "Exactly as sent: methods are case-sensitive (RFC 9110 §9.1)" },
    target: { type: "string", description: "The request-target as sent (RFC 9112 §3.2)" },
    path: { type: "string", description: "The target's path, still percent-encoded; * for OPTIONS *" },
    query: { type: "string", description: "The text after the first ?, without it; empty when there is none" },
    queryParams: { type: "array", items: nameValue, description: "The query split into name/value pairs, decoded as a form would be (+ is a space), in order" },
    version: { type: "string", enum: ["HTTP/1.0", "HTTP/1.1"], description: "As handled: a higher HTTP/1.x minor is answered as HTTP/1.1 (RFC 9112 §2.3)" },
    host: { type: "string", description: "From an absolute-form target, else the Host field (RFC 9112 §3.2.2)" },
    headers: { type: "array", items: nameValue, description: "Every header field in arrival order, names lower-cased (they are case-insensitive), repeats kept" },
    framing: {
      description: "How the body was delimited, decided from the head (RFC 9112 §6.3)",
      oneOf: [
        { type: "object", additionalProperties: false, required: ["kind"], properties: { kind: { const: "none" } } },
        {
          type: "object",
          additionalProperties: false,
          required: ["kind", "length"],
          properties: { kind: { const: "content-length" }, length: { type: "integer", minimum: 0 } },
        },
        { type: "object", additionalProperties: false, required: ["kind"], properties: { kind: { const: "chunked" } } },
      ],
    },
    keepAlive: { type: "boolean", description: "Whether the connection stays open after this exchange (RFC 9112 §9.3)" },
    body: {
      type: "object",
      additionalProperties: false,
      required: ["length", "encoding", "content"],
      properties: {
        length: { type: "integer", minimum: 0, description: "In bytes, after removing the chunked coding" },
        encoding: { enum: ["utf-8", "base64"], description: "utf-8 when the bytes are valid UTF-8 (shown as text), else base64" },
        content: { type: "string" },
      },
    },
  },
} as const;

const ECHOED: RouteResponseDoc = {
  description: "What the server received, as JSON (default) or YAML (Accept: application/yaml); HEAD gets GET's header fields and no body",
  mediaTypes: JSON_OR_YAML,
  schema: echoSchema,
};

const responses = { 200: ECHOED, 406: { ...NOT_ACCEPTABLE, description: "Accept names no type this endpoint can produce (Content-Type never counts here)" } };

/** The echo's rows: any method, and answers that describe one request, so no cache keeps them (the cache policy). */
export function echoRoutes(): (Route & CacheDeclared)[] {
  return [
    {
      method: ANY_METHOD,
      path: "/api/echo",
      summary: "Any method (FOO, UPDATE, purge...): answered with what the server received, header fields in order, framing and body",
      handler: answer,
      cache: "no-store",
      responses,
    },
    {
      method: ANY_METHOD,
      path: "/api/echo/*rest",
      summary: "The same echo, at any path below /api/echo",
      handler: answer,
      cache: "no-store",
      params: { rest: { description: "Anything: one or more path segments, as sent", example: "any/path" } },
      responses,
    },
  ];
}
