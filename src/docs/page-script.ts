// The interactive page's script, inlined into the page (no external files):
// fills the form from the endpoint table, builds the raw request, sends it
// through the wire view or with fetch(), and shows each exchange.
//
// It is browser JavaScript kept in a string, so it avoids template literals
// (this file's own delimiters). The page's Content-Security-Policy allows this
// exact text by its hash and nothing else. What a method token may hold is
// not written here: the pattern is made from the parser's byte classes
// (src/http/parse/byte-classes.ts), so the form refuses what the server would.

import { tokenPattern } from "../http/parse/byte-classes.js";

export const PAGE_SCRIPT = String.raw`
(function () {
  "use strict";
  var $ = function (id) { return document.getElementById(id); };
  var EP = JSON.parse($("endpoints").textContent);
  var WIRE = document.body.getAttribute("data-wire") === "1";
  var form = $("f"), method = $("method"), path = $("path"), params = $("params"), query = $("query"), accept = $("accept");
  var ctype = $("ctype"), auth = $("auth"), body = $("body"), raw = $("raw"), crlf = $("crlf"), log = $("log");
  var TOKEN = new RegExp(${JSON.stringify(tokenPattern())});
  var values = {};
  // The query's fields of the chosen endpoint, in order: [name, input].
  var queryFields = [];
  var count = 0;

  function el(tag, attrs, kids) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) {
      if (k === "text") e.textContent = attrs[k]; else e.setAttribute(k, attrs[k]);
    }
    (kids || []).forEach(function (c) { if (c != null) e.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return e;
  }

  function names() {
    var out = [], re = /\/:([^/]+)/g, m;
    while ((m = re.exec(path.value))) out.push(m[1]);
    return out;
  }

  function renderParams(examples) {
    params.textContent = "";
    var list = names();
    params.hidden = list.length === 0;
    if (list.length === 0) return;
    params.appendChild(el("legend", { text: "Path parameters" }));
    list.forEach(function (n) {
      var id = "p-" + n;
      if (values[n] == null && examples && examples[n] != null) values[n] = examples[n];
      var input = el("input", { id: id, name: id, autocomplete: "off", spellcheck: "false", required: "" });
      input.value = values[n] || "";
      input.addEventListener("input", function () { values[n] = input.value; rebuild(); });
      params.appendChild(el("div", { class: "row" }, [el("label", { for: id, text: ":" + n }), input]));
    });
  }

  function renderQuery(list) {
    query.textContent = "";
    queryFields = [];
    query.hidden = list.length === 0;
    if (list.length === 0) return;
    query.appendChild(el("legend", { text: "Query parameters (an empty one is left out)" }));
    list.forEach(function (q) {
      var id = "q-" + q.name;
      var input = el("input", { id: id, name: id, autocomplete: "off", spellcheck: "false", title: q.description, placeholder: q.example });
      // A required one starts with its example, so the form works as it comes; the others are left out until filled.
      input.value = q.required ? q.example : "";
      input.addEventListener("input", rebuild);
      queryFields.push([q.name, input]);
      query.appendChild(el("div", { class: "row" }, [el("label", { for: id, text: "?" + q.name }), input]));
    });
  }

  function target() {
    var t = path.value.replace(/\/:([^/]+)/g, function (_, n) { return "/" + encodeURIComponent(values[n] || ""); });
    var pairs = queryFields.filter(function (f) { return f[1].value !== ""; }).map(function (f) {
      return encodeURIComponent(f[0]) + "=" + encodeURIComponent(f[1].value);
    });
    return pairs.length === 0 ? t : t + (t.indexOf("?") === -1 ? "?" : "&") + pairs.join("&");
  }

  function utf8Length(s) { return new TextEncoder().encode(s).length; }

  // The request as text, head lines ending in LF; wireBytes() turns them into CR LF.
  function build() {
    var lines = [method.value + " " + target() + " HTTP/1.1", "Host: " + location.host];
    if (accept.value) lines.push("Accept: " + accept.value);
    if (ctype.value) lines.push("Content-Type: " + ctype.value);
    if (auth.value) lines.push("Authorization: " + auth.value);
    if (body.value) lines.push("Content-Length: " + utf8Length(body.value));
    return lines.join("\n") + "\n\n" + body.value;
  }

  function rebuild() { if (raw) raw.value = build(); }

  function wireBytes() {
    var text = raw.value;
    if (!crlf.checked) return text;
    var end = text.indexOf("\n\n");
    var head = end === -1 ? text : text.slice(0, end + 2);
    // Only the head: the body is sent as written, so Content-Length still counts it right.
    return head.replace(/\r?\n/g, "\r\n") + (end === -1 ? "" : text.slice(end + 2));
  }

  function pick(i, focus) {
    var e = EP[i];
    method.value = e.tryMethod || e.method;
    path.value = e.path;
    accept.value = e.accept;
    ctype.value = e.body ? e.body.types[0] : "";
    body.value = e.body && e.body.example ? e.body.example : "";
    values = {};
    var examples = {};
    e.params.forEach(function (p) { examples[p.name] = p.example; });
    renderParams(examples);
    renderQuery(e.query);
    rebuild();
    $("chosen").textContent = e.method + " " + e.path + ": " + e.summary.replace(/\x60/g, "");
    // Beside the Authorization field, where it tells what to put there (the summary may say it too; the heading need not say it twice).
    $("needs").textContent = e.needs;
    if (focus) (params.querySelector("input") || $("send")).focus();
  }

  document.querySelectorAll("button[data-i]").forEach(function (b) {
    b.addEventListener("click", function () { pick(Number(b.getAttribute("data-i")), true); });
  });
  [method, accept, ctype, auth, body].forEach(function (i) { i.addEventListener("input", rebuild); });
  path.addEventListener("input", function () { renderParams(null); rebuild(); });

  // ---- Showing an exchange ----

  // Control bytes drawn as small labels (CR, LF, HT, 0x01...), so line endings and stray bytes can be seen.
  var NAMES = { "\r": "CR", "\n": "LF", "\t": "HT", "\u0000": "NUL", " ": "SP" };
  function label(c) {
    var code = c.charCodeAt(0);
    return NAMES[c] || "0x" + (code < 16 ? "0" : "") + code.toString(16);
  }
  function visible(text) {
    var frag = document.createDocumentFragment();
    text.split(/([\u0000-\u0008\u000a-\u001f\u007f])/).forEach(function (s) {
      if (s.length === 1 && /[\u0000-\u0008\u000a-\u001f\u007f]/.test(s)) {
        frag.appendChild(el("span", { class: "ctl", title: "byte " + label(s) + (s === "\r" ? " (carriage return)" : s === "\n" ? " (line feed)" : ""), text: label(s) }));
        if (s === "\n") frag.appendChild(document.createTextNode("\n"));
      } else if (s) frag.appendChild(document.createTextNode(s));
    });
    return frag;
  }

  // JSON indented, with one liberty taken for reading: a string's line breaks
  // are shown as line breaks, not as \n escapes that run a long text into one
  // line; the text after a break starts at the left, as wrapped lines do. (The
  // wire view shows the exact bytes.) Sets broke when it took the liberty.
  var broke = false;
  function indent(v, pad) {
    var inner = pad + "  ";
    if (Array.isArray(v)) return v.length === 0 ? "[]" : "[\n" + v.map(function (x) { return inner + indent(x, inner); }).join(",\n") + "\n" + pad + "]";
    if (v !== null && typeof v === "object") {
      var keys = Object.keys(v);
      return keys.length === 0 ? "{}" : "{\n" + keys.map(function (k) { return inner + JSON.stringify(k) + ": " + indent(v[k], inner); }).join(",\n") + "\n" + pad + "}";
    }
    if (typeof v === "string" && v.indexOf("\n") !== -1) {
      broke = true;
      return '"' + v.split(/\r?\n/).map(function (line) { return JSON.stringify(line).slice(1, -1); }).join("\n") + '"';
    }
    return JSON.stringify(v);
  }

  function pretty(text, type) {
    broke = false;
    if (!/json/.test(type || "")) return text;
    try { return indent(JSON.parse(text), ""); } catch (e) { return text; }
  }

  function fieldsTable(fields) {
    return el("table", { class: "fields" }, [el("tbody", null, fields.map(function (f) {
      return el("tr", null, [el("th", { scope: "row", text: f[0] }), el("td", null, [el("code", { text: f[1] })])]);
    }))]);
  }

  function message(statusText, fields, bodyText) {
    var type = "";
    fields.forEach(function (f) { if (f[0].toLowerCase() === "content-type") type = f[1]; });
    var box = el("div", { class: "msg" }, [
      el("p", null, [el("strong", { text: "Status line: " }), el("code", { class: "status", text: statusText })]),
      el("h4", { text: "Header fields" }), fieldsTable(fields),
    ]);
    if (bodyText) {
      var shown = pretty(bodyText, type);
      box.appendChild(el("h4", { text: shown === bodyText ? "Body" : broke ? "Body (JSON, indented for reading; line breaks inside strings shown as breaks, not \\n)" : "Body (JSON, indented for reading)" }));
      box.appendChild(el("pre", { class: "body", tabindex: "0", text: shown }));
    } else box.appendChild(el("p", { text: "No body." }));
    return box;
  }

  function partRows(parts, error) {
    return parts.map(function (p) {
      var code = el("code");
      if (p.error && error) {
        var at = error.offset - p.start;
        code.appendChild(visible(p.text.slice(0, at)));
        var c = p.text.charAt(at);
        code.appendChild(el("mark", { title: "the error is here: byte " + error.offset, text: c === "" ? "(end)" : /[\u0000-\u0020\u007f]/.test(c) ? label(c) : c }));
        code.appendChild(visible(p.text.slice(at + 1)));
      } else code.appendChild(visible(p.text));
      var what = el("td", null, [p.label, p.note ? el("div", { class: "note", text: p.note }) : null]);
      return el("tr", p.error ? { class: "bad" } : null, [el("td", { class: "off", text: p.end > p.start ? p.start + "\u2013" + (p.end - 1) : String(p.start) }), what, el("td", null, [code])]);
    });
  }

  function partsTable(caption, parts, error) {
    return el("table", { class: "wire" }, [
      el("caption", { text: caption }),
      el("thead", null, [el("tr", null, [el("th", { scope: "col", text: "Offsets" }), el("th", { scope: "col", text: "Part" }), el("th", { scope: "col", text: "Bytes as text (control bytes as labels)" })])]),
      el("tbody", null, partRows(parts, error)),
    ]);
  }

  function wireView(view) {
    var box = el("div", { class: "wireview" });
    var rq = view.request, rs = view.response;
    box.appendChild(el("h4", { text: "Request: " + rq.bytes + " bytes, as the parser read them" }));
    if (rq.error) {
      var e = rq.error;
      box.appendChild(el("p", { class: "err", role: "note" }, [
        el("strong", { text: "Rule broken: " + e.title + " (" + e.code + ", " + e.rule + "). " }),
        "Found at byte " + e.offset + " (byte " + e.offsetInRequest + " of request " + (e.request + 1) + "); the server answers " + e.status + ". " + e.detail,
      ]));
    }
    rq.requests.forEach(function (r, i) {
      var title = "Request " + (i + 1) + ": " + (r.method || "?") + " " + (r.target || "") + " (" + r.state + ")";
      box.appendChild(partsTable(title, r.parts, rq.error));
      var facts = [];
      if (r.framing) facts.push(el("li", null, [el("strong", { text: "Framing: " }), r.framing.reason]));
      if (r.keepAlive) facts.push(el("li", null, [el("strong", { text: "Connection: " }), r.keepAlive.reason]));
      if (r.notRun) facts.push(el("li", null, [el("strong", { text: r.notRun })]));
      if (facts.length) box.appendChild(el("ul", { class: "facts" }, facts));
    });
    // Past the requests one body may hold, the run stopped at a head it had read: those bytes were not run, rather than not read.
    if (rq.unread) box.appendChild(partsTable(view.cut && view.cut.pastRequestLimit === rq.unread.start ? "Not run" : "Not read", [rq.unread], null));
    box.appendChild(el("h4", { text: "Response: " + rs.bytes + " bytes, as the server wrote them" }));
    rs.responses.forEach(function (r, i) {
      box.appendChild(partsTable("Response " + (i + 1) + (r.answers == null ? " (interim)" : " to request " + (r.answers + 1)) + ": " + r.statusLine, r.parts, null));
    });
    return box;
  }

  function exchange(title, via) {
    count++;
    var art = el("article", { class: "ex", "aria-labelledby": "ex" + count }, [el("h3", { id: "ex" + count, tabindex: "-1", text: title }), el("p", { class: "via", text: via })]);
    log.insertBefore(art, log.firstChild);
    while (log.children.length > 20) log.removeChild(log.lastChild);
    return art;
  }

  function done(art, summary) {
    art.querySelector("h3").textContent += " \u2192 " + summary;
    art.querySelector("h3").focus();
  }

  function sendWire() {
    var bytes = wireBytes();
    var first = bytes.split(/\r?\n/)[0];
    var art = exchange(first, "Sent through the wire view: these exact bytes, run in the server by the same parser, router and handlers as a socket.");
    // message/http, not text/plain: a type pages of other sites cannot send without a CORS preflight, so the wire view can refuse them.
    fetch("/api/wire", { method: "POST", headers: { "Content-Type": "message/http", Accept: "application/json" }, body: bytes })
      .then(function (res) { return res.text().then(function (t) { return { res: res, text: t }; }); })
      .then(function (r) {
        if (r.res.status !== 200) {
          var fields = [];
          r.res.headers.forEach(function (v, k) { fields.push([k, v]); });
          art.appendChild(el("p", { class: "err", text: "The wire view itself refused the request:" }));
          art.appendChild(message(r.res.status + " " + r.res.statusText, fields, r.text));
          done(art, "wire view: " + r.res.status);
          return;
        }
        var view = JSON.parse(r.text);
        var finals = view.response.responses.filter(function (m) { return m.answers != null; });
        finals.forEach(function (m) {
          // The body: one part, or the data of each chunk of a streamed one.
          var text = "", omitted = 0;
          m.parts.forEach(function (p) {
            if (p.kind === "body" || p.kind === "chunk-data") { text += p.text; omitted += p.omitted || 0; }
            else if (p.kind === "omitted" && text) omitted += p.omitted || 0;
          });
          if (omitted) text += "\n\u2026 " + omitted + " more bytes not shown (the wire view's output budget)";
          art.appendChild(message(m.statusLine, m.fields.map(function (f) { return [f.name, f.value]; }), text));
        });
        if (view.cut) art.appendChild(el("p", { class: "err", role: "note", text: view.cut.detail }));
        if (finals.length === 0) art.appendChild(el("p", { text: "No response: the input ended before a request was complete." }));
        // Open: the wire view is what the learner sent through it to see.
        var d = el("details", { class: "wire", open: "" }, [el("summary", { text: "Wire view: every part, with byte offsets" }), wireView(view)]);
        art.appendChild(d);
        done(art, finals.map(function (m) { return m.statusLine.split(" ").slice(1).join(" "); }).join(", ") || "no response");
      })
      .catch(function (err) { art.appendChild(el("p", { class: "err", text: "The wire view could not be reached: " + err.message })); done(art, "failed"); });
  }

  function sendFetch() {
    var m = method.value, t = target();
    var art = exchange(m + " " + t, "Sent with fetch() from this browser over a real connection; the browser adds header fields of its own and does not show the status line itself.");
    var headers = {};
    if (accept.value) headers.Accept = accept.value;
    if (ctype.value) headers["Content-Type"] = ctype.value;
    if (auth.value) headers.Authorization = auth.value;
    var init = { method: m, headers: headers, cache: "no-store" };
    if (body.value && m !== "GET" && m !== "HEAD") init.body = body.value;
    fetch(t, init)
      .then(function (res) { return res.text().then(function (text) { return { res: res, text: text }; }); })
      .then(function (r) {
        var fields = [];
        r.res.headers.forEach(function (v, k) { fields.push([k, v]); });
        var line = r.res.status + " " + r.res.statusText;
        art.appendChild(message(line, fields, r.text));
        done(art, line);
      })
      .catch(function (err) { art.appendChild(el("p", { class: "err", text: "fetch() failed: " + err.message })); done(art, "failed"); });
  }

  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    var via = WIRE && form.elements.via ? form.elements.via.value : "fetch";
    if (via === "fetch" && !TOKEN.test(method.value)) { method.setCustomValidity("A method is a token: letters, digits and !#$%&'*+-.^_|~ (RFC 9110 \u00a79.1)"); method.reportValidity(); return; }
    method.setCustomValidity("");
    if (via === "wire") sendWire(); else sendFetch();
  });

  pick(0, false);
})();
`;
