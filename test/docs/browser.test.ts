// The interactive page in a real browser: Debian's Chromium driven by
// playwright-core, against the compiled server started the way `npm start`
// starts it. Never skipped: CI installs Chromium (.ci/install-system-packages), and a
// missing browser is a failure that says how to get one.

import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import t, { type Test } from "tap";
import { startServer } from "../helpers/process.js";
import { listen } from "../helpers/wire.js";
import { ROOT } from "../helpers/root.js";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/lib/chromium/chromium";
const ADMIN_TOKEN = "admin-token-browser-0123456789";
const ARTIFACTS = path.join(ROOT, "test", "artifacts");

/** The newest exchange on the page (the `count`th), once its answer is in. */
async function lastExchange(page: Page, count: number) {
  // Locators only: the page's Content-Security-Policy forbids evaluating strings, test code included.
  const all = page.locator("#log article");
  await all.nth(count - 1).waitFor();
  await all.first().locator("h3", { hasText: "\u2192" }).waitFor();
  return all.first();
}

/** The server, started as `npm start` starts it with `adminToken`, and a Chromium of its own; both go when `t` ends. */
async function session(t: Test, adminToken: string): Promise<{ base: string; context: BrowserContext }> {
  const server = startServer({ ADMIN_TOKEN: adminToken, QUIET: "1" });
  t.teardown(async () => {
    server.child.kill("SIGTERM");
    await server.exited();
  });
  const base = await server.url();
  const profile = mkdtempSync(path.join(tmpdir(), "startline-chromium-"));
  t.teardown(() => rmSync(profile, { recursive: true, force: true }));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true, // playwright passes --headless
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
    viewport: { width: 1360, height: 900 },
  });
  t.teardown(() => context.close());
  return { base, context };
}

/** A session's first page, collecting script errors; undefined (and a failure that says how to get it) without Chromium. */
async function pageSession(t: Test): Promise<{ base: string; context: BrowserContext; page: Page; problems: string[] } | undefined> {
  if (!existsSync(CHROMIUM)) {
    t.fail(`Chromium is not at ${CHROMIUM}: run .ci/install-system-packages (or set CHROMIUM_PATH)`);
    return undefined;
  }
  const { base, context } = await session(t, ADMIN_TOKEN);
  const page = context.pages()[0] ?? (await context.newPage());
  const problems: string[] = [];
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  return { base, context, page, problems };
}

t.test("the page in Chromium: UPDATE with and without a token, YAML, the wire view", async (t) => {
  const opened = await pageSession(t);
  if (opened === undefined) return;
  const { base, context, page, problems } = opened;
  page.on("console", (m) => {
    // Chromium logs every 4xx answer to fetch() as an error; the 401 above is one on purpose.
    if (m.type() === "error" && !/the server responded with a status of 4\d\d/.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  const offsite: string[] = [];
  page.on("request", (r) => {
    if (!r.url().startsWith(base) && !r.url().startsWith("data:")) offsite.push(r.url());
  });

  await page.goto(base + "/");
  t.equal(await page.title(), "startline: try the API");
  t.ok(await page.getByRole("cell", { name: "/api/v1/artigo/:id" }).first().isVisible(), "the endpoint table is shown");
  t.equal(await page.locator(".tag", { hasText: /token/ }).allInnerTexts().then((tags) => tags.join()), "admin token", "WRITE_REQUIRES_TOKEN is off: only UPDATE's badge");
  t.ok(await page.getByText("npm run token -- add --role admin").isVisible(), "where an administrator's token comes from, on the page");

  const send = page.getByRole("button", { name: "Send", exact: true });
  const field = (name: string) => page.getByLabel(name, { exact: true });
  const fetchMode = page.getByLabel("fetch() from this browser, over a real connection");
  const wireMode = page.getByLabel(/the wire view: the exact bytes below/);
  let exchanges = 0;

  // UPDATE without a token, with fetch(): the browser sends the custom method itself.
  await page.getByRole("button", { name: "Try UPDATE /api/v1/artigo/:id" }).click();
  t.equal(await field(":id").inputValue(), "1", "the example id is filled in");
  const chosen = await page.locator("#chosen").innerText();
  t.equal(chosen.match(/administrator/gi)?.length, 1, `the heading says it once: ${chosen}`);
  t.equal(await page.locator("#needs").innerText(), "This endpoint needs an administrator's token.", "beside the Authorization field");
  await field("Body").fill('{"title": "Changed from the browser"}');
  await fetchMode.check();
  await send.click();
  let ex = await lastExchange(page, ++exchanges);
  t.match(await ex.locator("h3").innerText(), /^UPDATE \/api\/v1\/artigo\/1 → 401 Unauthorized$/);
  t.match(await ex.innerText(), /www-authenticate/i);
  t.match(await ex.locator("pre.body").innerText(), /"status": 401/);

  // With the administrator's token, through the wire view: 200 and the changed article.
  await field("Authorization").fill(`Bearer ${ADMIN_TOKEN}`);
  await wireMode.check();
  const raw = await page.getByLabel(/Built from the fields above/).inputValue();
  t.match(raw, /^UPDATE \/api\/v1\/artigo\/1 HTTP\/1\.1\nHost: 127\.0\.0\.1:\d+\n/, "the raw request starts with the request line and Host");
  t.match(raw, /\nAuthorization: Bearer admin-token-browser-0123456789\n/, "and carries the token");
  t.match(raw, /\nContent-Length: 37\n\n\{"title": "Changed from the browser"\}$/, "and the body with its length");
  await send.click();
  ex = await lastExchange(page, ++exchanges);
  t.match(await ex.locator("h3").innerText(), /^UPDATE \/api\/v1\/artigo\/1 HTTP\/1\.1 → 200 OK$/);
  t.match(await ex.locator(".status").innerText(), "HTTP/1.1 200 OK", "the status line exactly as written");
  const shown = await ex.locator("pre.body").innerText();
  t.match(shown, /"title": "Changed from the browser"/);
  // A long text with paragraphs reads as paragraphs: its line breaks are breaks, not \n escapes.
  const article = (await (await fetch(`${base}/api/v1/artigo/1`)).json()) as { body: string };
  const paragraphs = article.body.split("\n\n");
  t.ok(paragraphs.length > 1, "the seeded article has paragraphs");
  for (const p of paragraphs) t.ok(shown.includes(`\n${JSON.stringify(p).slice(1, -1)}`) || shown.includes(`"body": "${JSON.stringify(p).slice(1, -1)}`), `paragraph on a line of its own: ${p.slice(0, 30)}`);
  t.notOk(shown.includes("\\n"), "no \\n escape left in the shown body");
  t.match(await ex.locator("h4", { hasText: "Body" }).innerText(), /line breaks inside strings shown as breaks/, "and the heading says so");
  t.ok(await ex.locator("details.wire .wireview").isVisible(), "the wire view is open after a send through it");

  // The change is stored: read it back over a real connection.
  await page.getByRole("button", { name: "Try GET /api/v1/artigo/:id" }).click();
  await fetchMode.check();
  await send.click();
  ex = await lastExchange(page, ++exchanges);
  t.match(await ex.locator("h3").innerText(), /→ 200 OK$/);
  t.match(await ex.locator("pre.body").innerText(), /"title": "Changed from the browser"/, "GET sees the change");

  // Publish a post, then list the posts as YAML.
  await page.getByRole("button", { name: "Try POST /api/v1/post/:id" }).click();
  await field(":id").fill("from-the-page");
  await send.click();
  ex = await lastExchange(page, ++exchanges);
  t.match(await ex.locator("h3").innerText(), /→ 201 Created$/);
  await page.getByRole("button", { name: "Try GET /api/v1/posts" }).click();
  await field("Accept").fill("application/yaml");
  await send.click();
  ex = await lastExchange(page, ++exchanges);
  t.match(await ex.locator("h3").innerText(), /→ 200 OK$/);
  const yaml = await ex.locator("pre.body").innerText();
  t.match(yaml, /^posts:\n {2}- id: from-the-page\n/m, "the list as YAML");
  t.match(await ex.innerText(), /application\/yaml/);

  // The wire view of a request: every part labelled, with offsets and the parser's decisions.
  await page.getByRole("button", { name: "Try GET /api/v2/status" }).click();
  await wireMode.check();
  await send.click();
  ex = await lastExchange(page, ++exchanges);
  const details = ex.locator("details.wire");
  t.equal(await details.getAttribute("open"), "", "open: the wire view is what the send was for");
  const view = details.locator(".wireview");
  t.ok(await view.isVisible());
  const request = view.locator("table.wire").first();
  t.match(await request.locator("caption").innerText(), "Request 1: GET /api/v2/status (complete)");
  const rows = await request.locator("tbody tr").allInnerTexts();
  t.match(rows[0], /^0–28\s+Request line/);
  t.match(rows[1], /Header field Host/);
  t.match(rows.at(-1), /Blank line: the header section ends/);
  t.match(await view.innerText(), /Framing: Neither Content-Length nor Transfer-Encoding/);
  t.match(await view.innerText(), /Response 1 to request 1: HTTP\/1\.1 200 OK/);
  t.ok(await view.locator(".ctl", { hasText: "CR" }).first().isVisible(), "line endings are visible");

  // Malformed bytes, typed into the raw request: the rule and the byte are shown.
  await page.getByLabel(/Built from the fields above/).fill("GET /api/v2/status HTTP/1.1\nHost : example\n\n");
  await send.click();
  ex = await lastExchange(page, ++exchanges);
  t.match(await ex.locator("h3").innerText(), /→ 400 Bad Request$/);
  t.match(await ex.locator(".wireview .err").innerText(), /WHITESPACE_BEFORE_COLON, RFC 9112 §5\.1.*Found at byte 33/s);
  t.equal(await ex.locator(".wireview mark").innerText(), "SP", "the offending byte is marked");
  t.match(await ex.locator(".wireview tr.bad").innerText(), /Line of the header section.*Host/s, "the refused line is the flagged row");

  // Keyboard: Try buttons and Send are reachable and work with the keyboard alone.
  await page.getByRole("button", { name: "Try GET /api/v1-1/status" }).focus();
  await page.keyboard.press("Enter");
  await send.focus();
  await page.keyboard.press("Enter");
  ex = await lastExchange(page, ++exchanges);
  t.match(await ex.locator("h3").innerText(), /^GET \/api\/v1-1\/status HTTP\/1\.1 → 200 OK$/);

  // For people to look at: the whole page after the session, and the wire view of the malformed request.
  mkdirSync(ARTIFACTS, { recursive: true });
  const shot = path.join(ARTIFACTS, "page.png");
  await page.screenshot({ path: shot, fullPage: true });
  t.ok(existsSync(shot), `screenshot at ${path.relative(process.cwd(), shot)}`);
  await page.locator("#log article").nth(1).screenshot({ path: path.join(ARTIFACTS, "wire-view.png") });

  // A phone's width (390 CSS px): nothing wider than the screen, every Try button whole, before and after a send.
  const phone = await context.newPage();
  phone.on("pageerror", (e) => problems.push(`page error at 390 px: ${e.message}`));
  await phone.setViewportSize({ width: 390, height: 844 });
  await phone.goto(base + "/");
  const width = () => phone.locator("html").evaluate((html) => html.scrollWidth);
  t.ok((await width()) <= 390, `the page is ${await width()} px wide at 390`);
  const tries = phone.locator("button[data-i]");
  const boxes = await Promise.all((await tries.all()).map((b) => b.boundingBox()));
  t.ok(boxes.length > 10, `${boxes.length} Try buttons`);
  const cut = boxes.filter((b) => b === null || b.x < 0 || b.x + b.width > 390 || b.width < 24);
  t.same(cut, [], "every Try button inside the screen, whole");
  await phone.getByRole("button", { name: "Try GET /api/v1/artigo/:id" }).click();
  await phone.getByRole("button", { name: "Send", exact: true }).click();
  const sent = await lastExchange(phone, 1);
  t.match(await sent.locator("h3").innerText(), /→ 200 OK$/);
  t.ok(await sent.locator("details.wire .wireview").isVisible(), "the wire view open at 390 px too");
  t.ok((await width()) <= 390, `still ${await width()} px wide with the exchange and its wire view shown`);
  await phone.screenshot({ path: path.join(ARTIFACTS, "page-390.png"), fullPage: true });
  await phone.close();

  // An answer cut by the wire view's output budget: a list of 3 MB (30 posts of 100,000 characters) is shown cut, and says so.
  const published: number[] = [];
  for (let i = 0; i < 30; i++) {
    const r = await fetch(`${base}/api/v1/post/big-${i}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ title: `Big ${i}`, body: "x".repeat(100_000) }) });
    published.push(r.status);
  }
  t.same(published, Array(30).fill(201), "30 big posts published");
  await page.getByRole("button", { name: "Try GET /api/v1/posts" }).click();
  await wireMode.check();
  await send.click();
  ex = await lastExchange(page, ++exchanges);
  t.match(await ex.locator("h3").innerText(), /^GET \/api\/v1\/posts HTTP\/1\.1 → 200 OK$/);
  t.match(await ex.locator("p.err").innerText(), /output budget is 4 MiB/, "the cut is said above the wire view");
  t.match(await ex.locator("pre.body").innerText(), /\u2026 \d+ more bytes not shown \(the wire view's output budget\)$/, "the body ends with the marker");

  t.same(problems, [], "no script errors, no blocked resources");
  t.same(offsite, [], "nothing fetched from anywhere else");

  // A page of another site tries the wire view through this browser: a no-cors text/plain POST (no preflight needed) and a
  // message/http one (preflighted; the preflight grants nothing). Neither runs the DELETE inside.
  const target = await fetch(`${base}/api/v1/post/csrf-target`, { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"title": "Still here", "body": "."}' });
  t.equal(target.status, 201);
  const elsewhere = await listen(() => ({ status: 200, headers: { "Content-Type": "text/html; charset=utf-8" }, body: "<!doctype html><title>elsewhere</title><p>Another site." }));
  t.teardown(() => elsewhere.close());
  const evil = await context.newPage();
  await evil.goto(`http://localhost:${elsewhere.port}/`);
  const wireAnswer = evil.waitForResponse((r) => r.url() === `${base}/api/wire`);
  const outcome = await evil.evaluate(async (url) => {
    const body = "DELETE /api/v1/post/csrf-target HTTP/1.1\r\nHost: x\r\n\r\n";
    const seen: string[] = [];
    await fetch(url, { method: "POST", mode: "no-cors", headers: { "Content-Type": "text/plain" }, body }).then(
      (r) => seen.push(`no-cors: ${r.type}`),
      (e: Error) => seen.push(`no-cors failed: ${e.message}`),
    );
    await fetch(url, { method: "POST", headers: { "Content-Type": "message/http" }, body }).then(
      (r) => seen.push(`cors: ${r.status}`),
      () => seen.push("cors: blocked"),
    );
    return seen;
  }, `${base}/api/wire`);
  t.same(outcome, ["no-cors: opaque", "cors: blocked"], "the browser sent the no-cors POST, and blocked the preflighted one");
  t.equal((await wireAnswer).status(), 415, "the server refused the text/plain POST it received");
  t.equal((await fetch(`${base}/api/v1/post/csrf-target`)).status, 200, "the post is still there");
});

// A token as `npm run token` makes them (sl_ and 43 characters, no break
// point), sent through the wire view with a field line longer than a phone's
// screen: at 390 and 1280 px nothing is wider than the window, the raw
// request scrolls sideways instead of wrapping a line of exact bytes, and no
// control-byte label is split over two lines.
t.test("the page at 390 and 1280 px with a long token: no sideways overflow, exact lines kept whole", async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.fail(`Chromium is not at ${CHROMIUM}: run .ci/install-system-packages (or set CHROMIUM_PATH)`);
    return;
  }
  const token = `sl_${"Yb3kQ9xZ0q".repeat(4)}a7W`; // base64url, and without "-", so nothing in it is a place to break a line
  t.equal(token.length, 46, "as long as a generated token");
  const { base, context } = await session(t, token);

  for (const width of [390, 1280]) {
    const page = await context.newPage();
    await page.setViewportSize({ width, height: 900 });
    await page.goto(base + "/");
    await page.getByRole("button", { name: "Try UPDATE /api/v1/artigo/:id" }).click();
    await page.getByLabel("Content-Type", { exact: true }).fill("application/merge-patch+json");
    await page.getByLabel("Authorization", { exact: true }).fill(`Bearer ${token}`);
    // One line of body longer than the box at either width.
    await page.getByLabel("Body", { exact: true }).fill(`{"title": "From a phone, in a title long enough to be wider than the raw request's box at ${width} px too"}`);
    await page.getByLabel(/the wire view: the exact bytes below/).check();

    const raw = page.getByLabel(/Built from the fields above/);
    t.match(await raw.inputValue(), new RegExp(`\\nAuthorization: Bearer ${token}\\n`), `${width} px: the raw request carries the token`);
    const box = await raw.evaluate((area) => ({ scroll: area.scrollWidth, client: area.clientWidth }));
    t.ok(box.scroll > box.client, `${width} px: the raw request's longest line scrolls sideways (${box.scroll} px in a box of ${box.client}) rather than wrapping`);

    await page.getByRole("button", { name: "Send", exact: true }).click();
    const ex = await lastExchange(page, 1);
    t.match(await ex.locator("h3").innerText(), /→ 200 OK$/, `${width} px: sent with the token`);
    const view = ex.locator("details.wire .wireview");
    t.ok(await view.isVisible(), `${width} px: the wire view is shown`);
    t.match(await view.innerText(), new RegExp(token), `${width} px: with the token in it`);

    const pageWidth = await page.locator("html").evaluate((html) => html.scrollWidth);
    t.ok(pageWidth <= width, `${width} px: the page is ${pageWidth} px wide`);
    const overflowing = await view.evaluate((root) =>
      [...root.querySelectorAll("td")].filter((cell) => cell.scrollWidth > cell.clientWidth + 1).map((cell) => (cell.textContent ?? "").slice(0, 40)),
    );
    t.same(overflowing, [], `${width} px: no cell of the wire view is wider than its column`);
    const labels = await view.evaluate((root) => {
      const all = [...root.querySelectorAll(".ctl")];
      return { count: all.length, split: all.filter((label) => label.getClientRects().length !== 1).map((label) => label.textContent) };
    });
    t.ok(labels.count > 10, `${width} px: ${labels.count} control-byte labels`);
    t.same(labels.split, [], `${width} px: none split over two lines`);
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, `page-long-token-${width}.png`), fullPage: true });
    await view.screenshot({ path: path.join(ARTIFACTS, `wire-view-long-token-${width}.png`) });
    await page.close();
  }
});

// The lab's forms (docs/lab.md): each resource picked from the table, its
// path and query fields filled from the examples, sent with the page's own
// method (PURGE: any method token), over a real connection from Chromium.
t.test("the page in Chromium: every lab resource's form sends and gets its answer", async (t) => {
  const opened = await pageSession(t);
  if (opened === undefined) return;
  const { base, page, problems } = opened;
  await page.goto(base + "/");
  const send = page.getByRole("button", { name: "Send", exact: true });
  const field = (name: string) => page.getByLabel(name, { exact: true });
  let exchanges = 0;
  const tryLab = async (path: string, fill: Record<string, string> = {}, via: "fetch" | "wire" = "fetch") => {
    await page.getByRole("button", { name: `Try * ${path}`, exact: true }).click();
    t.equal(await field("Method").inputValue(), "PURGE", `${path}: the form starts with a custom method`);
    for (const [name, value] of Object.entries(fill)) await field(name).fill(value);
    await page.getByLabel(via === "fetch" ? "fetch() from this browser, over a real connection" : /the wire view: the exact bytes below/).check();
    await send.click();
    return lastExchange(page, ++exchanges);
  };

  const cases: [string, RegExp, RegExp?][] = [
    ["/api/lab/status/:codes", /^PURGE \/api\/lab\/status\/418 → 418/, /"status": 418/],
    ["/api/lab/redirect/:n", /^PURGE \/api\/lab\/redirect\/3 → 405/, /"type": "\/problems\/method-not-allowed"/],
    ["/api/lab/redirect-to", /^PURGE \/api\/lab\/redirect-to\?url=%2Fapi%2Flab%2Fanything → 200/, /"method": "PURGE"/],
    ["/api/lab/delay/:seconds", /^PURGE \/api\/lab\/delay\/1\.5 → 200/, /"url": "http:\/\/127\.0\.0\.1:\d+\/api\/lab\/delay\/1\.5"/],
    ["/api/lab/drip", /^PURGE \/api\/lab\/drip → 200/, /^\*{10}$/],
    ["/api/lab/bytes/:n", /^PURGE \/api\/lab\/bytes\/16 → 200/],
    ["/api/lab/stream/:n", /^PURGE \/api\/lab\/stream\/5 → 200/, /"id":4\}/],
    ["/api/lab/cache", /^PURGE \/api\/lab\/cache → 200/, /"resource": "\/api\/lab\/cache"/],
    ["/api/lab/cache/:seconds", /^PURGE \/api\/lab\/cache\/60 → 200/],
    ["/api/lab/etag/:tag", /^PURGE \/api\/lab\/etag\/v1 → 200/, /"etag": "\\"v1\\""/],
    ["/api/lab/gzip", /^PURGE \/api\/lab\/gzip → 200/, /"gzipped": true/],
    ["/api/lab/deflate", /^PURGE \/api\/lab\/deflate → 200/, /"deflated": true/],
    ["/api/lab/brotli", /^PURGE \/api\/lab\/brotli → 200/, /"brotli": true/],
  ];
  for (const [path, heading, body] of cases) {
    const ex = await tryLab(path);
    t.match(await ex.locator("h3").innerText(), heading, path);
    if (body !== undefined) t.match(await ex.locator("pre.body").innerText(), body, `${path}: the body shown`);
  }
  // Optional query parameters start empty (their example as a hint): filled, they go in the target.
  const seeded = await tryLab("/api/lab/bytes/:n", { "?seed": "42" });
  t.match(await seeded.locator("h3").innerText(), /^PURGE \/api\/lab\/bytes\/16\?seed=42 → 200/);
  const moved = await tryLab("/api/lab/redirect-to", { "?status_code": "307" });
  t.match(await moved.locator("h3").innerText(), /^PURGE \/api\/lab\/redirect-to\?url=%2Fapi%2Flab%2Fanything&status_code=307 → 200/, "307: followed with PURGE again");
  const headers = await tryLab("/api/lab/response-headers", { "?X-Lab": "hello" });
  t.match(await headers.locator("h3").innerText(), /^PURGE \/api\/lab\/response-headers\?X-Lab=hello → 200/);
  t.match(await headers.locator("pre.body").innerText(), /"X-Lab": "hello"/);
  t.match(await headers.locator(".fields").innerText(), /x-lab\s+hello/, "the chosen field is among those the browser received");
  const coded = await tryLab("/api/lab/brotli");
  t.match(await coded.locator(".fields").innerText(), /content-encoding\s+br/, "the browser was told the coding, and decoded the body");

  // Through the wire view, the exact bytes: header injection typed into the form is refused, with the byte named.
  const injected = await tryLab("/api/lab/response-headers", { "?X-Lab": "a\u0000b" }, "wire");
  t.match(await injected.locator("h3").innerText(), /^PURGE \/api\/lab\/response-headers\?X-Lab=a%00b HTTP\/1\.1 → 400 Bad Request$/);
  t.match(await injected.locator("pre.body").innerText(), /NUL \(0x00\) at position 1: header injection is refused/);
  const offsite = await tryLab("/api/lab/redirect-to", { "?url": "//elsewhere.example/" }, "wire");
  t.match(await offsite.locator("h3").innerText(), /→ 400 Bad Request$/, "a redirect off this server is refused");
  const gz = await tryLab("/api/lab/gzip", {}, "wire");
  t.match(await gz.locator(".wireview").innerText(), /Content-Encoding: gzip/, "the wire view shows the coded answer as sent");
  t.same(problems, [], "no script errors");
});
