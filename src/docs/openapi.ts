// The OpenAPI document of a route table, generated once (when first asked
// for, src/docs/routes.ts) from the routes' own documentation fields
// (src/router/route.ts), so it cannot drift from what the server serves.
//
// It is an OpenAPI 3.2 document because 3.1 has no way to say "UPDATE": its
// Path Item has one fixed field per standard method and nothing else. 3.2
// adds `additionalOperations`, a map keyed by the method exactly as sent.
// Schemas are JSON Schema 2020-12 (3.1 and 3.2 use it as is), taken from the
// same objects the server validates requests with.

import type { ServedRoute } from "../router/policy.js";
import { ANY_METHOD, ANY_METHOD_ADVERTISED, type Route, type RouteResponseDoc } from "../router/route.js";

export interface OpenApiOptions {
  readonly title: string;
  readonly version: string;
  readonly description?: string;
}

type Json = Record<string, unknown>;

export const OPENAPI_VERSION = "3.2.0";

/** OpenAPI 3.2 Path Item fixed fields: the methods that get one. Any other method goes in additionalOperations. */
const FIXED_FIELDS: Readonly<Record<string, string>> = {
  GET: "get",
  PUT: "put",
  POST: "post",
  DELETE: "delete",
  OPTIONS: "options",
  HEAD: "head",
  PATCH: "patch",
  TRACE: "trace",
  QUERY: "query",
};

export const PROBLEM_TYPE = "application/problem+json";

/** RFC 9457 as this server writes it (src/http/message/problem.ts), with its extension members. */
export const problemSchema = {
  title: "Problem",
  description: "RFC 9457 problem details: every error this server sends",
  type: "object",
  required: ["type", "title", "status", "detail", "instance"],
  properties: {
    type: { type: "string", format: "uri-reference", description: "Stable per kind of error, e.g. /problems/not-found" },
    title: { type: "string" },
    status: { type: "integer", minimum: 100, maximum: 599 },
    detail: { type: "string", description: "What went wrong with this request, and what to change" },
    instance: { type: "string", description: "The request target" },
    code: { type: "string", description: "Protocol errors: the parser's name for the rule that was broken" },
    offset: { type: "integer", minimum: 0, description: "Protocol errors: the byte where it was found, counted from the start of the request" },
    errors: { type: "array", items: { type: "string" }, description: "422: every rule the body breaks" },
    parameter: { type: "string", description: "400 invalid-query and invalid-parameter: the parameter at fault (limit, after; the lab's code, n, url...)" },
    allowed: { type: "string", description: "400 invalid-parameter: what the parameter takes, e.g. \"a whole number from 1 to 20\"" },
  },
} as const;

/** The path in OpenAPI's template syntax: /post/:id becomes /post/{id}, and /echo/*rest /echo/{rest}. */
export function templatePath(route: Route): string {
  return route.path.replace(/\/[:*]([^/]+)/g, "/{$1}");
}

/** Names of the path's parameters, the `*name` wildcard included. */
export function pathParams(route: Route): string[] {
  return [...route.path.matchAll(/\/[:*]([^/]+)/g)].map((m) => m[1]!);
}

/**
 * The methods a route is documented under. OpenAPI has no "any method": a
 * route that serves any method is written once per method its Allow
 * advertises, but HEAD and OPTIONS, which the document's description covers
 * for every path, and its description says that any other token works too.
 */
export function documentedMethods(route: Route): readonly string[] {
  if (route.method !== ANY_METHOD) return [route.method];
  return ANY_METHOD_ADVERTISED.filter((m) => m !== "HEAD" && m !== "OPTIONS");
}

const ANY_METHOD_NOTE =
  "Any method token is served here, custom and lower-case ones included (UPDATE, PURGE, foo): " +
  "OpenAPI cannot say \"any method\", so the common ones are listed. OPTIONS answers 204 with Allow naming those.";

const WILDCARD_NOTE = " OpenAPI's template stands for one segment; this one takes any number of them (a/b/c), as sent.";

/** Where an operation sits in its Path Item: ["get"] or ["additionalOperations", "UPDATE"]. */
export function operationKey(method: string): readonly string[] {
  const fixed = FIXED_FIELDS[method];
  return fixed === undefined ? ["additionalOperations", method] : [fixed];
}

/** Keywords whose values are data, not subschemas: never searched for named schemas. */
const DATA_KEYWORDS = new Set(["const", "enum", "default", "examples", "example"]);

/**
 * Collects named schemas into components: a schema with a `title` (or an
 * `$id`) becomes components.schemas[name] and is referred to by $ref, so a
 * Post nested in a list and in a 201 body is written once.
 */
class Components {
  readonly schemas: Record<string, unknown> = {};
  private readonly names = new Map<object, string>();

  /** The schema as it goes in the document: a $ref when it is named, else a copy with named parts referenced. */
  use(schema: object): unknown {
    const name = this.register(schema);
    return name === undefined ? this.copy(schema) : { $ref: `#/components/schemas/${name}` };
  }

  private register(schema: object): string | undefined {
    const known = this.names.get(schema);
    if (known !== undefined) return known;
    const s = schema as Json;
    const base = typeof s.title === "string" ? s.title : typeof s.$id === "string" ? pascal(s.$id) : undefined;
    if (base === undefined) return undefined;
    // Component names are limited to ^[a-zA-Z0-9.\-_]+$ (OpenAPI 3.2, Components Object).
    const clean = base.replace(/[^A-Za-z0-9._-]/g, "_");
    let name = clean;
    for (let n = 2; name in this.schemas; n++) name = `${clean}${n}`;
    this.names.set(schema, name);
    this.schemas[name] = {}; // reserved before copying, for schemas that refer to themselves
    // A relative $id would move the base URI that "#/components/..." references resolve against.
    const { $id: _id, ...rest } = s;
    this.schemas[name] = this.copy(rest);
    return name;
  }

  private copy(value: unknown): unknown {
    if (Array.isArray(value)) return value.map((v) => this.copy(v));
    if (value === null || typeof value !== "object") return value;
    const out: Json = {};
    for (const [key, v] of Object.entries(value)) {
      if (DATA_KEYWORDS.has(key)) out[key] = structuredClone(v);
      else if (key === "properties" || key === "$defs" || key === "patternProperties" || key === "dependentSchemas") {
        // A map of names to schemas: a property may be called "title" without being one.
        out[key] = Object.fromEntries(Object.entries(v as Json).map(([k, sub]) => [k, this.subschema(sub)]));
      } else if (v !== null && typeof v === "object" && !Array.isArray(v)) out[key] = this.subschema(v);
      else if (Array.isArray(v)) out[key] = v.map((item) => (item !== null && typeof item === "object" ? this.subschema(item) : item));
      else out[key] = v;
    }
    return out;
  }

  private subschema(value: unknown): unknown {
    if (value === null || typeof value !== "object" || Array.isArray(value)) return this.copy(value);
    return this.use(value);
  }
}

function pascal(id: string): string {
  return id.replace(/(^|[^A-Za-z0-9])([A-Za-z0-9])/g, (_m, _sep: string, c: string) => c.toUpperCase());
}

function operationId(method: string, path: string, taken: Set<string>): string {
  const base = `${method.toLowerCase()}${path.replace(/[^A-Za-z0-9]+/g, "_")}`.replace(/_+$/, "");
  let id = base;
  for (let n = 2; taken.has(id); n++) id = `${base}_${n}`;
  taken.add(id);
  return id;
}

const isJsonType = (type: string) => type === "application/json" || type.endsWith("+json");

function example(mediaType: string, text: string): unknown {
  if (!isJsonType(mediaType)) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function headerObjects(headers: Readonly<Record<string, string>>): Json {
  return Object.fromEntries(Object.entries(headers).map(([name, description]) => [name, { description, schema: { type: "string" } }]));
}

/** The fields the route's policies add to its successful answers. */
function successHeaders(route: ServedRoute): Record<string, string> {
  return Object.assign({}, ...route.policyDocs.map((policy) => policy.successHeaders ?? {}));
}

const DEFAULT_ERROR =
  "Any other error: 400 for a malformed request (`code` and `offset` name the rule and the byte), 404 and 405 (with Allow) from routing, " +
  "408, 413, 414, 431 for limits and time-outs, 500 for a bug (no details sent), 501, 505.";

function responses(route: ServedRoute, components: Components): Json {
  const docs: Record<string, RouteResponseDoc> = {};
  for (const [status, doc] of Object.entries(route.responses ?? { 200: { description: route.summary } })) docs[status] = doc;
  // The answers the route's policies give for it (a 401, a 415), where the route does not word them itself.
  for (const policy of route.policyDocs) for (const [status, doc] of Object.entries(policy.responses ?? {})) docs[status] ??= doc;
  const out: Json = {};
  const added = successHeaders(route);
  for (const [status, doc] of Object.entries(docs)) {
    const error = Number(status) >= 400;
    const headers = { ...doc.headers, ...(Number(status) < 300 ? added : {}) };
    const types = doc.mediaTypes ?? (error ? [PROBLEM_TYPE] : []);
    const schema = doc.schema ?? (error ? problemSchema : undefined);
    out[status] = {
      description: doc.description,
      ...(Object.keys(headers).length === 0 ? {} : { headers: headerObjects(headers) }),
      ...(types.length === 0 ? {} : { content: Object.fromEntries(types.map((t) => [t, schema === undefined ? {} : { schema: components.use(schema) }])) }),
    };
  }
  out.default = { description: DEFAULT_ERROR, content: { [PROBLEM_TYPE]: { schema: components.use(problemSchema) } } };
  return out;
}

function operation(route: ServedRoute, method: string, components: Components, ids: Set<string>): Json {
  const notes: string[] = route.method === ANY_METHOD ? [ANY_METHOD_NOTE] : [];
  for (const policy of route.policyDocs) if (policy.note !== undefined) notes.push(policy.note);
  const schemes = route.policyDocs.flatMap((policy) => (policy.requires === undefined ? [] : [policy.requires.scheme.name]));
  // Every scheme a policy requires, together (OpenAPI: the entries of one Security Requirement Object all apply).
  const security: Json[] | undefined = schemes.length === 0 ? undefined : [Object.fromEntries(schemes.map((name) => [name, []]))];
  const discouraged = route.policyDocs.some((policy) => policy.discouraged === true);
  const wildcard = /\/\*([^/]+)$/.exec(route.path)?.[1];
  const params = pathParams(route).map((name) => {
    const doc = route.params?.[name];
    const note = name === wildcard ? WILDCARD_NOTE : "";
    return {
      name,
      in: "path",
      required: true,
      ...(doc === undefined ? {} : { description: doc.description + note }),
      schema: doc?.schema === undefined ? { type: "string" } : components.use(doc.schema),
      ...(doc?.example === undefined ? {} : { example: doc.example }),
    };
  });
  for (const [name, doc] of Object.entries(route.query ?? {})) {
    params.push({
      name,
      in: "query",
      required: doc.required === true,
      description: doc.description,
      schema: doc.schema === undefined ? { type: "string" } : components.use(doc.schema),
      ...(doc.example === undefined ? {} : { example: doc.example }),
    });
  }
  const request = route.request;
  return {
    operationId: operationId(method, route.path, ids),
    summary: route.summary,
    ...(notes.length === 0 ? {} : { description: notes.join(" ") }),
    tags: [route.group ?? "server"],
    ...(discouraged ? { deprecated: true } : {}),
    ...(security === undefined ? {} : { security }),
    ...(params.length === 0 ? {} : { parameters: params }),
    ...(request === undefined
      ? {}
      : {
          requestBody: {
            description: request.description,
            required: true,
            content: Object.fromEntries(
              request.mediaTypes.map((type, i) => [
                type,
                {
                  ...(request.schema === undefined ? {} : { schema: components.use(request.schema) }),
                  ...(request.example === undefined || i > 0 ? {} : { example: example(type, request.example) }),
                },
              ]),
            ),
          },
        }),
    responses: responses(route, components),
  };
}

/**
 * The OpenAPI 3.2 document of `routes`, as JSON data, to be written with JSON.stringify (which leaves out
 * a member whose value is undefined); its YAML form is written from that text (src/docs/routes.ts).
 */
export function openApiDocument(routes: readonly ServedRoute[], options: OpenApiOptions): Json {
  const components = new Components();
  const securitySchemes: Json = {};
  for (const route of routes) for (const policy of route.policyDocs) if (policy.requires !== undefined) securitySchemes[policy.requires.scheme.name] = policy.requires.scheme.definition;
  const ids = new Set<string>();
  const paths: Record<string, Json> = {};
  const versions: string[] = [];
  const declared = new Set(routes.filter((r) => r.method !== ANY_METHOD).map((r) => `${r.method} ${templatePath(r)}`));
  for (const route of routes) {
    const template = templatePath(route);
    const item = (paths[template] ??= {});
    for (const method of documentedMethods(route)) {
      // A method the path declares a route of its own for is documented by that route.
      if (route.method === ANY_METHOD && declared.has(`${method} ${template}`)) continue;
      const [field, extra] = operationKey(method);
      const op = operation(route, method, components, ids);
      if (extra === undefined) item[field!] = op;
      else ((item.additionalOperations ??= {}) as Json)[extra] = op;
    }
    const tag = route.group ?? "server";
    if (!versions.includes(tag)) versions.push(tag);
  }
  const doc = {
    openapi: OPENAPI_VERSION,
    info: {
      title: options.title,
      version: options.version,
      ...(options.description === undefined ? {} : { description: options.description }),
      license: { name: "MIT", identifier: "MIT" },
    },
    tags: versions.map((name) => ({
      name,
      description: name === "server" ? "Outside the versioned API: the page, this document, the wire view, operator counts" : `API version ${name}`,
    })),
    paths,
    components: {
      schemas: components.schemas,
      ...(Object.keys(securitySchemes).length === 0 ? {} : { securitySchemes }),
    },
  };
  return doc;
}
