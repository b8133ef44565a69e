// A Fastify 5 app on startline/node, through Fastify's serverFactory: the same
// routes, served by startline's engine (strict parsing, pipelined requests read
// and answered in order). Fastify routes node's own methods only, so this app
// gains speed, not UPDATE.
// Run: PORT=8080 node examples/fastify.mjs (fastify is this repository's
// devDependency; elsewhere, `npm install fastify startline`), then:
//   curl -i http://127.0.0.1:8080/hello/you
import Fastify from "fastify";
import { createServer } from "startline/node";

const app = Fastify({ serverFactory: (handler) => createServer(handler) });
app.get("/hello/:name", async (request) => ({ hello: request.params.name }));
app.post("/echo", async (request) => ({ got: request.body }));

const host = process.env.HOST ?? "127.0.0.1";
const address = await app.listen({ port: Number(process.env.PORT ?? 8080), host });
console.log(`listening on ${address}`);
