// The documentation routes (the page, the OpenAPI document in JSON and YAML,
// the wire view of src/wire/), to be served in a table like any other route, under the
// same policies. The page and the document are generated once, when first
// asked for, from the table as the router serves it (these routes included,
// with what the policies enforce on each), so every route that is served is
// described, and nothing that is not.

import type { CacheDeclared } from "../policies/cache.js";
import { readFileSync } from "node:fs";
import { toYaml } from "../representation/yaml.js";
import { yamlDocumentOffLoop } from "../representation/yaml-thread.js";
import { cacheFields, notModified, strongEtag } from "../http/message/conditional.js";
import { problem } from "../http/message/problem.js";
import type { Request } from "../http/message/request.js";
import type { Response } from "../http/message/response.js";
import type { ServedRoute } from "../router/policy.js";
import type { Route } from "../router/route.js";
import { openApiDocument } from "./openapi.js";
import { buildPage } from "./page.js";
import { wireRoute, type WireOptions } from "../wire/route.js";

export interface DocsOptions {
  /** The wire view, unless it is turned off (WIRE_VIEW=0): then POST /api/wire is not served at all. */
  readonly wire?: WireOptions;
}

const TITLE = "startline";
/** The server's manifest (the repository's package.json); packages/startline's is the engine's alone. */
const SERVER_PACKAGE = "startline-server";

/** package.json's version: two directories up from src/docs/, three from dist/src/docs/. */
function packageVersion(): string {
  for (const up of ["../../package.json", "../../../package.json"]) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(up, import.meta.url), "utf8")) as { name?: string; version?: string };
      if (pkg.name === SERVER_PACKAGE && typeof pkg.version === "string") return pkg.version;
    } catch {
      // not at this depth
    }
  }
  return "0.0.0";
}

/** A fixed representation with a strong ETag, answering If-None-Match with 304. */
function fixed(type: string, body: string, headers: Readonly<Record<string, string>> = {}): (request: Request) => Response {
  const validated = { type, etag: strongEtag(body) };
  const full: Response = { status: 200, headers: { "Content-Type": type, ...cacheFields(validated), ...headers }, body };
  return (request) => notModified(request, validated) ?? full;
}

const ETAG_DOC = { ETag: "Changes when the server's route table does; If-None-Match gives 304" };

export interface Docs {
  /** The documentation routes, to be served with the rest of the table. */
  readonly routes: readonly Route[];
  /** Gives the table as served, from which the page and the OpenAPI document are built when first asked for; until then they answer 503. */
  publish(served: readonly ServedRoute[]): void;
}

/** The 404 of an app that serves this page: the router's, and where the routes are listed. */
export function notFoundPointingHere(request: Request): Response {
  return problem(404, {
    kind: "not-found",
    detail: `Nothing is served at ${request.path}. Check the path against the route table (GET / lists every route).`,
    instance: request.target,
  });
}

export function docsRoutes(options: DocsOptions): Docs {
  // Filled in by publish, once the whole table is served; the app publishes before it takes any request.
  let page: (request: Request) => Response = () => ({ status: 503 });
  let openapiJson: (request: Request) => Response = page;
  let openapiYaml: (request: Request) => Response | Promise<Response> = page;

  const docs: (Route & CacheDeclared)[] = [
    {
      method: "GET",
      path: "/",
      summary: "This page: every endpoint, a form to send requests, and the wire view",
      handler: (request) => page(request),
      responses: { 200: { description: "A self-contained HTML page (inline style and script, nothing loaded from elsewhere)", mediaTypes: ["text/html"], headers: ETAG_DOC }, 304: { description: "Not modified", headers: ETAG_DOC } },
    },
    {
      method: "GET",
      path: "/api/openapi.json",
      summary: "This API described as an OpenAPI 3.2 document, in JSON",
      handler: (request) => openapiJson(request),
      responses: { 200: { description: "The OpenAPI document", mediaTypes: ["application/json"], headers: ETAG_DOC }, 304: { description: "Not modified", headers: ETAG_DOC } },
    },
    {
      method: "GET",
      path: "/api/openapi.yaml",
      summary: "The same OpenAPI 3.2 document, in YAML",
      handler: (request) => openapiYaml(request),
      responses: { 200: { description: "The OpenAPI document", mediaTypes: ["application/yaml"], headers: ETAG_DOC }, 304: { description: "Not modified", headers: ETAG_DOC } },
    },
    ...(options.wire === undefined ? [] : [wireRoute(options.wire)]),
  ];

  function publish(all: readonly ServedRoute[]): void {
    // The document, the page and the texts are made when first asked for, from the table given here,
    // which never changes: every start (each worker, each replacement, each app a test makes) paid for
    // what few clients ask for, the document and the page alone some 15 ms warm and three times that in
    // a process just started. The JSON text and its ETag (some 800 KB written and hashed) take a few
    // milliseconds. The YAML is written from the JSON text on js-yaml's thread (yaml-thread.ts): it takes
    // js-yaml a tenth of a second warm and three times that in a process just started, which on the loop
    // would hold up every other request. Should the thread fail, the loop writes it, once: the same bytes.
    const document = () =>
      openApiDocument(all, {
        title: TITLE,
        version: packageVersion(),
        description:
          "An HTTP/1.1 server written from the bytes up, and the example JSON API it serves. Every path also answers OPTIONS (204 with Allow), " +
          "and HEAD wherever GET is served. UPDATE, a method of its own, is described under the Path Item's additionalOperations (OpenAPI 3.2).",
      });
    let json: string | undefined;
    const jsonText = () => (json ??= JSON.stringify(document(), null, 2));
    let jsonAnswer: ((request: Request) => Response) | undefined;
    openapiJson = (request) => (jsonAnswer ??= fixed("application/json", jsonText()))(request);
    let yaml: Promise<(request: Request) => Response> | undefined;
    openapiYaml = (request) => {
      const text = jsonText();
      yaml ??= yamlDocumentOffLoop(text).then(
        (written) => fixed("application/yaml", written),
        () => fixed("application/yaml", toYaml(JSON.parse(text))),
      );
      return yaml.then((answer) => answer(request));
    };
    let pageAnswer: ((request: Request) => Response) | undefined;
    page = (request) => {
      if (pageAnswer === undefined) {
        const built = buildPage(all, { title: TITLE, wire: options.wire !== undefined });
        pageAnswer = fixed("text/html; charset=utf-8", built.html, {
          "Content-Security-Policy": built.csp,
          "Referrer-Policy": "no-referrer",
        });
      }
      return pageAnswer(request);
    };
  }
  return { routes: docs, publish };
}
