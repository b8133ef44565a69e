// A 413 says whose limit it met and whether it can be raised: the server's
// limit names the setting that raises it (the binary's MAX_BODY_BYTES, which
// only the app knows: src/http is told the words, it names no setting), and a
// resource's own smaller limit (the facts' 4 KiB) says that no setting
// raises it. Through the binary, and in process for the engine alone.

import t from "tap";
import { createRouter } from "../../src/router/router.js";
import { inject } from "../../src/http/connection/inject.js";
import { startServer } from "../helpers/process.js";
import { splitResponses, talk } from "../helpers/wire.js";

const detail = (body: string) => (JSON.parse(body) as { detail: string }).detail;

t.test("the binary: the server's limit names MAX_BODY_BYTES, a resource's own limit says no setting raises it", async (t) => {
  // One server for both: its limit (4500) is above /api/v2/facts' own (4096), as the default (1 MiB) is.
  const server = startServer({ MAX_BODY_BYTES: "4500", QUIET: "1" });
  t.teardown(async () => {
    server.child.kill("SIGTERM");
    await server.exited();
  });
  const port = Number(new URL(await server.url()).port);
  const [announced] = splitResponses(await talk(port, [`POST /api/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4600\r\n\r\n`]));
  t.equal(announced!.status, 413);
  t.match(detail(announced!.body), /takes at most 4500; that limit is the server's, and its MAX_BODY_BYTES setting raises it/);

  const chunk = "x".repeat(2400);
  const [grown] = splitResponses(await talk(port, [`POST /api/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n960\r\n${chunk}\r\n960\r\n${chunk}\r\n0\r\n\r\n`]));
  t.equal(grown!.status, 413, "a chunked body that outgrows it");
  t.match(detail(grown!.body), /grows past the limit of 4500 bytes; that limit is the server's, and its MAX_BODY_BYTES setting raises it/);

  const [own] = splitResponses(await talk(port, [`POST /api/v2/facts HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 4200\r\n\r\n`]));
  t.equal(own!.status, 413);
  const words = detail(own!.body);
  t.match(words, /\/api\/v2\/facts takes at most 4096; that limit is this resource's own, and no setting raises it/);
  t.notMatch(words, /MAX_BODY_BYTES/, "no setting is offered where none would help");
});

t.test("the engine alone names no setting: the limit is the server's, and that is all it can say", async (t) => {
  const router = createRouter([{ method: "POST", path: "/up", summary: "up", handler: () => ({ status: 204 }) }]);
  const { output } = await inject(router, "POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: 20\r\n\r\n", { limits: { maxBodyBytes: 10 } });
  const [r] = splitResponses(output);
  t.equal(r!.status, 413);
  t.match(detail(r!.body), /\/up takes at most 10; that limit is the server's \(RFC 9110/);
});
