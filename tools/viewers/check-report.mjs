#!/usr/bin/env node
// Opens a run's report.html in a real browser (Debian's /usr/bin/chromium, headless, driven
// by puppeteer-core), offline, over a local HTTP server of the run folder, and reads back
// what it draws and links:
//  - console errors, page errors, failed requests;
//  - every chart (<svg aria-label>) with its intervals (`line.interval`: series, x, low,
//    high), its points (`circle.point`) and its references (`path.reference`);
//  - every trace link (`a.trace`: Perfetto deep link + data-file) and heap link (`a.heap`),
//    each with whether the file answers 200 from the run folder;
//  - the headline's verdict lines, machine and command; the open/closed <details>; what
//    follows the headline (its first chart); the page's and the reasons table's widths;
//  - a full-page PNG screenshot.
// Prints one line of JSON per run folder on stdout (the Rust test asserts on it); exits 2 on
// bad usage or a missing setup, 1 when a page could not be read. Several folders share one
// browser (each served under its own path), which saves a browser's start per report.
//
// usage: node tools/viewers/check-report.mjs RUN_DIR SCREENSHOT.png [RUN_DIR SCREENSHOT.png ...]

import fs from "node:fs";
import http from "node:http";
import path from "node:path";

const CHROMIUM = "/usr/bin/chromium";
const SETUP = "run bash scripts/setup-test-deps.sh";

function die(code, msg) {
  process.stderr.write(`check-report: ${msg}\n`);
  process.exit(code);
}

const argv = process.argv.slice(2);
if (argv.length < 2 || argv.length % 2 !== 0) {
  die(2, "usage: check-report.mjs RUN_DIR SCREENSHOT.png [RUN_DIR SCREENSHOT.png ...]");
}
const runs = [];
for (let i = 0; i < argv.length; i += 2) {
  const root = path.resolve(argv[i]);
  if (!fs.existsSync(path.join(root, "report.html"))) die(2, `no report.html in ${argv[i]}`);
  runs.push({ root, shotOut: argv[i + 1] });
}
if (!fs.existsSync(CHROMIUM)) die(2, `${CHROMIUM} is missing: ${SETUP}`);
let puppeteer;
try {
  puppeteer = (await import("puppeteer-core")).default;
} catch (e) {
  die(2, `puppeteer-core is not installed (${e.message.split("\n")[0]}): ${SETUP}`);
}

const server = http.createServer((req, res) => {
  let p;
  try {
    p = decodeURIComponent(new URL(req.url, "http://x").pathname);
  } catch {
    res.writeHead(400).end();
    return;
  }
  // /<i>/FILE is FILE of the i-th run folder.
  const m = /^\/(\d+)(\/.*)$/.exec(p);
  const root = m && runs[Number(m[1])]?.root;
  if (!root) {
    res.writeHead(p === "/favicon.ico" ? 204 : 404).end();
    return;
  }
  p = m[2];
  const file = path.resolve(root, "." + p);
  if (!file.startsWith(root + path.sep) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
    res.writeHead(p === "/favicon.ico" ? 204 : 404).end();
    return;
  }
  const type = file.endsWith(".html") ? "text/html; charset=utf-8" : "application/json";
  res.writeHead(200, { "content-type": type }).end(fs.readFileSync(file));
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const origin = `http://127.0.0.1:${server.address().port}`;

const browser = await puppeteer.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run"],
});
const deadline = setTimeout(() => {
  process.stderr.write("check-report: timed out\n");
  browser.process()?.kill("SIGKILL");
  process.exit(1);
}, 60_000 + 20_000 * runs.length);
for (const [i, { shotOut }] of runs.entries()) {
  const base = `${origin}/${i}`;
  const out = { console_errors: [], page_errors: [], bad_requests: [], blocked: [] };
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
    await page.setRequestInterception(true);
    page.on("request", (r) => {
      const u = r.url();
      if (u.startsWith(origin) || u.startsWith("data:")) r.continue();
      else {
        out.blocked.push(u);
        r.abort("blockedbyclient");
      }
    });
    page.on("console", (m) => m.type() === "error" && out.console_errors.push(m.text()));
    page.on("pageerror", (e) => out.page_errors.push(String(e?.message ?? e)));
    page.on("response", (r) => r.status() >= 400 && out.bad_requests.push(`${r.url()}: ${r.status()}`));
    await page.goto(`${base}/report.html`, { waitUntil: "load", timeout: 30_000 });
    const dom = await page.evaluate(() => {
      const num = (el, k) => Number(el.getAttribute(`data-${k}`));
      const items = (svg, sel, keys) =>
        [...svg.querySelectorAll(sel)].map((el) => {
          const o = { series: el.getAttribute("data-series") };
          for (const k of keys) o[k] = num(el, k);
          return o;
        });
      return {
        charts: [...document.querySelectorAll("svg.chart")].map((s) => ({
          title: s.getAttribute("aria-label"),
          width: s.getBoundingClientRect().width,
          intervals: items(s, "line.interval", ["x", "low", "high"]),
          points: items(s, "circle.point", ["x", "y"]),
          references: items(s, "path.reference", ["x", "y"]),
        })),
        traces: [...document.querySelectorAll("a.trace")].map((a) => ({
          href: a.getAttribute("href"),
          file: a.getAttribute("data-file"),
          row: a.closest("tr")?.firstElementChild?.textContent ?? null,
        })),
        heaps: [...document.querySelectorAll("a.heap")].map((a) => ({
          href: a.getAttribute("href"),
          file: a.getAttribute("data-file"),
          row: a.closest("tr")?.firstElementChild?.textContent ?? null,
        })),
        verdict: [...document.querySelectorAll(".verdict li")].map((l) => l.textContent),
        machine: document.querySelector(".machine")?.textContent ?? null,
        command: document.querySelector(".command code")?.textContent ?? null,
        card: Boolean(document.querySelector("aside.card")),
        details: [...document.querySelectorAll("details")].map((d) => ({
          summary: d.querySelector("summary")?.textContent.trim(),
          open: d.open,
        })),
        after_headline: (() => {
          const n = document.querySelector("section.headline")?.nextElementSibling;
          return n ? `${n.tagName.toLowerCase()}.${n.className}` : null;
        })(),
        first_chart:
          document.querySelector("section.headline + div.charts > svg.chart")?.getAttribute("aria-label") ?? null,
        page_width: document.documentElement.scrollWidth,
        viewport_width: window.innerWidth,
        reasons_width: document.querySelector("table.reasons")?.getBoundingClientRect().right ?? null,
      };
    });
    // Every linked file, fetched from the run folder as the browser would.
    for (const l of [...dom.traces, ...dom.heaps]) {
      const local = l.href.startsWith("https://") ? l.file : l.href;
      const r = await fetch(new URL(local, `${base}/report.html`));
      await r.arrayBuffer();
      l.status = r.status;
    }
    Object.assign(out, dom);
    fs.mkdirSync(path.dirname(path.resolve(shotOut)), { recursive: true });
    await page.screenshot({ path: shotOut, type: "png", fullPage: true });
    out.screenshot = shotOut;
    await page.close();
  } catch (e) {
    clearTimeout(deadline);
    await browser.close();
    server.close();
    die(1, `browser: ${runs[i].root}: ${e.message}`);
}
console.log(JSON.stringify(out));
}
clearTimeout(deadline);
await browser.close();
server.close();
