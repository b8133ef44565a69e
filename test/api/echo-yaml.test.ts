// The echo's YAML is written by src/api/echo-yaml.ts, not by js-yaml, whose
// cost per value (a tree, then a style chosen for each scalar) made the echo
// of one request with 1,900 query pairs cost 12 ms of the one thread, and of
// a 64 KiB body of control bytes 15 ms. What must hold: js-yaml reads back
// exactly what was written, for any strings; the answer, whole or in pieces,
// is that writer's, every string double-quoted.

import { load } from "js-yaml";
import t from "tap";
import { ECHO_WHOLE_BYTES } from "../../src/api/echo-body.js";
import { echoYaml, quoted } from "../../src/api/echo-yaml.js";
import { docsApp, request } from "../helpers/app.js";

/** Characters that stress the quoting: controls, quotes, backslash, DEL, C1, separators, BOM, non-characters, astral, YAML indicators. */
const ALPHABET = ["a", "Z", " ", "\x00", "\x01", "\x1f", '"', "'", "\\", "\n", "\r", "\t", "\x7f", "\u0085", "\u009f", "é", "\u2028", "\u2029", "\ufeff", "\ufffe", "\uffff", "😀", ":", "- ", "#", "&", "*", "!", "|", ">", "%", "@", "`", "{", "}", "[", "]", ",", "?", "null", "true", "1e3", "0x1f", "~"];

function text(seed: number, max: number): string {
  let x = seed;
  const next = () => (x = (x * 1103515245 + 12345) % 2147483648);
  let s = "";
  for (let n = next() % (max + 1); n > 0; n--) s += ALPHABET[next() % ALPHABET.length];
  return s;
}

t.test("a key a YAML reader would take for null or a boolean is written quoted; other word keys plain", async (t) => {
  const yaml = echoYaml({ null: "a", true: "b", No: "c", on: "d", y: "e", name: "f", nullable: "g" });
  t.same(yaml.split("\n").slice(0, 7), ['"null": "a"', '"true": "b"', '"No": "c"', '"on": "d"', '"y": "e"', 'name: "f"', 'nullable: "g"']);
});

t.test("js-yaml reads back exactly what echoYaml writes", async (t) => {
  for (let seed = 1; seed <= 300; seed++) {
    const pairs = (n: number) => Array.from({ length: n }, (_, i) => ({ name: text(seed * 31 + i, 6), value: text(seed * 17 + i, 12) }));
    const value = {
      method: text(seed, 8),
      target: text(seed + 1, 20),
      queryParams: pairs(seed % 4),
      headers: pairs((seed >> 2) % 3),
      framing: seed % 2 === 0 ? { kind: "none" } : { kind: "content-length", length: seed },
      keepAlive: seed % 3 === 0,
      nested: { list: [[], [text(seed + 2, 3)], {}], "odd key: #1": text(seed + 3, 5) },
      body: { length: seed * 1000, encoding: "utf-8", content: text(seed + 4, 200) },
    };
    const yaml = echoYaml(value);
    t.same(load(yaml), value, `seed ${seed}`);
  }
});

t.test("the echo's answer in YAML is echoYaml's, whole and in pieces, and reads back to the JSON answer", async (t) => {
  const { app } = await docsApp();
  const query = "a=1&".repeat(1900);
  const target = `/api/echo/x?${query}`;
  const whole = await request(app, "PURGE", target, { Accept: "application/yaml", "X-Odd": "\"quoted\" \x85 #" });
  t.equal(whole.status, 200);
  t.equal(whole.headers["content-type"], "application/yaml");
  t.equal(whole.body, echoYaml(load(whole.body) as object), "written by echoYaml");
  t.match(whole.body, /^method: "PURGE"\n/, "strings double-quoted");
  t.equal((load(whole.body) as { queryParams: unknown[] }).queryParams.length, 1900);
  const json = await request(app, "PURGE", target, { "X-Odd": "\"quoted\" \x85 #" });
  const fromJson = JSON.parse(json.body);
  const fromYaml = load(whole.body) as typeof fromJson;
  t.same({ ...fromYaml, headers: fromYaml.headers.filter((h: { name: string }) => h.name !== "accept") }, fromJson, "the same echo as the JSON answer");

  const large = Buffer.alloc(ECHO_WHOLE_BYTES + 1, 0x01);
  const pieces = await request(app, "POST", "/api/echo", { Accept: "application/yaml" }, large);
  t.equal(pieces.headers["transfer-encoding"], "chunked", "a large body: in pieces");
  t.match(pieces.body, /^method: "POST"\n/, "strings double-quoted");
  t.equal(pieces.body, echoYaml(load(pieces.body) as object), "written by echoYaml");
  t.equal((load(pieces.body) as { body: { content: string } }).body.content, large.toString("utf8"));
});

t.test("quoted escapes what YAML does not allow raw", async (t) => {
  t.equal(quoted("\x7f\u0085\u2028\ufeff\uffff"), '"\\u007f\\u0085\\u2028\\ufeff\\uffff"');
  const s = "\x7f\u0085\u2028\ufeff\uffff";
  t.same(load(`k: ${quoted(s)}`), { k: s }, "and js-yaml reads them back");
});
