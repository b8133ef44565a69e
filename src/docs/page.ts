// The interactive page at GET /: one self-contained HTML document generated
// from the route table. The endpoint list is plain server-rendered HTML, so it
// reads without the script or the style; the script (page-script.ts) adds the
// form, the sending and the exchanges. Nothing is loaded from anywhere else,
// and the Content-Security-Policy says so: only this style and this script
// (by hash), and connections back to this server.

import { createHash } from "node:crypto";
import type { ServedRoute } from "../router/policy.js";
import { ANY_METHOD } from "../router/route.js";
import { pathParams } from "./openapi.js";
import { PAGE_SCRIPT } from "./page-script.js";

export interface PageOptions {
  readonly title: string;
  /** POST /api/wire is served: the page offers to send through it. */
  readonly wire: boolean;
}

export interface Page {
  readonly html: string;
  /** The Content-Security-Policy that goes with this html. */
  readonly csp: string;
}

/** What the script needs to fill the form for one route. */
interface Endpoint {
  readonly method: string;
  /** The method the form starts with, when `method` is "*" (any method): a custom one, since that is what such a route is for. */
  readonly tryMethod?: string;
  readonly path: string;
  readonly summary: string;
  readonly params: readonly { readonly name: string; readonly description: string; readonly example: string }[];
  /** The query parameters the route reads, each with the value the form starts with. */
  readonly query: readonly { readonly name: string; readonly description: string; readonly example: string; readonly required: boolean }[];
  readonly body: { readonly types: readonly string[]; readonly example: string } | null;
  /** A media type a success answer comes in, to start Accept with. */
  readonly accept: string;
  /** What the route's policies ask of the caller, as badges beside it and one sentence by the Authorization field. */
  readonly requires: readonly { readonly text: string; readonly title?: string }[];
  readonly needs: string;
}

const STYLE = `
:root{color-scheme:light;--line:#d0d4da;--soft:#f4f6f8;--ink:#1b1f24;--dim:#555c66;--accent:#0b5cad;--bad:#a4000f}
*{box-sizing:border-box}
body{font:16px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--ink);background:#fff;margin:0 auto;max-width:90rem;padding:1rem 1.25rem 3rem}
h1{font-size:1.6rem;margin:.2rem 0}h2{font-size:1.25rem;margin:1rem 0 .5rem}h3{font-size:1.05rem;margin:0 0 .25rem}h4{font-size:.95rem;margin:.75rem 0 .25rem}
a{color:var(--accent)}
code,pre,textarea,input{font-family:ui-monospace,"SFMono-Regular",Menlo,Consolas,monospace;font-size:.9rem}
main{display:grid;grid-template-columns:minmax(0,.8fr) minmax(0,1.2fr);gap:0 2rem;align-items:start}
@media (max-width:64rem){main{display:block}}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;vertical-align:top;padding:.3rem .45rem;border-bottom:1px solid var(--line)}
thead th{background:var(--soft)}
.m{font-weight:700}
#endpoints-section td:first-child{white-space:nowrap}
.p{overflow-wrap:anywhere}
h3,#chosen,.fields th,.fields td code{overflow-wrap:anywhere}
.tag{display:inline-block;font-size:.75rem;border:1px solid var(--dim);border-radius:.6rem;padding:0 .4rem;margin-left:.3rem;color:var(--dim)}
button{font:inherit;padding:.3rem .8rem;border:1px solid var(--accent);border-radius:.3rem;background:#fff;color:var(--accent);cursor:pointer}
button:hover{background:var(--soft)}
#send{background:var(--accent);color:#fff;font-weight:600;padding:.45rem 1.4rem}
:focus-visible{outline:3px solid #f5a623;outline-offset:2px}
fieldset{border:1px solid var(--line);border-radius:.3rem;margin:.6rem 0;padding:.4rem .8rem .6rem}
legend{font-weight:600;padding:0 .3rem}
.row{display:grid;grid-template-columns:9rem minmax(0,1fr);gap:.5rem;align-items:center;margin:.3rem 0}
.row label{font-weight:500}
input[type=text],input:not([type]),textarea{width:100%;padding:.3rem .4rem;border:1px solid #8a929c;border-radius:.25rem}
textarea{min-height:5.5rem;resize:vertical}
#raw{min-height:9rem;white-space:pre;overflow-wrap:normal;overflow-x:auto}
.hint,.via,.note{color:var(--dim);font-size:.88rem;margin:.15rem 0}
#chosen{font-weight:600}
.ex{border:1px solid var(--line);border-radius:.4rem;padding:.7rem .9rem;margin:0 0 1rem}
.msg{border-left:4px solid var(--accent);padding-left:.7rem;margin:.5rem 0}
.status{font-size:1rem;font-weight:700}
pre.body{background:var(--soft);padding:.5rem;max-height:22rem;overflow:auto;white-space:pre-wrap;word-break:break-word;margin:0}
.fields th{width:14rem;font-weight:600}
table.wire{margin:.4rem 0 .8rem;font-size:.9rem}
table.wire caption{text-align:left;font-weight:600;padding:.3rem 0}
table.wire td{overflow-wrap:anywhere}
table.wire td:last-child code{white-space:pre-wrap;word-break:break-all;display:block;max-height:14rem;overflow:auto}
.off{white-space:nowrap;color:var(--dim);font-variant-numeric:tabular-nums}
.ctl{display:inline-block;white-space:nowrap;font:600 .62rem/1 system-ui,sans-serif;border:1px solid currentColor;border-radius:.2rem;padding:.05rem .15rem;margin:0 .1rem;color:#6b3fb0;vertical-align:.1rem}
mark .ctl,mark{color:#fff}
table.wire th:first-child{width:6.5rem}table.wire th:nth-child(2){width:30%}
tr.bad td{background:#fff0f0}
mark{background:var(--bad);color:#fff;padding:0 .1rem}
.err{color:var(--bad)}
.facts{margin:.2rem 0 .8rem}
details.wire>summary{cursor:pointer;font-weight:600;color:var(--accent);margin:.4rem 0}
@media (max-width:40rem){
body{padding:.75rem .75rem 2rem}
th,td{padding:.3rem .3rem}
.row{grid-template-columns:7rem minmax(0,1fr)}
fieldset{padding:.3rem .5rem .5rem}
.ex{padding:.5rem .6rem}
.msg{padding-left:.5rem}
.fields th{width:38%}
table.wire{font-size:.8rem}
table.wire th:first-child{width:4.2rem}table.wire th:nth-child(2){width:27%}
}
`;

function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Backticks in summaries mark code, as in the README. */
function summaryHtml(text: string): string {
  return esc(text).replace(/`([^`]+)`/g, "<code>$1</code>");
}

const ANY_METHOD_EXAMPLE = "PURGE";

function endpoints(routes: readonly ServedRoute[]): Endpoint[] {
  return routes.map((route) => {
    const requires = route.policyDocs.flatMap((policy) => (policy.requires === undefined ? [] : [policy.requires]));
    const success = Object.entries(route.responses ?? {}).find(([status, doc]) => Number(status) < 300 && doc.mediaTypes !== undefined);
    return {
      method: route.method,
      ...(route.method === ANY_METHOD ? { tryMethod: ANY_METHOD_EXAMPLE } : {}),
      path: route.path,
      summary: route.summary,
      params: pathParams(route).map((name) => ({
        name,
        description: route.params?.[name]?.description ?? "",
        example: route.params?.[name]?.example ?? "",
      })),
      query: Object.entries(route.query ?? {}).map(([name, doc]) => ({ name, description: doc.description, example: doc.example ?? "", required: doc.required === true })),
      body: route.request === undefined ? null : { types: route.request.mediaTypes, example: route.request.example ?? "" },
      accept: success?.[1].mediaTypes?.[0] ?? "",
      requires: requires.map((r) => r.badge),
      needs: requires.map((r) => r.needs).join(" "),
    };
  });
}

function endpointRows(list: readonly Endpoint[]): string {
  return list
    .map((e, i) => {
      const tags =
        (e.method === ANY_METHOD ? '<span class="tag" title="* stands for any method token">any method</span>' : "") +
        e.requires.map((badge) => `<span class="tag"${badge.title === undefined ? "" : ` title="${esc(badge.title)}"`}>${esc(badge.text)}</span>`).join("");
      // Path and summary share a cell: a fourth column does not fit a phone's width.
      return (
        `<tr><td><code class="m">${esc(e.method)}</code></td>` +
        `<td><code class="p">${esc(e.path)}</code><div>${summaryHtml(e.summary)}${tags}</div></td>` +
        `<td><button type="button" data-i="${i}" aria-label="Try ${esc(e.method)} ${esc(e.path)}">Try</button></td></tr>`
      );
    })
    .join("\n");
}

const MEDIA_TYPES = ["application/json", "application/yaml", "application/merge-patch+json", "application/problem+json", "text/plain", "text/html", "*/*"];

const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;

export function buildPage(routes: readonly ServedRoute[], options: PageOptions): Page {
  const list = endpoints(routes);
  // "<" escaped so no text in the data can close the script element.
  const data = JSON.stringify(list).replace(/</g, "\\u003c");
  const wire = options.wire;
  const sendWith = wire
    ? `<fieldset><legend>Send with</legend>
<div><label><input type="radio" name="via" value="wire" checked> the wire view: the exact bytes below, run in the server by the same parser, router and handlers as a socket, with every part shown</label></div>
<div><label><input type="radio" name="via" value="fetch"> fetch() from this browser, over a real connection</label></div>
</fieldset>
<details open><summary>Raw request (what the wire view sends)</summary>
<label for="raw" class="hint">Built from the fields above; edit it to send anything at all, malformed bytes included. Changing a field above rebuilds it.</label>
<textarea id="raw" name="raw" wrap="off" spellcheck="false" autocomplete="off"></textarea>
<div><label><input type="checkbox" id="crlf" checked> End the head's lines with CR LF (uncheck to send bare LF, which the server refuses)</label></div>
</details>`
    : `<p class="hint">The wire view is turned off on this server (WIRE_VIEW=0), so requests are sent with fetch() from this browser.</p>`;
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(options.title)}: try the API</title>
<link rel="icon" href="data:,">
<style>${STYLE}</style>
</head>
<body data-wire="${wire ? 1 : 0}">
<header>
<h1>${esc(options.title)}</h1>
<p>An HTTP/1.1 server written from the bytes up. Pick an endpoint, fill in the form, send it, and read the answer${wire ? ", down to the bytes in the wire view" : ""}.
The same route table is described by <a href="/api/openapi.json">/api/openapi.json</a> (and <a href="/api/openapi.yaml">YAML</a>), an OpenAPI 3.2 document.</p>
</header>
<main>
<section id="endpoints-section" aria-labelledby="endpoints-h">
<h2 id="endpoints-h">Endpoints</h2>
<table>
<thead><tr><th scope="col">Method</th><th scope="col">Path and what it does</th><th scope="col"><span class="hint">Form</span></th></tr></thead>
<tbody>
${endpointRows(list)}
</tbody>
</table>
</section>
<div id="work">
<section id="request-section" aria-labelledby="request-h">
<h2 id="request-h">Request</h2>
<p id="chosen" aria-live="polite"></p>
<form id="f" novalidate>
<div class="row"><label for="method">Method</label><input id="method" name="method" spellcheck="false" autocomplete="off"></div>
<div class="row"><label for="path">Path</label><input id="path" name="path" spellcheck="false" autocomplete="off" aria-describedby="path-hint"></div>
<p id="path-hint" class="hint">A <code>:name</code> segment is filled from the path parameters below.</p>
<fieldset id="params" hidden></fieldset>
<fieldset id="query" hidden></fieldset>
<fieldset><legend>Header fields</legend>
<div class="row"><label for="accept">Accept</label><input id="accept" name="accept" list="types" spellcheck="false" autocomplete="off"></div>
<div class="row"><label for="ctype">Content-Type</label><input id="ctype" name="ctype" list="types" spellcheck="false" autocomplete="off"></div>
<div class="row"><label for="auth">Authorization</label><input id="auth" name="auth" spellcheck="false" autocomplete="off" placeholder="Bearer <token>" aria-describedby="auth-hint"></div>
<p id="auth-hint" class="hint"><strong id="needs"></strong> The whole field value, e.g. <code>Bearer sl_…</code>; kept when you pick another endpoint.
Where an administrator's token comes from: the server prints one once, at its first start, unless <code>ADMIN_TOKEN</code> sets one; <code>npm run token -- add --role admin</code> makes another (see docs/operations.md).</p>
</fieldset>
<label for="body"><strong>Body</strong></label>
<textarea id="body" name="body" spellcheck="false" autocomplete="off"></textarea>
${sendWith}
<p><button id="send" type="submit">Send</button></p>
</form>
<datalist id="types">${MEDIA_TYPES.map((t) => `<option value="${t}">`).join("")}</datalist>
</section>
<section id="exchanges" aria-labelledby="exchanges-h">
<h2 id="exchanges-h">Exchanges</h2>
<p class="hint">Newest first. Each shows the status line, the header fields and the body${wire ? "; open its wire view to see every part of both messages with byte offsets" : ""}.</p>
<div id="log"></div>
</section>
</div>
</main>
<script type="application/json" id="endpoints">${data}</script>
<script>${PAGE_SCRIPT}</script>
</body>
</html>
`;
  const csp = [
    "default-src 'none'",
    `script-src ${sha256(PAGE_SCRIPT)}`,
    `style-src ${sha256(STYLE)}`,
    "connect-src 'self'",
    "img-src data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
  return { html, csp };
}
