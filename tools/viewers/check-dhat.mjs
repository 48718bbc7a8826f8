#!/usr/bin/env node
// Loads a dhat heap file into valgrind's own viewer, dh_view.html + dh_view.js, under jsdom,
// the way a person does: through its "Load…" file input (dh_view reads the file with a
// FileReader, parses it into `gData`, then `buildTree()` and `displayTree()`). Checks that
// it rendered the totals and prints them as JSON; exits 1 with a one-line reason when
// dh_view rejects the file or renders no totals, 2 on bad usage or a missing setup.
//
// usage: node tools/viewers/check-dhat.mjs FILE.dhat-heap.json

import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const DH_VIEW_DIR = process.env.DH_VIEW_DIR || "/usr/libexec/valgrind";

function die(code, msg) {
  process.stderr.write(`check-dhat: ${msg}\n`);
  process.exit(code);
}

const args = process.argv.slice(2);
if (args.length !== 1 || args[0].startsWith("-")) die(2, "usage: check-dhat.mjs FILE.dhat-heap.json");
const file = args[0];
let text;
try {
  text = fs.readFileSync(file, "utf8");
} catch (e) {
  die(2, `cannot read ${file}: ${e.message}`);
}

let JSDOM;
try {
  ({ JSDOM } = createRequire(path.join(HERE, "package.json"))("jsdom"));
} catch {
  die(2, `jsdom not installed in ${HERE}/node_modules: run tools/viewers/setup.sh`);
}
const viewerFiles = ["dh_view.html", "dh_view.js"].map((f) => path.join(DH_VIEW_DIR, f));
for (const f of viewerFiles) {
  if (!fs.existsSync(f)) die(2, `${f} missing (valgrind's dh_view): run tools/viewers/setup.sh`);
}

// The page as shipped, with its <script src="dh_view.js"> inlined (jsdom would otherwise
// need a resource loader); everything else is valgrind's.
const html = fs
  .readFileSync(viewerFiles[0], "utf8")
  .replace(/<script src="dh_view.js"><\/script>/, () => `<script>${fs.readFileSync(viewerFiles[1], "utf8")}</script>`);
if (!html.includes("function buildTree")) die(2, "could not inline dh_view.js into dh_view.html");

const errors = [];
const dom = new JSDOM(html, { runScripts: "dangerously", pretendToBeVisual: true, url: "file:///dh_view.html" });
const { window } = dom;
window.addEventListener("error", (e) => errors.push(e.message || String(e.error)));
window.onerror = (msg) => errors.push(String(msg));

await new Promise((resolve) => {
  if (window.document.readyState === "complete") resolve();
  else window.addEventListener("load", resolve);
});
const input = window.document.querySelector('input[type="file"]');
if (!input) die(1, `FAIL ${file}: dh_view did not build its page (no file input)`);

// What the "Load…" button's file picker would hand over.
const picked = new window.File([text], path.basename(file), { type: "application/json" });
Object.defineProperty(input, "files", { value: [picked] });
input.dispatchEvent(new window.Event("change"));

const deadline = Date.now() + 60_000;
let rendered = "";
for (;;) {
  await new Promise((r) => setTimeout(r, 20));
  rendered = window.document.body.textContent;
  const main = [...window.document.querySelectorAll("div.section")].pop();
  const mainText = main ? main.textContent : "";
  if (!/Loading\.\.\./.test(mainText) || errors.length) break;
  if (Date.now() > deadline) die(1, `FAIL ${file}: dh_view still loading after 60 s`);
}
const errSpan = window.document.querySelector(".error");
if (errSpan) errors.push(errSpan.textContent);

const num = (s) => (s === undefined ? null : Number(s.replace(/,/g, "")));
const m = (re) => rendered.match(re);
// dh_view's root node: "Total:     1,234 bytes (100%, …) in 56 blocks (100%, …), avg size …"
const total = m(/Total:\s+([\d,]+) (\w+) \(100%[^)]*\) in ([\d,]+) (\w+)/);
const gmax = m(/At t-gmax:\s+([\d,]+) bytes[^)]*\) in ([\d,]+) blocks/);
const tend = m(/At t-end:\s+([\d,]+) bytes[^)]*\) in ([\d,]+) blocks/);
const summary = {
  file,
  viewer: viewerFiles[0],
  title: window.document.title,
  total_bytes: total ? num(total[1]) : null,
  total_blocks: total ? num(total[3]) : null,
  gmax_bytes: gmax ? num(gmax[1]) : null,
  gmax_blocks: gmax ? num(gmax[2]) : null,
  end_bytes: tend ? num(tend[1]) : null,
  end_blocks: tend ? num(tend[2]) : null,
  program_points: (rendered.match(/PP \d+\/\d+/g) || []).length,
  errors,
};
console.log(JSON.stringify(summary, null, 2));
if (errors.length) die(1, `FAIL ${file}: dh_view rejected it: ${errors.join("; ")}`);
if (!total) die(1, `FAIL ${file}: dh_view rendered no "Total:" line`);
process.stderr.write(`check-dhat: OK ${file}: ${summary.total_bytes} bytes in ${summary.total_blocks} blocks\n`);
process.exit(0);
