// startline/node's request and response against node:http's documented
// behaviour, with a bare listener over real sockets: how header lines are
// joined, rawHeaders, every form of writeHead, a Content-Length the listener
// sets (honoured, and a wrong one refused before it could misframe), HEAD,
// 204 and 304, chunked framing when no length is known, trailers,
// 100-continue, 'clientError', events when the client goes, and a request
// body that streams with back-pressure.

import { once } from "node:events";
import http from "node:http";
import net from "node:net";
import { finished } from "node:stream";
import t, { type Test } from "tap";
import { createServer, type RequestListener } from "../../src/node/index.js";
import type { IncomingRequest } from "../../src/node/request.js";
import type { ServerResponseOnEngine } from "../../src/node/response.js";
import { listenNode } from "../helpers/node-server.js";
import { readUntil, splitResponses, talk } from "../helpers/wire.js";

type Listener = (req: IncomingRequest, res: ServerResponseOnEngine) => void;

async function serve(t: Test, listener: Listener) {
  const server = createServer(listener as unknown as RequestListener);
  const running = await listenNode(server);
  t.teardown(running.close);
  return { server, port: running.port };
}

/** The request a listener that answers "ok" was handed for `bytes` (one request that closes its connection). */
async function requestFor(t: Test, bytes: string): Promise<IncomingRequest> {
  let seen: IncomingRequest | undefined;
  const { port } = await serve(t, (req, res) => {
    seen = req;
    res.end("ok");
  });
  await talk(port, [bytes]);
  return seen!;
}

/** A client that sends `request`, reads until the answer's "part", and leaves (its socket destroyed). */
async function leaveAfterPart(port: number, request: string): Promise<void> {
  const socket = net.connect(port, "127.0.0.1");
  await once(socket, "connect");
  socket.write(request);
  await readUntil(socket, "part");
  socket.destroy();
}

t.test("header lines are joined as node joins them; rawHeaders keeps names as sent", async (t) => {
  const req = await requestFor(
    t,
    "GET /h?x=1 HTTP/1.1\r\nHost: a\r\nX-Dup: 1\r\nx-dup: 2\r\nCookie: a=1\r\ncookie: b=2\r\nSet-Cookie: s=1\r\nSet-Cookie: s=2\r\n" +
      "Content-Type: text/plain\r\nContent-Type: text/html\r\nUser-Agent: one\r\nUser-Agent: two\r\nAccept: a\r\nACCEPT: b\r\nConnection: close\r\n\r\n",
  );
  t.equal(req.method, "GET");
  t.equal(req.url, "/h?x=1");
  t.equal(req.httpVersion, "1.1");
  t.equal(req.httpVersionMajor, 1);
  t.equal(req.httpVersionMinor, 1);
  t.equal(req.headers["x-dup"], "1, 2", "other fields: joined with a comma");
  t.equal(req.headers.cookie, "a=1; b=2", "Cookie: joined with a semicolon");
  t.same(req.headers["set-cookie"], ["s=1", "s=2"], "Set-Cookie: a list");
  t.equal(req.headers["content-type"], "text/plain", "single-valued fields: the first kept");
  t.equal(req.headers["user-agent"], "one");
  t.equal(req.headers.accept, "a, b");
  t.same(req.rawHeaders.slice(0, 6), ["Host", "a", "X-Dup", "1", "x-dup", "2"], "names as sent, in order");
  t.same(req.rawHeaders.filter((_, i) => i % 2 === 0).slice(-3), ["Accept", "ACCEPT", "Connection"]);
  t.same(req.headersDistinct["x-dup"], ["1", "2"]);
  t.equal(req.socket.remoteAddress, "127.0.0.1");
  t.equal(req.connection, req.socket);
  t.equal(req.complete, true, "a request without a body is complete at once");
});

t.test("headersDistinct: no prototype, as node's, and names that Object.prototype has are lists of their own", async (t) => {
  const req = await requestFor(t, "GET / HTTP/1.1\r\nHost: a\r\nConstructor: 1\r\nconstructor: 2\r\ntoString: 3\r\n__proto__: 4\r\n__PROTO__: 5\r\nhasOwnProperty: 6\r\nConnection: close\r\n\r\n");
  const distinct = req.headersDistinct;
  t.equal(Object.getPrototypeOf(distinct), null, "as node's headersDistinct");
  t.same(Object.keys(distinct), ["host", "constructor", "tostring", "__proto__", "hasownproperty", "connection"]);
  t.same(Object.getOwnPropertyDescriptor(distinct, "constructor")?.value, ["1", "2"], "not Object, found on the prototype");
  t.same(Object.getOwnPropertyDescriptor(distinct, "__proto__")?.value, ["4", "5"], "an own list, not the object's prototype");
  t.same(distinct.tostring, ["3"]);
  t.same(distinct.hasownproperty, ["6"]);
  t.equal(({} as { constructor: unknown }).constructor, Object, "nothing reached Object.prototype");
});

t.test("trailers of a chunked request: trailers, rawTrailers and trailersDistinct once the body has ended", async (t) => {
  let before: Record<string, string[]> | undefined;
  let seen: IncomingRequest | undefined;
  const { port } = await serve(t, (req, res) => {
    before = { ...req.trailersDistinct };
    req.resume();
    req.on("end", () => {
      seen = req;
      res.end("ok");
    });
  });
  await talk(port, ["POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\nab\r\n0\r\nX-Sum: 1\r\nx-sum: 2\r\nX-One: z\r\n\r\n"]);
  const req = seen!;
  t.same(before, {}, "none before the body has ended");
  t.same(req.rawTrailers, ["X-Sum", "1", "x-sum", "2", "X-One", "z"]);
  t.same(req.trailers, { "x-sum": "1, 2", "x-one": "z" });
  t.same({ ...req.trailersDistinct }, { "x-sum": ["1", "2"], "x-one": ["z"] });
  t.same({ ...req.headersDistinct }, { host: ["a"], "transfer-encoding": ["chunked"], connection: ["close"] });
  t.equal(req.headersDistinct, req.headersDistinct, "the same lists at every read, as node's");
});

t.test("any method token reaches the listener as sent", async (t) => {
  const { port } = await serve(t, (req, res) => res.end(req.method));
  const out = await talk(port, ["UPDATE / HTTP/1.1\r\nHost: a\r\n\r\npurge / HTTP/1.1\r\nHost: a\r\n\r\nM-SEARCH / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"]);
  t.same(
    splitResponses(out).map((r) => r.body),
    ["UPDATE", "purge", "M-SEARCH"],
  );
});

t.test("writeHead: status, message, headers object, flat list; the head is final after it", async (t) => {
  const errors: string[] = [];
  const { port } = await serve(t, (req, res) => {
    res.setHeader("X-Before", "kept");
    res.setHeader("X-Replaced", "old");
    if (req.url === "/object") res.writeHead(201, "Made", { "X-Obj": "1", "Set-Cookie": ["a=1", "b=2"] });
    else if (req.url === "/flat") res.writeHead(202, ["X-Replaced", "n1", "X-Replaced", "n2", "X-Flat", "f"]);
    else res.writeHead(203);
    try {
      res.setHeader("X-Late", "no");
    } catch (error) {
      errors.push((error as { code: string }).code);
    }
    t.equal(res.headersSent, true);
    res.end("b");
  });
  const out = await talk(port, ["GET /object HTTP/1.1\r\nHost: a\r\n\r\nGET /flat HTTP/1.1\r\nHost: a\r\n\r\nGET /plain HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"]);
  const text = out.toString("latin1");
  const [object, flat, plain] = splitResponses(out);
  t.equal(object!.statusLine, "HTTP/1.1 201 Made");
  t.equal(object!.headers["x-obj"], "1");
  t.equal(object!.headers["x-before"], "kept");
  t.match(text, /Set-Cookie: a=1\r\nSet-Cookie: b=2\r\n/, "several Set-Cookie lines");
  t.equal(flat!.statusLine, "HTTP/1.1 202 Accepted");
  const flatText = text.slice(text.indexOf("HTTP/1.1 202"), text.indexOf("HTTP/1.1 203"));
  t.match(flatText, /X-Replaced: n1\r\nX-Replaced: n2\r\n/, "the flat list replaces earlier values and keeps its repeats");
  t.notMatch(flatText, /X-Replaced: old/);
  t.equal(plain!.statusLine, "HTTP/1.1 203 ");
  t.notMatch(text, /X-Late/);
  t.same(errors, ["ERR_HTTP_HEADERS_SENT", "ERR_HTTP_HEADERS_SENT", "ERR_HTTP_HEADERS_SENT"]);
});

t.test("header values that could break the message are refused at setHeader, as node refuses them", async (t) => {
  const codes: string[] = [];
  const { port } = await serve(t, (_req, res) => {
    for (const [name, value] of [
      ["X-A", "a\r\nInjected: yes"],
      ["Bad Name", "v"],
      ["Date", "Mon, 01 Jan 2024 00:00:00 GMT"],
    ] as const) {
      try {
        res.setHeader(name, value);
      } catch (error) {
        codes.push((error as { code: string }).code);
      }
    }
    res.end();
  });
  const out = await talk(port, ["GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"]);
  t.same(codes, ["ERR_INVALID_CHAR", "ERR_INVALID_HTTP_TOKEN", "ERR_STARTLINE_NOT_OFFERED"]);
  t.notMatch(out.toString("latin1"), /Injected/);
});

t.test("ERR_INVALID_CHAR carries node's own message for a value node refuses too, and says why for one only startline refuses", async (t) => {
  const nodeResponse = () => new http.ServerResponse(new http.IncomingMessage(new net.Socket()));
  const nodeRes = nodeResponse();
  // A response with no field set yet, as Fastify's is when it calls writeHead with all of its fields.
  const freshNodeRes = nodeResponse();
  const nodeMessage = (set: () => void) => {
    try {
      set();
    } catch (error) {
      return (error as Error).message;
    }
    return "accepted";
  };
  const messages: string[] = [];
  const { port } = await serve(t, (_req, res) => {
    for (const value of ["a\r\nInjected: yes", "\uD83D\uDE00", "caf\u00e9"]) messages.push(nodeMessage(() => res.setHeader("X-A", value)));
    messages.push(nodeMessage(() => res.writeHead(200, "\u2019", {})));
    // A writeHead refused for one field sets none of its fields, as node's (with none set before) sets none.
    messages.push(nodeMessage(() => res.writeHead(200, { "X-B": "b", "X-C": "\u2019" })), String(res.getHeader("X-B")));
    res.end();
  });
  await talk(port, ["GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"]);
  t.equal(messages[0], nodeMessage(() => nodeRes.setHeader("X-A", "a\r\nInjected: yes")), "a control character: node's message");
  t.equal(messages[1], nodeMessage(() => nodeRes.setHeader("X-A", "\uD83D\uDE00")), "above 0xFF: node's message");
  t.equal(nodeMessage(() => nodeRes.setHeader("X-A", "caf\u00e9")), "accepted", "node writes 0xE9 as a byte");
  t.match(messages[2], /^Invalid character in header content \["X-A"\]: startline writes visible ASCII/, "startline alone refuses it, and says so");
  t.equal(messages[3], nodeMessage(() => nodeRes.writeHead(200, "\u2019", {})), "node's message for a statusMessage it refuses too");
  t.equal(messages[4], nodeMessage(() => freshNodeRes.writeHead(200, { "X-B": "b", "X-C": "\u2019" })));
  t.equal(messages[5], String(freshNodeRes.getHeader("X-B")), "no field of the refused writeHead is kept");
  t.equal(messages[5], "undefined");
});

t.test("fields set through node's own OutgoingMessage.prototype methods are the response's fields (as the cookies package sets them)", async (t) => {
  const { port } = await serve(t, (_req, res) => {
    const nodes = http.OutgoingMessage.prototype;
    nodes.setHeader.call(res as unknown as http.OutgoingMessage, "Set-Cookie", ["a=1", "b=2"]);
    res.setHeader("X-Ours", "set by the response's own method");
    nodes.appendHeader.call(res as unknown as http.OutgoingMessage, "X-Ours", "appended by node's");
    const seen = JSON.stringify([res.getHeader("set-cookie"), nodes.getHeader.call(res as unknown as http.OutgoingMessage, "x-ours")]);
    nodes.setHeader.call(res as unknown as http.OutgoingMessage, "X-Removed", "1");
    res.removeHeader("x-removed");
    nodes.setHeader.call(res as unknown as http.OutgoingMessage, "X-Bad", "a\u00e9");
    let refused = "";
    try {
      res.end(seen);
    } catch (error) {
      refused = (error as { code: string }).code;
      nodes.removeHeader.call(res as unknown as http.OutgoingMessage, "X-Bad");
      res.end(`${seen} ${refused}`);
    }
  });
  const out = (await talk(port, ["GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"])).toString("latin1");
  const r = splitResponses(Buffer.from(out, "latin1"))[0]!;
  const head = out.slice(0, out.indexOf("\r\n\r\n")).replaceAll("\r\n", "\n") + "\n";
  t.match(head, /\nSet-Cookie: a=1\nSet-Cookie: b=2\n/, "node's setHeader: two Set-Cookie lines");
  t.match(head, /\nX-Ours: set by the response's own method\nX-Ours: appended by node's\n/);
  t.notMatch(head, /X-Removed|X-Bad/i);
  t.equal(r.body, `${JSON.stringify([["a=1", "b=2"], ["set by the response's own method", "appended by node's"]])} ERR_INVALID_CHAR`, "each sees the other's fields; a value node's setHeader let through is refused when the head is made");
});

t.test("a response with no field set reads as having none, through its own methods and node's, and either kind of set makes its fields", async (t) => {
  const { port } = await serve(t, (req, res) => {
    const nodes = http.OutgoingMessage.prototype;
    const as = res as unknown as http.OutgoingMessage;
    const seen = [
      res.getHeaderNames(),
      res.getRawHeaderNames(),
      res.getHeaders(),
      res.hasHeader("x-a"),
      res.getHeader("x-a") ?? null,
      nodes.getHeaderNames.call(as),
      nodes.hasHeader.call(as, "x-a"),
      nodes.getHeader.call(as, "x-a") ?? null,
    ];
    // The reads made nothing that a later set could miss: node's own setHeader first, or the response's.
    if (req.url === "/nodes") nodes.setHeader.call(as, "X-A", "by node's");
    else res.setHeader("X-A", "by the response's");
    seen.push(res.getHeader("x-a")!, nodes.getHeader.call(as, "x-a")!);
    res.end(JSON.stringify(seen));
  });
  const out = await talk(port, ["GET /nodes HTTP/1.1\r\nHost: a\r\n\r\nGET /ours HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"]);
  const [first, second] = splitResponses(out);
  const none = [[], [], {}, false, null, [], false, null];
  t.same(JSON.parse(first!.body), [...none, "by node's", "by node's"]);
  t.equal(first!.headers["x-a"], "by node's");
  t.same(JSON.parse(second!.body), [...none, "by the response's", "by the response's"]);
  t.equal(second!.headers["x-a"], "by the response's");
});

t.test("field names in any case, more of them than are kept lower-cased (response.ts, lowerName): set, read, removed and sent as on node", async (t) => {
  /** The same script on a response of ours and on node's own: names of mixed case set, read in other cases, some removed. */
  const script = (res: http.ServerResponse): unknown[] => {
    // A name kept lower-cased (the first ones seen), then more names than are kept.
    res.setHeader("Content-TYPE", "text/html");
    const seen: unknown[] = [res.getHeader("CONTENT-type"), res.getHeaderNames()];
    for (let i = 0; i < 300; i++) res.setHeader(`X-Field-${i}-Ab`, String(i));
    for (let i = 0; i < 300; i += 2) res.removeHeader(`x-FIELD-${i}-aB`);
    for (let i = 0; i < 300; i += 3) seen.push(res.getHeader(`X-FIELD-${i}-AB`) ?? null, res.hasHeader(`x-field-${i}-ab`));
    res.setHeader("Content-TYPE", "text/plain");
    seen.push(res.getHeaderNames(), res.getHeaders(), res.getHeader("content-type"));
    return seen;
  };
  const nodes = script(new http.ServerResponse(new http.IncomingMessage(new net.Socket())));
  let ours: unknown[] = [];
  const { port } = await serve(t, (_req, res) => {
    ours = script(res as unknown as http.ServerResponse);
    res.end("ok");
  });
  const [answer] = splitResponses(await talk(port, ["GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"]));
  t.same(JSON.parse(JSON.stringify(ours)), JSON.parse(JSON.stringify(nodes)));
  t.equal(answer!.headers["x-field-299-ab"], "299");
  t.equal(answer!.headers["x-field-298-ab"], undefined, "a removed field is not sent");
  t.equal(answer!.headers["content-type"], "text/plain");
});

t.test("a response that sets no field: the engine's own fields only, and _header says each response's status", async (t) => {
  const headers: string[] = [];
  const { port } = await serve(t, (req, res) => {
    if (req.url === "/missing") res.statusCode = 404;
    else if (req.url === "/reason") res.writeHead(200, "Fine");
    else if (req.url === "/removed") {
      res.setHeader("X-Gone", "1");
      res.removeHeader("X-Gone");
    }
    res.end(req.url);
    headers.push(String(res._header));
  });
  const paths = ["/plain", "/missing", "/reason", "/removed", "/plain"];
  const out = await talk(port, [paths.map((p, i) => `GET ${p} HTTP/1.1\r\nHost: a\r\n${i === paths.length - 1 ? "Connection: close\r\n" : ""}\r\n`).join("")]);
  const responses = splitResponses(out);
  t.same(
    responses.map((r) => r.statusLine),
    ["HTTP/1.1 200 OK", "HTTP/1.1 404 Not Found", "HTTP/1.1 200 Fine", "HTTP/1.1 200 OK", "HTTP/1.1 200 OK"],
  );
  t.same(headers, ["HTTP/1.1 200\r\n", "HTTP/1.1 404\r\n", "HTTP/1.1 200 Fine\r\n", "HTTP/1.1 200\r\n", "HTTP/1.1 200\r\n"]);
  for (const [i, r] of responses.entries()) {
    t.same(Object.keys(r.headers).sort(), i === paths.length - 1 ? ["connection", "content-length", "date", "x-content-type-options"] : ["content-length", "date", "x-content-type-options"], `${paths[i]}: no field of its own`);
    t.equal(r.body, paths[i]);
  }
});

t.test("a value node's appendHeader adds to a field the response's setHeader checked is checked again when the head is made", async (t) => {
  const refused: string[] = [];
  const { port } = await serve(t, (req, res) => {
    const nodes = http.OutgoingMessage.prototype;
    // A single value becomes a new list; a list grows in place.
    res.setHeader("X-Grown", req.url === "/one" ? "ok" : ["ok"]);
    nodes.appendHeader.call(res as unknown as http.OutgoingMessage, "X-Grown", "b\u00e9");
    try {
      res.end("sent");
    } catch (error) {
      refused.push(`${req.url} ${(error as { code: string }).code}`);
      res.removeHeader("X-Grown");
      res.end("refused");
    }
  });
  const out = await talk(port, ["GET /one HTTP/1.1\r\nHost: a\r\n\r\nGET /list HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"]);
  t.same(
    splitResponses(out).map((r) => r.body),
    ["refused", "refused"],
  );
  t.same(refused, ["/one ERR_INVALID_CHAR", "/list ERR_INVALID_CHAR"]);
});

t.test("a Content-Length the listener sets frames the body; a wrong one throws before anything is sent", async (t) => {
  const thrown: string[] = [];
  const { port } = await serve(t, (req, res) => {
    if (req.url === "/stream") {
      res.setHeader("Content-Length", 6);
      res.write("abc");
      setImmediate(() => res.end("def"));
      return;
    }
    if (req.url === "/wrong") {
      res.setHeader("Content-Length", "10");
      try {
        res.end("short");
      } catch (error) {
        thrown.push((error as { code: string }).code);
        res.removeHeader("Content-Length");
        res.statusCode = 500;
        res.end("mismatch");
      }
      return;
    }
    res.setHeader("Content-Length", "5");
    res.end("whole");
  });
  const out = await talk(port, ["GET /whole HTTP/1.1\r\nHost: a\r\n\r\nGET /stream HTTP/1.1\r\nHost: a\r\n\r\nGET /wrong HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"]);
  const [whole, stream, wrong] = splitResponses(out);
  t.equal(whole!.headers["content-length"], "5");
  t.equal(whole!.body, "whole");
  t.equal(stream!.headers["content-length"], "6", "written in pieces, framed by the length set");
  t.equal(stream!.headers["transfer-encoding"], undefined);
  t.equal(stream!.body, "abcdef");
  t.same(thrown, ["ERR_HTTP_CONTENT_LENGTH_MISMATCH"]);
  t.equal(wrong!.status, 500);
  t.equal(wrong!.body, "mismatch");
});

t.test("a stream that outgrows its Content-Length: write throws, and the response is never misframed", async (t) => {
  const thrown: string[] = [];
  const { port } = await serve(t, (_req, res) => {
    res.setHeader("Content-Length", 4);
    res.write("abc");
    try {
      res.write("def");
    } catch (error) {
      thrown.push((error as { code: string }).code);
    }
    res.end("d");
  });
  const out = await talk(port, ["GET / HTTP/1.1\r\nHost: a\r\n\r\n"], { halfClose: true });
  t.same(thrown, ["ERR_HTTP_CONTENT_LENGTH_MISMATCH"]);
  t.equal(splitResponses(out)[0]!.body, "abcd");
});

t.test("chunked when no length is known; trailers after the last chunk", async (t) => {
  const { port } = await serve(t, (req, res) => {
    res.setHeader("Trailer", "X-Sum");
    res.write("one,");
    res.write(Buffer.from("two"));
    if (req.url === "/trailers") res.addTrailers({ "X-Sum": "2" });
    res.end();
  });
  const out = (await talk(port, ["GET /trailers HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"])).toString("latin1");
  t.match(out, /Transfer-Encoding: chunked\r\n/);
  t.ok(out.endsWith("4\r\none,\r\n3\r\ntwo\r\n0\r\nX-Sum: 2\r\n\r\n"), "chunks, then the trailer section");
  const plain = await talk(port, ["GET /plain HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"]);
  t.equal(splitResponses(plain)[0]!.body, "one,two");
});

t.test("Transfer-Encoding: chunked asked for, and the body given whole to end(): one chunk, then the last", async (t) => {
  const { port } = await serve(t, (req, res) => {
    res.setHeader("Transfer-Encoding", "chunked");
    res.end(req.url === "/empty" ? "" : "whole");
  });
  const out = (await talk(port, ["GET /whole HTTP/1.1\r\nHost: a\r\n\r\nGET /empty HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"])).toString("latin1");
  const [whole, empty] = out.split(/(?=HTTP\/1\.1 )/);
  t.match(whole, /Transfer-Encoding: chunked\r\n/);
  t.ok(whole!.endsWith("\r\n\r\n5\r\nwhole\r\n0\r\n\r\n"), "the body as one chunk");
  t.ok(empty!.endsWith("\r\n\r\n0\r\n\r\n"), "an empty body: the last chunk alone");
});

t.test("HEAD: the head GET would have, no body; 204 and 304: no body and no length", async (t) => {
  const { port } = await serve(t, (req, res) => {
    if (req.url === "/204") res.statusCode = 204;
    if (req.url === "/304") res.statusCode = 304;
    if (req.url === "/len") res.setHeader("Content-Length", 11);
    res.end(req.url === "/len" ? undefined : "hello world");
  });
  const out = await talk(port, [
    "HEAD /len HTTP/1.1\r\nHost: a\r\n\r\nHEAD /body HTTP/1.1\r\nHost: a\r\n\r\nGET /204 HTTP/1.1\r\nHost: a\r\n\r\nGET /304 HTTP/1.1\r\nHost: a\r\n\r\nGET /end HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
  ]);
  const [len, body, noContent, notModified, last] = splitResponses(out, [true, true]);
  t.equal(len!.headers["content-length"], "11", "the length the listener set");
  t.equal(body!.headers["content-length"], "11", "the length of the body it gave");
  t.equal(body!.body, "");
  t.equal(noContent!.status, 204);
  t.equal(noContent!.headers["content-length"], undefined);
  t.equal(notModified!.status, 304);
  t.equal(notModified!.headers["content-length"], undefined);
  t.equal(last!.body, "hello world", "and the connection's next response is read where it begins");
});

t.test("a request body streams to the listener in pieces; the engine's whole-body limit does not apply", async (t) => {
  const size = 3 * 1024 * 1024;
  const { port } = await serve(t, (req, res) => {
    let bytes = 0;
    let pieces = 0;
    req.on("data", (piece: Buffer) => {
      bytes += piece.length;
      pieces++;
    });
    req.on("end", () => res.end(`${bytes} in ${pieces > 1 ? "pieces" : "one"}; complete=${req.complete}`));
  });
  const socket = net.connect(port, "127.0.0.1");
  await once(socket, "connect");
  socket.write(`POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: ${size}\r\nConnection: close\r\n\r\n`);
  socket.write(Buffer.alloc(size, 0x61));
  const answer = await readUntil(socket, "complete=");
  t.match(answer, `${size} in pieces; complete=true`, "3 MiB, over the engine's 1 MiB limit for whole bodies");
  socket.destroy();
});

t.test("a body read slower than it arrives: the engine stops reading while the request's stream is full", async (t) => {
  const size = 32 * 1024 * 1024;
  let most = 0;
  const { port } = await serve(t, async (req, res) => {
    let bytes = 0;
    // A reader slower than the client: a turn of the event loop per piece.
    for await (const piece of req) {
      bytes += (piece as Buffer).length;
      await new Promise(setImmediate);
      // What arrived meanwhile waits in the request's stream.
      most = Math.max(most, req.readableLength);
    }
    res.end(`read ${bytes}`);
  });
  const socket = net.connect(port, "127.0.0.1");
  socket.on("error", () => {});
  await once(socket, "connect");
  socket.write(`POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: ${size}\r\nConnection: close\r\n\r\n`);
  socket.write(Buffer.alloc(size, 0x62));
  const answer = await readUntil(socket, `read ${size}`);
  t.match(answer, /200 OK/);
  // The stream's high-water mark (16 KiB) and the one read that filled it (64 KiB at most), never the body.
  t.ok(most <= 16 * 1024 + 64 * 1024, `the request held at most ${most} bytes of a ${size}-byte body`);
  socket.destroy();
});

t.test("pipelined requests are answered in order, the later ones answered first by their listener", async (t) => {
  const { port } = await serve(t, (req, res) => {
    const delay = req.url === "/slow" ? 30 : 0;
    setTimeout(() => res.end(req.url), delay);
  });
  const out = await talk(port, ["GET /slow HTTP/1.1\r\nHost: a\r\n\r\nGET /fast HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"]);
  t.same(
    splitResponses(out).map((r) => r.body),
    ["/slow", "/fast"],
  );
});

t.test("Expect: 100-continue: the engine sends 100 Continue once it awaits the body; writeContinue adds nothing", async (t) => {
  const { port } = await serve(t, (req, res) => {
    res.writeContinue();
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (piece: string) => (body += piece));
    req.on("end", () => res.end(`got ${body}`));
  });
  const socket = net.connect(port, "127.0.0.1");
  await once(socket, "connect");
  socket.write("POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\nConnection: close\r\n\r\n");
  const interim = await readUntil(socket, "\r\n\r\n");
  t.equal(interim, "HTTP/1.1 100 Continue\r\n\r\n", "one 100 Continue");
  socket.write("hi");
  const rest = await readUntil(socket, "got hi");
  t.notMatch(rest, /100 Continue/);
  socket.destroy();
});

t.test("the client leaves mid-response: 'close' on the response and 'aborted' on an unfinished request", async (t) => {
  const events: string[] = [];
  let closed!: () => void;
  const done = new Promise<void>((resolve) => (closed = resolve));
  const { port } = await serve(t, (req, res) => {
    req.on("aborted", () => events.push("req aborted"));
    req.on("error", (error: Error & { code?: string }) => events.push(`req error ${error.code}`));
    res.on("finish", () => events.push("res finish"));
    res.on("close", () => {
      events.push("res close");
      closed();
    });
    res.write("part");
  });
  await leaveAfterPart(port, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc");
  await done;
  t.same(events.sort(), ["req aborted", "req error ECONNRESET", "res close"], "no 'finish': the response never left whole");
});

t.test("the client leaves mid-response: stream.finished() reports a premature close, and a later write fails as node's does", async (t) => {
  let seen!: (outcome: string[]) => void;
  const outcome = new Promise<string[]>((resolve) => (seen = resolve));
  const { port } = await serve(t, (_req, res) => {
    // What Fastify does with a streamed reply: a premature close tells it to destroy the source and log it.
    finished(res as unknown as NodeJS.WritableStream, (error) => {
      const written = res.write("late", (late?: Error & { code?: string } | null) => seen([`finished ${error?.code}`, `writable ${res.writable}`, `write ${written}`, `callback ${late?.code}`]));
    });
    res.write("part");
  });
  await leaveAfterPart(port, "GET / HTTP/1.1\r\nHost: a\r\n\r\n");
  t.same(await outcome, ["finished ERR_STREAM_PREMATURE_CLOSE", "writable true", "write false", "callback ERR_STREAM_DESTROYED"]);
});

t.test("'finish' then 'close' for a response that leaves whole", async (t) => {
  const events: string[] = [];
  let told!: (outcome: string) => void;
  const outcome = new Promise<string>((resolve) => (told = resolve));
  let closed!: () => void;
  const done = new Promise<void>((resolve) => (closed = resolve));
  const { port } = await serve(t, (_req, res) => {
    res.on("finish", () => events.push(`finish ${res.writableFinished}`));
    res.on("close", () => {
      events.push("close");
      closed();
    });
    finished(res as unknown as NodeJS.WritableStream, (error) => told(`finished ${error?.code}`));
    res.end("x");
    events.push(`ended ${res.writableEnded} ${res.finished} ${res.writable}`);
  });
  await talk(port, ["GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"]);
  await done;
  t.same(events, ["ended true true true", "finish true", "close"], "writable stays true, as node's does");
  t.equal(await outcome, "finished undefined", "stream.finished(): no error for a response that left whole");
});

t.test("a protocol error goes to 'clientError' when someone listens; otherwise the engine answers it", async (t) => {
  const { server, port } = await serve(t, (_req, res) => res.end());
  const plain = (await talk(port, ["GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"])).toString("latin1");
  t.match(plain, /^HTTP\/1\.1 400 Bad Request\r\n/);
  t.match(plain, /Content-Type: application\/problem\+json/, "the engine's own problem when nobody listens");
  const seen: { code: string; detail: string }[] = [];
  server.on("clientError", (error: { code: string; detail: string }, socket: net.Socket) => {
    seen.push(error);
    socket.end("HTTP/1.1 400 Bad Request\r\nContent-Length: 4\r\nConnection: close\r\n\r\nmine");
  });
  const mine = (await talk(port, ["GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"])).toString("latin1");
  t.equal(mine, "HTTP/1.1 400 Bad Request\r\nContent-Length: 4\r\nConnection: close\r\n\r\nmine", "the listener's answer, alone on the socket");
  t.equal(seen[0]!.code, "HPE_DUPLICATE_HOST");
  t.match(seen[0]!.detail, /Host/);
});

t.test("node features that are not offered throw a clear error", async (t) => {
  const codes: string[] = [];
  const { server, port } = await serve(t, (_req, res) => {
    for (const use of [() => res.writeProcessing(), () => res.writeEarlyHints(), () => res.setTimeout(1000), () => res.writeHead(103), () => (res as unknown as { _send(): void })._send()]) {
      try {
        use();
      } catch (error) {
        codes.push((error as { code: string }).code);
      }
    }
    res.end();
  });
  await talk(port, ["GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"]);
  t.same(codes, Array(5).fill("ERR_STARTLINE_NOT_OFFERED"));
  t.throws(() => (server.keepAliveTimeout = 1000), { code: "ERR_STARTLINE_NOT_OFFERED" }, "a timeout set after listen() would be ignored: it throws");
  t.throws(() => createServer({ insecureHTTPParser: true }), { code: "ERR_STARTLINE_NOT_OFFERED" });
  t.throws(() => createServer({ requireHostHeader: false }), { code: "ERR_STARTLINE_NOT_OFFERED" }, "an HTTP/1.1 request without Host is a 400, always");
  t.doesNotThrow(() => createServer({ requireHostHeader: true }), "node's default, which is the engine's rule");
});

t.test("maxRequestsPerSocket closes the connection after that many", async (t) => {
  const server = createServer((req, res) => res.end(req.url));
  server.maxRequestsPerSocket = 2;
  const running = await listenNode(server);
  t.teardown(running.close);
  const out = await talk(running.port, ["GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\nGET /3 HTTP/1.1\r\nHost: a\r\n\r\n"]);
  const responses = splitResponses(out);
  t.same(
    responses.map((r) => r.body),
    ["/1", "/2"],
  );
  t.equal(responses[1]!.headers.connection, "close");
});

t.test("maxRequestsPerSocket counts each connection's requests, however the connections' requests interleave", async (t) => {
  // The adapter keeps the last connection's state at hand (exchange.ts, connectionOf): a request from another
  // connection must find its own.
  const server = createServer((req, res) => res.end(req.url));
  server.maxRequestsPerSocket = 2;
  const running = await listenNode(server);
  t.teardown(running.close);
  const a = net.connect(running.port, "127.0.0.1");
  const b = net.connect(running.port, "127.0.0.1");
  t.teardown(() => (a.destroy(), b.destroy()));
  await Promise.all([once(a, "connect"), once(b, "connect")]);
  const ask = async (socket: net.Socket, path: string) => {
    socket.write(`GET ${path} HTTP/1.1\r\nHost: a\r\n\r\n`);
    return readUntil(socket, path);
  };
  const closes = (head: string) => /\r\nconnection: close\r\n/i.test(head);
  t.notOk(closes(await ask(a, "/a1")), "a's first: the connection stays");
  t.notOk(closes(await ask(b, "/b1")), "b's first: the connection stays (a's request is not b's)");
  t.ok(closes(await ask(b, "/b2")), "b's second: the last");
  t.ok(closes(await ask(a, "/a2")), "a's second: the last");
});

t.test("Connection: close set by the listener closes the connection after its response", async (t) => {
  const { port } = await serve(t, (req, res) => {
    if (req.url === "/last") res.setHeader("Connection", "close");
    res.end(req.url);
  });
  // No Connection: close from the client: the connection closes only because the listener asked.
  const out = await talk(port, ["GET /first HTTP/1.1\r\nHost: a\r\n\r\nGET /last HTTP/1.1\r\nHost: a\r\n\r\nGET /never HTTP/1.1\r\nHost: a\r\n\r\n"]);
  const responses = splitResponses(out);
  t.same(
    responses.map((r) => r.body),
    ["/first", "/last"],
  );
  t.equal(responses[1]!.headers.connection, "close");
});

t.test("a listener that throws: a 500, the connection closed, the error to onHandlerError", async (t) => {
  const errors: unknown[] = [];
  const server = createServer({ startline: { onHandlerError: (error) => errors.push(error) } }, () => {
    throw new Error("listener failed");
  });
  const running = await listenNode(server);
  t.teardown(running.close);
  const [r] = splitResponses(await talk(running.port, ["GET / HTTP/1.1\r\nHost: a\r\n\r\n"]));
  t.equal(r!.status, 500);
  t.notMatch(r!.body, /listener failed/, "no details to the client");
  t.match(String(errors[0]), /listener failed/);
});

t.test("'checkContinue': its listener decides whether the client sends the body", async (t) => {
  const server = createServer((_req, res) => res.end("never: 'checkContinue' takes these"));
  server.on("checkContinue", (req: IncomingRequest, res: ServerResponseOnEngine) => {
    if (req.headers["x-allowed"] !== "yes") {
      res.statusCode = 417;
      res.end("refused");
      return;
    }
    res.writeContinue();
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (piece: string) => (body += piece));
    req.on("end", () => res.end(`got ${body}`));
  });
  const running = await listenNode(server);
  t.teardown(running.close);
  const allowed = net.connect(running.port, "127.0.0.1");
  await once(allowed, "connect");
  allowed.write("POST / HTTP/1.1\r\nHost: a\r\nX-Allowed: yes\r\nExpect: 100-continue\r\nContent-Length: 2\r\nConnection: close\r\n\r\n");
  t.equal(await readUntil(allowed, "\r\n\r\n"), "HTTP/1.1 100 Continue\r\n\r\n", "sent by writeContinue()");
  allowed.write("hi");
  t.match(await readUntil(allowed, "got hi"), /200 OK/);
  allowed.destroy();
  const refused = (await talk(running.port, ["POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n"])).toString("latin1");
  t.match(refused, /^HTTP\/1\.1 417 Expectation Failed\r\n/, "no 100 Continue before it");
  t.match(refused, /Connection: close\r\n/, "and the connection closes: the body was never asked for");
});

t.test("a body that breaks a rule midway: the request is aborted, and the engine's 400 still reaches the client", async (t) => {
  const events: string[] = [];
  const { port } = await serve(t, (req) => {
    req.on("aborted", () => events.push("aborted"));
    req.resume();
  });
  const out = (await talk(port, ["POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\nzz\r\n"])).toString("latin1");
  t.match(out, /^HTTP\/1\.1 400 Bad Request\r\n/);
  t.match(out, /invalid-chunk-size/);
  t.same(events, ["aborted"]);
});

t.test("HTTP/1.0: a body of unknown length ends with the connection; one of known length keeps it alive when asked", async (t) => {
  const { port } = await serve(t, (req, res) => {
    if (req.url === "/pieces") {
      res.write("one ");
      res.end("two");
    } else res.end(`version ${req.httpVersion}`);
  });
  const kept = await talk(port, ["GET /whole HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /pieces HTTP/1.0\r\n\r\n"]);
  const text = kept.toString("latin1");
  const [whole] = splitResponses(kept.subarray(0, text.indexOf("HTTP/1.1", 1)));
  t.equal(whole!.body, "version 1.0");
  t.equal(whole!.headers.connection, "keep-alive");
  const rest = text.slice(text.indexOf("HTTP/1.1", 1));
  t.notMatch(rest, /Transfer-Encoding/, "no chunked coding for HTTP/1.0");
  t.ok(rest.endsWith("\r\n\r\none two"), "the body, ended by the close");
});

t.test("a client's half-close abandons what is in flight, as on node: 'close' before 'finish', the socket ended, nothing written", async (t) => {
  const events: string[] = [];
  let answer: (() => void) | undefined;
  const { port } = await serve(t, (req, res) => {
    req.on("close", () => events.push("req close"));
    res.on("close", () => {
      events.push(`res close, finished ${res.writableFinished}`);
      // Answered after the client left: nothing reaches it (the engine closed its side).
      answer?.();
    });
    res.on("finish", () => events.push("res finish"));
    answer = () => res.end("too late");
  });
  const socket = net.connect(port, "127.0.0.1");
  await once(socket, "connect");
  let received = "";
  socket.on("data", (d: Buffer) => (received += d.toString("latin1")));
  const ended = once(socket, "end");
  // The request, then the FIN, while its listener has not answered.
  socket.end("GET /later HTTP/1.1\r\nHost: a\r\n\r\n");
  await ended;
  await once(socket, "close");
  t.equal(received, "", "no answer after the half-close");
  t.same(events.sort(), ["req close", "res close, finished false"]);
});

t.test("a timeout property set to undefined before listen() times nothing, as node's server reads it (Fastify assigns its unset option)", async (t) => {
  const server = createServer((_req, res) => res.end("ok"));
  const node = http.createServer();
  for (const name of ["keepAliveTimeout", "headersTimeout", "requestTimeout"] as const) {
    t.doesNotThrow(() => ((server as unknown as Record<string, unknown>)[name] = undefined), `${name} = undefined is taken`);
    t.equal(server[name], 0, `${name} reads 0: off`);
    t.doesNotThrow(() => ((node as unknown as Record<string, unknown>)[name] = undefined), `node takes it too`);
  }
  t.throws(() => ((server as unknown as Record<string, unknown>).keepAliveTimeout = "5"), { code: "ERR_INVALID_ARG_TYPE" }, "anything else but a number still throws");
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => server.close());
  const port = (server.address() as { port: number }).port;
  const response = await talk(port, ["GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"]);
  t.match(response.toString("latin1"), /^HTTP\/1\.1 200 /);
});

/**
 * What a response says of a write after end(), on startline/node and on node:http, for one listener:
 * the events it emits, in order, and what each late write's callback heard.
 */
async function lateWrites(on: "startline" | "node"): Promise<string[]> {
  const seen: string[] = [];
  let done!: () => void;
  const over = new Promise<void>((resolve) => (done = resolve));
  const listener = (_req: http.IncomingMessage, res: http.ServerResponse) => {
    for (const event of ["prefinish", "finish", "close", "error"]) res.on(event, () => seen.push(`${event}${event === "close" ? `, destroyed ${res.destroyed}` : ""}`));
    res.end("hi");
    // Before 'close': the response is not destroyed yet, so it emits the error too (its listener above hears it).
    res.write("soon", (error) => seen.push(`soon: ${(error as NodeJS.ErrnoException | null)?.code}`));
    res.once("close", () =>
      // After 'close': destroyed, so the callback alone hears it, and nothing is emitted (no listener would crash the process).
      setImmediate(() =>
        res.write("late", (error) => {
          seen.push(`late: ${(error as NodeJS.ErrnoException | null)?.code}`);
          setImmediate(done);
        }),
      ),
    );
  };
  const server = on === "startline" ? createServer(listener as unknown as RequestListener) : http.createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await talk(port, ["GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"]);
  await over;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return seen;
}

t.test("a write after end(): its callback hears ERR_STREAM_WRITE_AFTER_END, and 'error' is emitted only until the response closes, as on node", async (t) => {
  const ours = await lateWrites("startline");
  const node = await lateWrites("node");
  // When 'finish' comes beside the first late write's callback is the socket's timing (node writes a small answer at once).
  t.same([...ours].sort(), [...node].sort(), "the same events and callbacks as node:http's");
  t.same([...ours].sort(), ["close, destroyed true", "error", "finish", "late: ERR_STREAM_WRITE_AFTER_END", "prefinish", "soon: ERR_STREAM_WRITE_AFTER_END"]);
  for (const seen of [ours, node]) {
    t.ok(seen.indexOf("prefinish") < seen.indexOf("finish"), "'prefinish' before 'finish'");
    t.equal(seen.at(-1), "late: ERR_STREAM_WRITE_AFTER_END", "the write after 'close' heard by its callback, with no 'error' after it");
  }
});

t.test("a reason phrase is checked and written per status as given, the same one again or another (response.ts, reasonLine)", async (t) => {
  const reasons = ["Fine", "Fine", "Great", "Fine", "Fine\u2019", "Fine"];
  const headers: string[] = [];
  const refused: string[] = [];
  const { port } = await serve(t, (req, res) => {
    const reason = reasons[Number(req.url.slice(1))]!;
    res.statusMessage = reason;
    try {
      res.writeHead(201);
    } catch (error) {
      // Refused: the same status, once more without the reason.
      refused.push(`${reason} ${(error as { code: string }).code}`);
      res.statusMessage = undefined;
      res.writeHead(201);
    }
    headers.push(String(res._header));
    res.end();
  });
  const out = await talk(port, [reasons.map((_, i) => `GET /${i} HTTP/1.1\r\nHost: a\r\n${i === reasons.length - 1 ? "Connection: close\r\n" : ""}\r\n`).join("")]);
  t.same(splitResponses(out).map((r) => r.statusLine), ["HTTP/1.1 201 Fine", "HTTP/1.1 201 Fine", "HTTP/1.1 201 Great", "HTTP/1.1 201 Fine", "HTTP/1.1 201 Created", "HTTP/1.1 201 Fine"]);
  t.same(headers, ["HTTP/1.1 201 Fine\r\n", "HTTP/1.1 201 Fine\r\n", "HTTP/1.1 201 Great\r\n", "HTTP/1.1 201 Fine\r\n", "HTTP/1.1 201\r\n", "HTTP/1.1 201 Fine\r\n"]);
  t.same(refused, ["Fine\u2019 ERR_INVALID_CHAR"], "a reason that differs from the one kept is checked");
});

t.test("a response's fields have no prototype: names of Object.prototype's members are fields like any other (out-headers.ts)", async (t) => {
  const seen: unknown[] = [];
  const { port } = await serve(t, (_req, res) => {
    seen.push(res.getHeader("constructor") ?? null, res.hasHeader("toString"));
    res.setHeader("__proto__", "p");
    res.setHeader("X-A", "a");
    const fields = res.getHeaders();
    seen.push(res.getHeader("__proto__"), res.getHeaderNames(), Object.getOwnPropertyDescriptor(fields, "__proto__")?.value, res.getHeader("hasOwnProperty") ?? null);
    res.end("ok");
  });
  const out = (await talk(port, ["GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"])).toString("latin1");
  t.same(seen, [null, false, "p", ["__proto__", "x-a"], "p", null]);
  t.match(out, /\r\n__proto__: p\r\nX-A: a\r\n/, "sent as a field");
});

t.test("a request answered with Connection: close ends as node's does: 'end' and 'close', not aborted", async (t) => {
  const account = async (server: http.Server | ReturnType<typeof createServer>) => {
    const heard: string[] = [];
    let closed!: () => void;
    const done = new Promise<void>((resolve) => (closed = resolve));
    server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
      for (const event of ["aborted", "end"]) req.on(event, () => heard.push(event));
      req.on("error", (error: Error & { code?: string }) => heard.push(`error ${error.code}`));
      req.on("close", () => {
        heard.push(`close, aborted ${String(req.aborted)}`);
        closed();
      });
      res.end("hi");
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    await talk((server.address() as net.AddressInfo).port, ["GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"]);
    await done;
    server.close();
    return heard;
  };
  const ours = await account(createServer());
  t.same(ours, await account(http.createServer()), "as on node:http");
  t.same(ours, ["end", "close, aborted false"]);
});
