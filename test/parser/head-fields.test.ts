// A request handed on keeps its fields: the parser collects each head's
// fields in an array it reuses (head.ts) and hands on a copy, so a handler
// that answers later (asynchronously, or after the next pipelined head was
// read) still sees its own request's fields, not the next one's.

import t from "tap";
import { RequestParser } from "../../src/http/parse/parser.js";
import type { Request } from "../../src/http/message/request.js";
import { Driver } from "./fixtures/drive.js";

t.test("fields outlive the next head, whole or cut", (t) => {
  const bytes = Buffer.from(
    "GET /a HTTP/1.1\r\nHost: one\r\nX-A: 1\r\n\r\n" + "GET /b HTTP/1.1\r\nHost: two\r\nX-B: 2\r\nX-C: 3\r\n\r\n" + "GET /c HTTP/1.1\r\nHost: three\r\n\r\n",
    "latin1",
  );
  for (const cut of [bytes.length, 1, 7, 40]) {
    const requests: Request[] = [];
    const driver = new Driver(new RequestParser(), { onRequest: (r) => requests.push(r), onError: (e) => t.fail(e.code) });
    for (let i = 0; i < bytes.length; i += cut) driver.feed(bytes.subarray(i, i + cut));
    t.same(
      requests.map((r) => [...r.fields]),
      [
        ["host", "one", "x-a", "1"],
        ["host", "two", "x-b", "2", "x-c", "3"],
        ["host", "three"],
      ],
      `each request keeps its own fields, read in pieces of ${cut} bytes`,
    );
    t.not(requests[0]!.fields, requests[1]!.fields, "no two requests share one array");
  }
  t.end();
});
