// A Koa 3 app on startline/node: Koa reads ctx.method, so UPDATE (which
// node:http refuses with a 400 before any handler runs) reaches it as sent.
// Run: PORT=8080 node examples/koa-update.mjs (koa is this repository's
// devDependency; elsewhere, `npm install koa startline`), then:
//   curl -i -X UPDATE http://127.0.0.1:8080/counter -d 5
import Koa from "koa";
import { createServer } from "startline/node";

let counter = 0;

/** The request's body as text, read from its stream (it arrives in pieces, as on node). */
async function text(req) {
  let body = "";
  req.setEncoding("utf8");
  for await (const piece of req) body += piece;
  return body;
}

const app = new Koa();
app.use(async (ctx) => {
  if (ctx.path !== "/counter") {
    ctx.status = 404;
    ctx.body = { error: `nothing at ${ctx.path}` };
    return;
  }
  if (ctx.method === "GET") {
    ctx.body = { counter };
  } else if (ctx.method === "UPDATE") {
    const by = Number(await text(ctx.req));
    if (!Number.isFinite(by)) ctx.throw(400, "send a number to add");
    counter += by;
    ctx.body = { counter };
  } else {
    ctx.status = 405;
    ctx.set("Allow", "GET, UPDATE");
  }
});

const host = process.env.HOST ?? "127.0.0.1";
const server = createServer(app.callback()).listen(Number(process.env.PORT ?? 8080), host, () => {
  console.log(`listening on http://${host}:${server.address().port}`);
});
