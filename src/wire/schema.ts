// JSON Schema of what POST /api/wire answers (route.ts builds it):
// published in the OpenAPI document, and checked against real answers in the tests.

import { sizeText } from "./budget.js";
import { PAST_LIMIT_SHOWN } from "./requests.js";

const offset = { type: "integer", minimum: 0 } as const;

const wirePartSchema = {
  title: "WirePart",
  description: "One part of a message, with its byte range [start, end) in the stream",
  type: "object",
  additionalProperties: false,
  required: ["kind", "label", "start", "end", "text"],
  properties: {
    kind: {
      enum: ["empty-line", "request-line", "field", "blank-line", "body", "chunk-size", "chunk-data", "chunk-end", "last-chunk", "trailer", "status-line", "incomplete", "unread", "omitted"],
      description: "omitted: a stretch left out whole because the answer's budget was spent (its text is empty)",
    },
    label: { type: "string" },
    start: offset,
    end: offset,
    text: { type: "string", description: "The bytes, line ending included: head lines as Latin-1, bodies as UTF-8; only the first ones when `omitted` is set" },
    note: { type: "string", description: "What the parser made of the part" },
    error: { const: true, description: "The protocol error was found in this part" },
    omitted: {
      ...offset,
      description: `Bytes at the end of the part that \`text\` leaves out: the answer's budget was spent, or (\`request.unread\` past the request limit) they follow its first ${sizeText(PAST_LIMIT_SHOWN)}`,
    },
  },
} as const;

const wireRequestSchema = {
  title: "WireRequest",
  type: "object",
  additionalProperties: false,
  required: ["start", "end", "state", "parts"],
  properties: {
    start: offset,
    end: offset,
    state: {
      enum: ["complete", "error", "incomplete", "refused"],
      description:
        "complete: read whole and run; error: broke a protocol rule (see `request.error`); incomplete: the input ended first; " +
        "refused: answered from its head alone, as its route does not take that body (415, 413): the body is never read and the connection closes",
    },
    method: { type: "string" },
    target: { type: "string" },
    parts: { type: "array", items: wirePartSchema },
    framing: {
      type: "object",
      additionalProperties: false,
      required: ["kind", "reason"],
      properties: { kind: { enum: ["content-length", "chunked", "none"] }, length: offset, reason: { type: "string" } },
    },
    keepAlive: {
      type: "object",
      additionalProperties: false,
      required: ["value", "reason"],
      properties: { value: { type: "boolean" }, reason: { type: "string" } },
    },
    notRun: { type: "string", description: "Why this request got no turn: the answer's budget was spent before it (listed in `cut.requestsNotRun`)" },
  },
} as const;

const wireErrorSchema = {
  title: "WireError",
  description: "The first rule the request bytes broke, as the parser reported it",
  type: "object",
  additionalProperties: false,
  required: ["code", "status", "title", "rule", "detail", "offset", "request", "offsetInRequest"],
  properties: {
    code: { type: "string" },
    status: { type: "integer" },
    title: { type: "string" },
    rule: { type: "string", description: "Where the rule is written, e.g. RFC 9112 §5.1" },
    detail: { type: "string" },
    offset: { ...offset, description: "Byte offset in the whole input" },
    request: { ...offset, description: "Which request (from 0) broke it" },
    offsetInRequest: { ...offset, description: "Byte offset from the start of that request, as the problem body's `offset`" },
  },
} as const;

const wireResponseSchema = {
  title: "WireResponse",
  type: "object",
  additionalProperties: false,
  required: ["start", "end", "status", "statusLine", "answers", "fields", "parts"],
  properties: {
    start: offset,
    end: offset,
    status: { type: "integer" },
    statusLine: { type: "string" },
    answers: { anyOf: [offset, { type: "null" }], description: "The request it answers (from 0); null for an interim 1xx" },
    fields: {
      type: "array",
      items: { type: "object", additionalProperties: false, required: ["name", "value"], properties: { name: { type: "string" }, value: { type: "string" } } },
    },
    parts: { type: "array", items: wirePartSchema },
  },
} as const;

const wireCutSchema = {
  title: "WireCut",
  description: "What the answer leaves out: to stay within its budget, or past the requests one body may hold",
  type: "object",
  additionalProperties: false,
  required: ["budget", "detail", "requestsNotRun", "pastRequestLimit", "requestBytesNotShown", "responseBytesNotShown", "rawBytesNotShown"],
  properties: {
    budget: { ...offset, description: "Most bytes of JSON one answer holds" },
    detail: { type: "string", description: "What was cut, for people" },
    requestsNotRun: { type: "array", items: offset, description: "Requests (from 0) the parser accepted but that were not run: their turn came after the budget was spent" },
    pastRequestLimit: {
      anyOf: [offset, { type: "null" }],
      description:
        "Where the first request past the most one body may hold (the request body's description says how many) begins, as a byte offset in the input: the run stopped at its head, " +
        "and neither it nor anything after it was run (`request.unread` holds those bytes); null when the body holds no more than that",
    },
    requestBytesNotShown: { ...offset, description: "Bytes of the input whose text the parts leave out" },
    responseBytesNotShown: { ...offset, description: "Bytes the server wrote whose text the parts leave out" },
    rawBytesNotShown: { ...offset, description: "Bytes the server wrote that `response.raw` leaves out" },
  },
} as const;

export const wireViewSchema = {
  title: "WireView",
  description: "The request as the parser read it and the response as the server wrote it, part by part, with byte offsets",
  type: "object",
  additionalProperties: false,
  required: ["request", "response", "cut"],
  properties: {
    request: {
      type: "object",
      additionalProperties: false,
      required: ["bytes", "requests", "error", "unread"],
      properties: {
        bytes: offset,
        requests: { type: "array", items: wireRequestSchema },
        error: { anyOf: [wireErrorSchema, { type: "null" }] },
        unread: {
          anyOf: [wirePartSchema, { type: "null" }],
          description:
            "Bytes the server never read (after a protocol error, a request that closes the connection, or one refused from its head), " +
            `or the bytes from the head of a request past the most one body may hold, where the run stopped (none of them run; its text at most their first ${sizeText(PAST_LIMIT_SHOWN)}); or null`,
        },
      },
    },
    response: {
      type: "object",
      additionalProperties: false,
      required: ["bytes", "raw", "responses"],
      properties: {
        bytes: { ...offset, description: "How many bytes the server wrote (for the requests that ran), shown or not" },
        raw: { type: "string", description: "The bytes the server wrote, as UTF-8 text: all of them, or the first ones when `cut.rawBytesNotShown` is not 0" },
        responses: { type: "array", items: wireResponseSchema },
      },
    },
    cut: { anyOf: [wireCutSchema, { type: "null" }] },
  },
} as const;
