// The route table compiled once into a lookup: a Map for paths without
// parameters (one hash lookup for most requests) and a segment tree for the rest.
// In the tree a static segment wins over a `:param`, and a trailing `*rest`
// takes whatever the more specific patterns leave.

import { isToken } from "../http/parse/byte-classes.js";
import { ANY_METHOD, ANY_METHOD_ADVERTISED, type Params, type Route } from "./route.js";

/** Every method served at one path, with the Allow value precomputed (RFC 9110 §10.2.1). */
export interface Resource {
  readonly pattern: string;
  readonly methods: ReadonlyMap<string, Route>;
  readonly allow: string;
}

export type Match =
  | { readonly kind: "found"; readonly route: Route; readonly params: Params; readonly resource: Resource }
  | { readonly kind: "options"; readonly resource: Resource }
  | { readonly kind: "method-not-allowed"; readonly resource: Resource }
  | { readonly kind: "not-found" }
  | { readonly kind: "bad-path"; readonly detail: string };

interface Node {
  readonly children: Map<string, Node>;
  param: { readonly name: string; readonly node: Node } | null;
  /** A last `*name` segment: the resource that takes every longer path below this node. */
  wildcard: { readonly name: string; resource: Resource | null } | null;
  resource: Resource | null;
}

export interface CompiledRoutes {
  lookup(method: string, path: string): Match;
  /** Every method served anywhere, for `OPTIONS *`. */
  readonly allMethods: string;
  readonly routes: readonly Route[];
}

const NO_PARAMS: Params = Object.freeze({});

function newNode(): Node {
  return { children: new Map(), param: null, wildcard: null, resource: null };
}

/** GET implies HEAD (RFC 9110 §9.3.2); OPTIONS is answered for every resource; "any method" is advertised as the common ones. */
function allowOf(methods: ReadonlyMap<string, Route>): string {
  const names = new Set(methods.keys());
  if (names.delete(ANY_METHOD)) for (const name of ANY_METHOD_ADVERTISED) names.add(name);
  if (names.has("GET")) names.add("HEAD");
  names.add("OPTIONS");
  return [...names].sort().join(", ");
}

export function compileRoutes(routes: readonly Route[]): CompiledRoutes {
  const byPattern = new Map<string, Map<string, Route>>();
  for (const route of routes) {
    // RFC 9110 §9.1: method = token, by the parser's own byte classes.
    if (!isToken(route.method)) throw new Error(`Route method ${JSON.stringify(route.method)} is not a token`);
    if (!route.path.startsWith("/")) throw new Error(`Route path ${JSON.stringify(route.path)} must start with "/"`);
    const star = route.path.indexOf("/*");
    if (star !== -1 && (route.path.indexOf("/", star + 1) !== -1 || route.path.length === star + 2)) {
      throw new Error(`Route path ${JSON.stringify(route.path)}: a *name segment must be the last one, and have a name`);
    }
    const pattern = route.path;
    const methods = byPattern.get(pattern) ?? new Map<string, Route>();
    if (methods.has(route.method)) throw new Error(`Route ${route.method} ${pattern} is declared twice`);
    methods.set(route.method, route);
    byPattern.set(pattern, methods);
  }

  const exact = new Map<string, Resource>();
  const root = newNode();
  for (const [pattern, methods] of byPattern) {
    const resource: Resource = { pattern, methods, allow: allowOf(methods) };
    if (!pattern.includes("/:") && !pattern.includes("/*")) {
      exact.set(pattern, resource);
      continue;
    }
    let node = root;
    for (const segment of pattern.split("/").slice(1)) {
      if (segment.startsWith("*")) {
        const name = segment.slice(1);
        if (node.wildcard !== null && node.wildcard.name !== name) {
          throw new Error(`Routes disagree on the wildcard name at ${pattern}: *${node.wildcard.name} or *${name}`);
        }
        node.wildcard ??= { name, resource: null };
        node.wildcard.resource = resource;
        break; // checked above: it is the last segment
      }
      if (segment.startsWith(":")) {
        const name = segment.slice(1);
        if (node.param !== null && node.param.name !== name) {
          throw new Error(`Routes disagree on the parameter name at ${pattern}: :${node.param.name} or :${name}`);
        }
        node.param ??= { name, node: newNode() };
        node = node.param.node;
      } else {
        let child = node.children.get(segment);
        if (child === undefined) node.children.set(segment, (child = newNode()));
        node = child;
      }
    }
    if (!pattern.includes("/*")) node.resource = resource;
  }

  const allMethods = allowOf(new Map(routes.map((r) => [r.method, r])));

  /**
   * The matches of paths without parameters, made once per resource and
   * method: most requests are answered without making a Match. Only methods
   * the resource serves (and HEAD) are kept, so a client sending made-up
   * methods cannot grow it.
   */
  const exactMatches = new Map<Resource, Map<string, Match>>();
  function chooseExact(resource: Resource, method: string): Match {
    let byMethod = exactMatches.get(resource);
    const known = byMethod?.get(method);
    if (known !== undefined) return known;
    const match = choose(resource, method, NO_PARAMS);
    if (resource.methods.has(method) || method === "HEAD") {
      if (byMethod === undefined) exactMatches.set(resource, (byMethod = new Map()));
      byMethod.set(method, Object.freeze(match));
    }
    return match;
  }

  function choose(resource: Resource, method: string, params: Params): Match {
    // The method's own route; for HEAD, GET's (RFC 9110 §9.3.2); then "any method", except for OPTIONS, which is answered here.
    const route =
      resource.methods.get(method) ??
      (method === "HEAD" ? resource.methods.get("GET") : undefined) ??
      (method === "OPTIONS" ? undefined : resource.methods.get(ANY_METHOD));
    if (route !== undefined) return { kind: "found", route, params, resource };
    if (method === "OPTIONS") return { kind: "options", resource };
    return { kind: "method-not-allowed", resource };
  }

  /**
   * The last route found, by method and path: most traffic asks for the
   * same thing again (a health check, a client polling a resource), and
   * comparing two short strings costs less than the hash lookups of
   * chooseExact, or splitting a path with parameters and walking the tree.
   * The table never changes, so neither does the answer (frozen, its
   * parameters too, as it is handed out again).
   */
  let lastPath = "";
  let lastMethod = "";
  let lastFound: Match | null = null;

  function lookup(method: string, path: string): Match {
    if (lastFound !== null && path === lastPath && method === lastMethod) return lastFound;
    const hit = exact.get(path);
    if (hit !== undefined) {
      const match = chooseExact(hit, method);
      if (match.kind === "found") {
        lastPath = path;
        lastMethod = method;
        lastFound = match;
      }
      return match;
    }
    const segments = path.split("/");
    let node = root;
    let params: Record<string, string> | null = null;
    // The deepest wildcard passed on the way down: where a dead end falls back to.
    let fallback: { readonly node: Node; readonly from: number; readonly params: Record<string, string> | null } | null = null;
    for (let i = 1; i < segments.length; i++) {
      if (node.wildcard !== null) fallback = { node, from: i, params: params === null ? null : { ...params } };
      const segment = segments[i]!;
      const child = node.children.get(segment);
      if (child !== undefined) {
        node = child;
      } else if (node.param !== null && segment !== "") {
        // Most segments hold no escape, and decoding one would only copy it.
        let value = segment;
        if (segment.includes("%")) {
          try {
            value = decodeURIComponent(segment);
          } catch {
            return { kind: "bad-path", detail: badSegment(segment) };
          }
        }
        (params ??= {})[node.param.name] = value;
        node = node.param.node;
      } else {
        return deadEnd(fallback, segments, method);
      }
    }
    if (node.resource === null) return deadEnd(fallback, segments, method);
    if (params === null) return choose(node.resource, method, NO_PARAMS);
    const match = choose(node.resource, method, Object.freeze(params));
    if (match.kind === "found") {
      lastPath = path;
      lastMethod = method;
      lastFound = Object.freeze(match);
    }
    return match;
  }

  /** Where a path leads nowhere: the deepest wildcard passed on the way down takes the rest of it, or nothing matches. */
  function deadEnd(fallback: { readonly node: Node; readonly from: number; readonly params: Record<string, string> | null } | null, segments: readonly string[], method: string): Match {
    if (fallback === null) return { kind: "not-found" };
    const wildcard = fallback.node.wildcard!;
    const rest = segments.slice(fallback.from).join("/");
    return choose(wildcard.resource!, method, { ...fallback.params, [wildcard.name]: rest });
  }

  return { lookup, allMethods, routes };
}

/**
 * Why a path segment could not be decoded, and how to write it: decodeURIComponent
 * refuses both a "%" that starts no escape (RFC 3986 §2.1: "%" HEXDIG HEXDIG) and
 * escapes whose bytes are not UTF-8, and only the first is malformed.
 */
function badSegment(segment: string): string {
  const stray = /%(?![0-9A-Fa-f]{2})/.exec(segment);
  if (stray !== null) {
    return `The path segment "${segment}" has a "%" at position ${stray.index + 1} that is not followed by two hex digits (RFC 3986 §2.1). Send a literal "%" as %25.`;
  }
  return `The path segment "${segment}" decodes to bytes that are not UTF-8. Percent-encode each character as its UTF-8 bytes (é is %C3%A9).`;
}
