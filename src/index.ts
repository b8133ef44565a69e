// startline as a library: `import { createServer, createRouter } from "startline"`.
//
// This is the whole public surface, kept small on purpose: an HTTP/1.1 server
// on node:net (or node:tls), a route table that takes any method token, plain
// data for requests and responses, RFC 9457 problem helpers, and inject() to
// run requests through the real connection code without a port. The JSON API
// in src/api/ is built on exactly these, and nothing else from src/http or
// src/router is promised. docs/library.md explains each with an example.

// ---- Serving ----
export { createServer } from "./http/connection/server.js";
export type { HttpServer, ServerOptions, TlsFiles } from "./http/connection/server.js";
export type { ParserLimits } from "./http/parse/parser.js";
export type { Exchange } from "./http/connection/options.js";
export type { Admission, Handler, Service } from "./http/connection/service.js";

// ---- Routing ----
export { createRouter } from "./router/router.js";
export type { Router } from "./router/router.js";
export { ANY_METHOD } from "./router/route.js";
export type { Params, Route, RouteHandler, RouteParamDoc, RouteRequestDoc, RouteResponseDoc } from "./router/route.js";

// ---- Requests and responses ----
export { headerValue } from "./http/message/request.js";
export type { Framing, Request, RequestHead } from "./http/message/request.js";
// A body may be a string, bytes, or an async iterable of them (BodyStream), sent
// with chunked framing as its pieces come.
export type { BodyStream, FieldValue, Response } from "./http/message/response.js";

// ---- Errors (RFC 9457 application/problem+json) ----
export { fail, HttpError, problem } from "./http/message/problem.js";
export type { Problem, ProblemInit } from "./http/message/problem.js";

// ---- Testing without a port ----
export { inject } from "./http/connection/inject.js";
export type { InjectOptions, InjectResult } from "./http/connection/inject.js";
