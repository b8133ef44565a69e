// startline/node: node:http's server interface on the startline engine, for
// an existing Express, Koa or Fastify app (or a bare listener):
// `import { createServer } from "startline/node"` where the app had
// `import { createServer } from "node:http"`. docs/library.md says how to
// move an app over and what differs from node:http.

export { createServer, Server } from "./server.js";
export type { NodeServerOptions, RequestListener } from "./server.js";
export { IncomingRequest } from "./request.js";
export { ServerResponseOnEngine } from "./response.js";
