// The "ceiling": the least work a server on node:net can do per request. It
// parses nothing: it counts request ends ("\r\n\r\n", carried across chunks)
// and writes one canned response per end, one write per chunk; correct for
// requests whose body never holds "\r\n\r\n", as the benchmark's. The
// response: env CEILING_RESPONSE_B64 (startline's answer to the scenario's
// request), else the v1 status one; its Date is refreshed every second.
//
// Env: PORT (default 0: any free port), HOST (default 127.0.0.1); TLS_CERT and
// TLS_KEY (PEM files): the same over node:tls, for the HTTPS scenarios (the
// least work a server on node:tls can do); WORKERS=n: n node:cluster workers
// sharing the port. Prints "listening on http(s)://HOST:PORT". SIGTERM/SIGINT
// stop it with exit 0.

import { readFileSync } from "node:fs";
import net from "node:net";
import tls from "node:tls";
import { countEnds } from "./count-ends.js";
import { announces, runPrimaryIfWorkers } from "./workers.js";

const tlsFiles =
  process.env.TLS_CERT && process.env.TLS_KEY ? { cert: readFileSync(process.env.TLS_CERT), key: readFileSync(process.env.TLS_KEY) } : undefined;
const scheme = tlsFiles === undefined ? "http" : "https";
const primary = runPrimaryIfWorkers(scheme);

const DEFAULT_BODY = Buffer.from(JSON.stringify({ resposta: "O servidor está no ar." }));
const DEFAULT_RESPONSE = Buffer.concat([
  Buffer.from(
    "HTTP/1.1 200 OK\r\n" +
      "Date: Thu, 01 Jan 1970 00:00:00 GMT\r\n" +
      "X-Content-Type-Options: nosniff\r\n" +
      "Content-Type: application/json\r\n" +
      "Cache-Control: no-cache\r\n" +
      "Deprecation: @1767225600\r\n" +
      'Link: </api/v2/status>; rel="successor-version"\r\n' +
      `Content-Length: ${DEFAULT_BODY.length}\r\n\r\n`,
    "latin1",
  ),
  DEFAULT_BODY,
]);

const template = process.env.CEILING_RESPONSE_B64 ? Buffer.from(process.env.CEILING_RESPONSE_B64, "base64") : DEFAULT_RESPONSE;

// Split the template around the Date value, if it has one.
const headEnd = template.indexOf("\r\n\r\n");
if (headEnd < 0) throw new Error("ceiling: the canned response has no end of head (\\r\\n\\r\\n)");
const dateField = /\r\nDate:[ \t]*([^\r]*)\r\n/i.exec(template.subarray(0, headEnd + 2).toString("latin1"));
let before = template;
let after = Buffer.alloc(0);
if (dateField !== null && dateField[1] !== undefined) {
  const valueStart = dateField.index + dateField[0].length - 2 - dateField[1].length;
  before = template.subarray(0, valueStart);
  after = template.subarray(valueStart + dateField[1].length);
}

/** responses[n - 1]: n copies of the response, built on demand and dropped when the Date changes. */
let responses: Buffer[] = [];
let one = template;
const MAX_CACHED = 64;

function refresh(): void {
  if (dateField !== null) {
    const now = Date.now();
    one = Buffer.concat([before, Buffer.from(new Date(now).toUTCString(), "latin1"), after]);
    responses = [one];
    setTimeout(refresh, 1000 - (now % 1000)).unref();
  } else {
    responses = [one];
  }
}
refresh();

function copies(n: number): Buffer {
  if (n <= MAX_CACHED) {
    let b = responses[n - 1];
    if (b === undefined) {
      b = Buffer.concat(Array<Buffer>(n).fill(one));
      responses[n - 1] = b;
    }
    return b;
  }
  return Buffer.concat(Array<Buffer>(n).fill(one));
}

function onConnection(socket: net.Socket): void {
  let state = 0;
  socket.on("data", (chunk: Buffer) => {
    const [count, next] = countEnds(chunk, state);
    state = next;
    if (count > 0) socket.write(copies(count));
  });
  socket.on("error", () => socket.destroy());
}

if (!primary) {
  const server =
    tlsFiles === undefined ? net.createServer({ noDelay: true }, onConnection) : tls.createServer({ ...tlsFiles, noDelay: true }, onConnection);

  const port = Number(process.env.PORT ?? 0);
  const host = process.env.HOST || "127.0.0.1";
  server.listen(port, host, () => {
    const address = server.address() as net.AddressInfo;
    if (announces) console.log(`listening on ${scheme}://${address.address}:${address.port}`);
  });

  const stop = () => {
    server.close();
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

