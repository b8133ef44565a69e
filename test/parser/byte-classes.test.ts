// The byte classes (src/http/parse/byte-classes.ts): one function decides
// every byte's class, the sets made of classes are the RFC's, and every user
// of the token set (parser, router, page script) reads the same one.

import t from "tap";
import { BIT, CLASS, CLASS_COUNT, FIELD_VALUE, FIELD_VALUE_SET, HEXDIG_SET, HOST, HOST_SET, QDTEXT, QDTEXT_SET, TARGET, TARGET_SET, TCHAR, TOKEN_SET, classOf, inSet, isToken, tokenPattern } from "../../src/http/parse/byte-classes.js";
import { compileRoutes } from "../../src/router/compile.js";
import { PAGE_SCRIPT } from "../../src/docs/page-script.js";

const ALPHA = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DIGIT = "0123456789";
const setOf = (chars: string) => new Set([...chars].map((c) => c.charCodeAt(0)));
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

t.test("the sets are the RFC's, byte for byte", (t) => {
  const expected: [string, number, (b: number) => boolean][] = [
    // RFC 9110 §5.6.2
    ["tchar", TOKEN_SET, (b) => setOf(`${ALPHA}${DIGIT}!#$%&'*+-.^_\`|~`).has(b)],
    // RFC 3986 unreserved / sub-delims / ":" "@" "/" "?" "%" "[" "]"
    ["target", TARGET_SET, (b) => setOf(`${ALPHA}${DIGIT}-._~!$&'()*+,;=:@/?%[]`).has(b)],
    // RFC 9110 §5.5 field-vchar, SP, HTAB
    ["field value", FIELD_VALUE_SET, (b) => b === 0x09 || (b >= 0x20 && b !== 0x7f)],
    // RFC 9110 §5.6.4 qdtext
    ["qdtext", QDTEXT_SET, (b) => b === 0x09 || b === 0x20 || b === 0x21 || (b >= 0x23 && b <= 0x5b) || (b >= 0x5d && b !== 0x7f)],
    ["host", HOST_SET, (b) => setOf(`${ALPHA}${DIGIT}-._~!$&'()*+,;=:[]%`).has(b)],
    ["hexdig", HEXDIG_SET, (b) => setOf(`${DIGIT}abcdefABCDEF`).has(b)],
  ];
  for (const [name, mask, member] of expected) {
    const wrong = range(0, 255).filter((b) => inSet(mask, b) !== member(b));
    t.same(wrong, [], `${name}: no byte misplaced`);
  }
  // The parser's lookup tables are the same sets.
  for (const [name, table, mask] of [["TCHAR", TCHAR, TOKEN_SET], ["TARGET", TARGET, TARGET_SET], ["FIELD_VALUE", FIELD_VALUE, FIELD_VALUE_SET], ["QDTEXT", QDTEXT, QDTEXT_SET], ["HOST", HOST, HOST_SET]] as const) {
    t.same(range(0, 255).filter((b) => (table[b] === 1) !== inSet(mask, b)), [], `${name} is its set`);
  }
  t.end();
});

t.test("one function decides a byte's class, and the tables are made from it", (t) => {
  for (const b of range(0, 255)) {
    if (CLASS[b] !== classOf(b) || BIT[b] !== 1 << classOf(b)) t.fail(`byte ${b}`);
  }
  t.ok(CLASS_COUNT <= 32, "a set of classes fits a 32-bit mask");
  t.end();
});

t.test("the router and the page script take the token set from the parser's classes", (t) => {
  const page = /var TOKEN = new RegExp\(("[^"]*")\);/.exec(PAGE_SCRIPT);
  t.ok(page, "the page script builds its pattern from the generated source");
  const pageToken = new RegExp(JSON.parse(page![1]!) as string);
  t.equal(pageToken.source, new RegExp(tokenPattern()).source);
  for (const b of range(0, 255)) {
    const one = String.fromCharCode(b);
    const token = inSet(TOKEN_SET, b);
    if (isToken(one) !== token) t.fail(`isToken ${b}`);
    if (pageToken.test(one) !== token) t.fail(`page script, byte ${b}`);
    let routed = true;
    try {
      compileRoutes([{ method: one, path: "/", handler: () => ({ status: 204 }) } as never]);
    } catch {
      routed = false;
    }
    if (routed !== token) t.fail(`router, byte ${b}`);
  }
  t.notOk(isToken(""), "a token has at least one byte");
  t.pass("256 bytes agree");
  t.end();
});
