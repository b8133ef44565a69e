// Content negotiation, written once for every endpoint (docs/api.md,
// section 5): JSON by default, YAML where offered. The client chooses with
// Accept (q-values honoured) or, on a request without a body, with its own
// Content-Type, as rows 8 and 9 of docs/api.md show. An Accept that names a
// specific type wins; an absent Accept or "*/*" defers to Content-Type; else
// JSON. If the only choice the client stated cannot be produced: 406.

import { toYaml } from "./yaml.js";
import { headerValue, type Request } from "../http/message/request.js";
import { fail } from "../http/message/problem.js";
import { matchLevel, mediaType, parseAccept } from "../http/message/media.js";
import type { FieldValue, Response } from "../http/message/response.js";

export type Format = "json" | "yaml";

export const MEDIA_TYPES: Readonly<Record<Format, string>> = {
  json: "application/json",
  yaml: "application/yaml",
};

/** Names clients use for YAML (RFC 9512 registered application/yaml; the others are older habits). */
const YAML_ALIASES = ["application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml"];

function formatOf(type: string): Format | undefined {
  if (type === "application/json") return "json";
  if (YAML_ALIASES.includes(type)) return "yaml";
  return undefined;
}

/** Every response that was negotiated says what it varied on (RFC 9110 §12.5.5). */
export const VARY = "Accept, Content-Type";

function fromAccept(accept: string, offered: readonly Format[]): Format | undefined | "none" {
  const ranges = parseAccept(accept);
  if (ranges.length === 0 || ranges.every((r) => r.type === "*/*")) return undefined;
  let best: { format: Format; q: number; order: number } | undefined;
  for (const format of offered) {
    const names = format === "yaml" ? YAML_ALIASES : [MEDIA_TYPES[format]];
    // The most specific range that matches decides the weight (RFC 9110 §12.5.1).
    let chosen: { level: number; q: number; order: number } | undefined;
    for (const range of ranges) {
      for (const name of names) {
        const level = matchLevel(range.type, name);
        if (level > 0 && (chosen === undefined || level > chosen.level)) chosen = { level, q: range.q, order: range.order };
      }
    }
    if (chosen === undefined || chosen.q === 0) continue;
    if (best === undefined || chosen.q > best.q || (chosen.q === best.q && chosen.order < best.order)) {
      best = { format, q: chosen.q, order: chosen.order };
    }
  }
  return best?.format ?? "none";
}

export interface NegotiateOptions {
  /**
   * "strict" (the default): a body-less request's Content-Type that names a
   * format not offered is a 406. "lenient": it is ignored, for resources
   * where Content-Type is data to show rather than a wish (the echo).
   */
  readonly contentType?: "strict" | "lenient";
}

/** Choose the representation, or throw a 406 problem naming what is available. */
export function chooseFormat(request: Request, offered: readonly Format[], options: NegotiateOptions = {}): Format {
  const available = offered.map((f) => MEDIA_TYPES[f]).join(", ");
  const accept = headerValue(request, "accept");
  if (accept !== undefined) {
    const choice = fromAccept(accept, offered);
    if (choice === "none") {
      fail(406, {
        kind: "not-acceptable",
        detail: `Nothing here matches Accept: ${accept.slice(0, 100)}. This resource is available as ${available}.`,
        instance: request.target,
        headers: { Vary: VARY },
      });
    }
    if (choice !== undefined) return choice;
  }
  // A request without a body has no content to describe: its Content-Type states a wish.
  if (request.body.length === 0) {
    const raw = headerValue(request, "content-type");
    if (raw !== undefined) {
      const type = mediaType(raw);
      const format = type === undefined ? undefined : formatOf(type);
      const producible = format !== undefined && offered.includes(format);
      if (!producible && options.contentType === "lenient") return offered[0]!;
      if (!producible) {
        fail(406, {
          kind: "not-acceptable",
          detail: `The request asks for ${raw.slice(0, 100)} (via Content-Type), which this resource cannot produce. It is available as ${available}.`,
          instance: request.target,
          headers: { Vary: VARY },
        });
      }
      return format;
    }
  }
  return offered[0]!;
}

/** Serialize `value` in the negotiated format. */
export function represent(
  request: Request,
  status: number,
  value: unknown,
  offered: readonly Format[],
  headers?: Readonly<Record<string, FieldValue>>,
  options?: NegotiateOptions,
): Response {
  const format = chooseFormat(request, offered, options);
  const body = format === "json" ? JSON.stringify(value) : toYaml(value);
  return { status, headers: { "Content-Type": MEDIA_TYPES[format], Vary: VARY, ...headers }, body };
}
