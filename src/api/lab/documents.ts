// The lab's fixed documents, by httpbin's names: an HTML page, a JSON one, an
// XML one, robots.txt, a page robots.txt denies, a page of UTF-8 text, a form
// that posts to /api/lab/post, pages of links, and a body decoded from
// base64. The words are this project's own; the JSON and XML keep httpbin's
// element and member names (a slideshow), which clients' tests read.
//
// Every route here that can answer HTML, SVG or XML declares a sandboxed
// answer (policies/sandbox.ts): base64 decodes whatever markup a link puts in
// its path, and none of it may run script as this origin.

import type { Request } from "../../http/message/request.js";
import type { Response } from "../../http/message/response.js";
import { refuse, whole } from "./params.js";

const HTML_TYPE = "text/html; charset=utf-8";

function text(type: string, body: string): Response {
  return { status: 200, headers: { "Content-Type": type }, body };
}

const PAGE = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>The request and the response</title></head>
<body>
<h1>The request and the response</h1>
<p>A client opens a connection and writes a request: a method, a target and a version on the first line, header fields one per line, an empty line, and perhaps a body whose length the head has announced.</p>
<p>The server reads the head before it decides anything. It may refuse the request from the head alone, before a byte of the body arrives; it may ask the client to go on; it may answer at once. Its answer has the same shape: a status line, header fields, an empty line, and a body framed so that the client knows where it ends.</p>
<p>Everything else, caching, redirects, content codings, ranges and conditions, is said in those header fields. This page is one such answer, sent as text/html.</p>
</body>
</html>
`;

export function htmlAnswer(): Response {
  return text(HTML_TYPE, PAGE);
}

const SLIDESHOW = {
  slideshow: {
    author: "The startline lab",
    date: "2026-01-01",
    slides: [
      { title: "What a request holds", type: "all" },
      { items: ["A method, a target and a version", "Header fields", "A body, framed"], title: "Its parts", type: "all" },
    ],
    title: "A sample slideshow",
  },
};

export function jsonDocAnswer(): Response {
  return text("application/json", JSON.stringify(SLIDESHOW) + "\n");
}

const XML = `<?xml version="1.0" encoding="us-ascii"?>
<!-- A sample slideshow, as httpbin's /xml names its elements -->
<slideshow title="A sample slideshow" date="2026-01-01" author="The startline lab">
  <slide type="all">
    <title>What a request holds</title>
  </slide>
  <slide type="all">
    <title>Its parts</title>
    <item>A method, a target and a version</item>
    <item>Header fields</item>
    <item>A body, framed</item>
  </slide>
</slideshow>
`;

export function xmlAnswer(): Response {
  return text("application/xml", XML);
}

export function robotsAnswer(): Response {
  return text("text/plain; charset=utf-8", "User-agent: *\nDisallow: /api/lab/deny\n");
}

export function denyAnswer(): Response {
  return text("text/plain; charset=utf-8", "robots.txt asks robots not to come here.\nA robot that reads this did not read it, or did not listen.\n");
}

const UTF8_PAGE = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>UTF-8 text</title></head>
<body>
<h1>UTF-8: one byte to four</h1>
<pre>
One byte (ASCII):        Hello, world
Two bytes (Latin, Greek): café, naïve, Ελληνικά, ß, ñ
Two bytes (Cyrillic):    Привет, мир
Three bytes (CJK):       你好，世界 · こんにちは · 안녕하세요
Three bytes (symbols):   € ← → ∀ ∃ ∑ √ ∞ ≠ ≤ ≥ ⌘ ☃ ✓
Four bytes (emoji):      🚀 🌍 🎉 𝄞 😀
Right to left:           שלום · مرحبا
Combining marks:         e\u0301 (e and U+0301) beside é (U+00E9)
</pre>
</body>
</html>
`;

export function utf8Answer(): Response {
  return text(HTML_TYPE, UTF8_PAGE);
}

const BASE64 = /^[A-Za-z0-9_\-+/]*={0,2}$/;
const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** The value decoded from base64 (the URL-safe alphabet, as httpbin's; the standard one too), as UTF-8 text in an HTML answer. */
export function base64Answer(request: Request, value: string): Response {
  const allowed = "base64 of UTF-8 text: A-Z, a-z, 0-9, - and _ (or + and /), = padding at the end (e.g. SFRUUCBpcyBmdW4= for \"HTTP is fun\")";
  if (!BASE64.test(value) || value.replace(/=+$/, "").length % 4 === 1) refuse(request, "value", allowed, `${JSON.stringify(value.slice(0, 100))} is not base64`);
  const bytes = Buffer.from(value.replace(/-/g, "+").replace(/_/g, "/"), "base64");
  let decoded: string;
  try {
    decoded = UTF8.decode(bytes);
  } catch {
    refuse(request, "value", allowed, "The decoded bytes are not UTF-8 text");
  }
  return text(HTML_TYPE, decoded);
}

export const MAX_LINKS = 200;

/** httpbin's links page: n links to the pages of the same set, the current one (offset) as plain text. */
export function linksAnswer(request: Request, nText: string, offsetText: string): Response {
  const n = whole(request, "n", nText, 1, MAX_LINKS);
  const offset = whole(request, "offset", offsetText, 0, n - 1);
  const items: string[] = [];
  for (let i = 0; i < n; i++) items.push(i === offset ? `${i} ` : `<a href="/api/lab/links/${n}/${i}">${i}</a> `);
  return text(HTML_TYPE, `<html><head><title>Links</title></head><body>${items.join("")}</body></html>`);
}

/** links/:n goes to the first page of the set, as httpbin's does. */
export function linksStart(request: Request, nText: string): Response {
  const n = whole(request, "n", nText, 1, MAX_LINKS);
  return { status: 302, headers: { Location: `/api/lab/links/${n}/0` } };
}

const FORM = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Order form</title></head>
<body>
<h1>Order form</h1>
<p>Sent as application/x-www-form-urlencoded to /api/lab/post, which shows the fields it received.</p>
<form method="post" action="/api/lab/post">
<p><label>Name: <input name="custname"></label></p>
<p><label>Telephone: <input type="tel" name="custtel"></label></p>
<p><label>E-mail: <input type="email" name="custemail"></label></p>
<fieldset><legend>Size</legend>
<label><input type="radio" name="size" value="small"> Small</label>
<label><input type="radio" name="size" value="medium"> Medium</label>
<label><input type="radio" name="size" value="large"> Large</label>
</fieldset>
<fieldset><legend>Toppings</legend>
<label><input type="checkbox" name="topping" value="bacon"> Bacon</label>
<label><input type="checkbox" name="topping" value="cheese"> Extra cheese</label>
<label><input type="checkbox" name="topping" value="onion"> Onion</label>
<label><input type="checkbox" name="topping" value="mushroom"> Mushroom</label>
</fieldset>
<p><label>Delivery time: <input type="time" name="delivery" min="11:00" max="21:00" step="900"></label></p>
<p><label>Instructions: <textarea name="comments"></textarea></label></p>
<p><button>Submit order</button></p>
</form>
</body>
</html>
`;

export function formAnswer(): Response {
  return text(HTML_TYPE, FORM);
}
