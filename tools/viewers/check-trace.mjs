#!/usr/bin/env node
// Loads a Chrome-trace JSON file into Perfetto's own trace processor (the wasm the Perfetto
// UI runs, from tools/viewers/setup.sh) through the UI's RPC, and checks that Perfetto
// sees what the file means: no import errors, no unfinished slices, every thread and
// process named, the expected tracks, flows and slices. A second, structural pass over the
// raw JSON catches what Perfetto drops silently (an unmatched `E`, tid 0 merged into tid 1,
// slices that vanished). Prints a JSON summary; exits 1 with a one-line reason on failure,
// 2 on bad usage or a missing setup.
//
// usage: node tools/viewers/check-trace.mjs FILE [--expect-counter NAME]...
//          [--expect-thread NAME]... [--expect-slice NAME]... [--min-flows N]
//          [--min-slices N] [--min-instants N]

import fs from "node:fs";
import { checkFlows, checkStats, counterTracks, loadTrace, sliceNames } from "./lib/trace-checks.mjs";
import { findWasm } from "./lib/trace-processor.mjs";

const USAGE =
  "usage: check-trace.mjs FILE.trace.json [--expect-counter NAME]... [--expect-thread NAME]... " +
  "[--expect-slice NAME]... [--min-flows N] [--min-slices N] [--min-instants N]";

function die(code, msg) {
  process.stderr.write(`check-trace: ${msg}\n`);
  process.exit(code);
}

function parseArgs(argv) {
  const o = { file: null, counters: [], threads: [], slices: [], minFlows: 0, minSlices: 0, minInstants: 0 };
  const num = (flag, v) => {
    if (v === undefined || !/^\d+$/.test(v)) die(2, `${flag} needs a non-negative integer, got ${v}\n${USAGE}`);
    return Number(v);
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = argv[i + 1];
    const str = () => {
      if (v === undefined) die(2, `${a} needs a value\n${USAGE}`);
      i++;
      return v;
    };
    if (a === "--expect-counter") o.counters.push(str());
    else if (a === "--expect-thread") o.threads.push(str());
    else if (a === "--expect-slice") o.slices.push(str());
    else if (a === "--min-flows") (o.minFlows = num(a, v)), i++;
    else if (a === "--min-slices") (o.minSlices = num(a, v)), i++;
    else if (a === "--min-instants") (o.minInstants = num(a, v)), i++;
    else if (a === "-h" || a === "--help") {
      console.log(USAGE);
      process.exit(0);
    } else if (a.startsWith("-")) die(2, `unknown option ${a}\n${USAGE}`);
    else if (o.file === null) o.file = a;
    else die(2, `one file at a time (got ${o.file} and ${a})\n${USAGE}`);
  }
  if (o.file === null) die(2, USAGE);
  return o;
}

// What the raw file says, independently of Perfetto.
function structural(text) {
  const problems = [];
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return { problems: [`not valid JSON (truncated file?): ${e.message}`], events: 0 };
  }
  const events = Array.isArray(doc) ? doc : doc?.traceEvents;
  if (!Array.isArray(events)) return { problems: ["no traceEvents array"], events: 0 };
  const threads = new Map(); // "pid/tid" -> {pid, tid}
  const open = new Map(); // "pid/tid" -> stack of B names
  let slices = 0;
  const flowStarts = new Set();
  const flowEnds = new Set();
  let unmatchedE = 0;
  const firstUnmatchedE = [];
  for (const e of events) {
    const key = `${e.pid}/${e.tid}`;
    if (e.ph !== "M" && e.tid !== undefined) threads.set(key, { pid: e.pid, tid: e.tid });
    if (e.ph === "B") {
      slices++;
      if (!open.has(key)) open.set(key, []);
      open.get(key).push(e.name);
    } else if (e.ph === "E") {
      const st = open.get(key);
      if (!st || st.length === 0) {
        unmatchedE++;
        if (firstUnmatchedE.length < 3) firstUnmatchedE.push(`${key}@${e.ts}`);
      } else st.pop();
    } else if (e.ph === "X" || e.ph === "i" || e.ph === "I") slices++;
    else if (e.ph === "s") flowStarts.add(`${e.cat}/${e.name}/${e.id}`);
    else if (e.ph === "f") flowEnds.add(`${e.cat}/${e.name}/${e.id}`);
  }
  const flows = [...flowStarts].filter((k) => flowEnds.has(k)).length;
  for (const { pid, tid } of threads.values()) {
    if (tid === 0) problems.push(`pid ${pid} has events on tid 0 (Perfetto merges tid 0 with tid 1)`);
  }
  if (unmatchedE) problems.push(`${unmatchedE} unmatched E event(s) (Perfetto drops them), first: ${firstUnmatchedE.join(", ")}`);
  let unclosed = 0;
  const firstUnclosed = [];
  for (const [key, st] of open) {
    unclosed += st.length;
    for (const n of st.slice(0, 3 - firstUnclosed.length)) firstUnclosed.push(`${n} on ${key}`);
  }
  if (unclosed) problems.push(`${unclosed} B event(s) never ended: ${firstUnclosed.join(", ")}`);
  return { problems, events: events.length, slices, flows, threads: [...threads.values()] };
}

const opts = parseArgs(process.argv.slice(2));
let text;
try {
  text = fs.readFileSync(opts.file);
} catch (e) {
  die(2, `cannot read ${opts.file}: ${e.message}`);
}
let wasm;
try {
  wasm = findWasm();
} catch (e) {
  die(2, e.message);
}

const failures = [];
const raw = structural(text.toString("utf8"));
failures.push(...raw.problems.map((p) => `file: ${p}`));

const q = loadTrace(wasm.path, text, failures);
const statsErrors = checkStats(q, failures, { source: true });

const sliceCount = q("select count(*) as n from slice")[0].n;
const unfinished = q("select name, ts from slice where dur = -1 order by ts limit 5");
const unfinishedCount = q("select count(*) as n from slice where dur = -1")[0].n;
if (unfinishedCount > 0) {
  failures.push(
    `${unfinishedCount} unfinished slice(s) (dur = -1), first: ${unfinished.map((s) => s.name).join(", ")}`,
  );
}
if (raw.slices !== undefined && raw.problems.length === 0 && raw.slices !== sliceCount) {
  failures.push(`the file has ${raw.slices} slice/instant events, Perfetto imported ${sliceCount}`);
}

// Threads that hold data (a track) or appear in the file; Perfetto also makes an empty
// placeholder for each process's main thread (tid = pid), which no viewer shows.
const threads = q(
  "select t.utid, t.tid, t.name, p.pid, " +
    "exists(select 1 from thread_track tt where tt.utid = t.utid) as has_track " +
    "from thread t left join process p using(upid) where t.utid != 0 order by t.tid",
);
const inFile = (t) => (raw.threads ?? []).some((r) => r.tid === t.tid);
const unnamed = threads.filter((t) => !t.name && (t.has_track || inFile(t)));
if (unnamed.length) failures.push(`unnamed thread(s): tid ${unnamed.map((t) => t.tid).join(", ")}`);
for (const { pid, tid } of raw.threads ?? []) {
  if (tid !== 0 && !threads.some((t) => t.tid === tid && (t.pid === pid || t.pid === null))) {
    failures.push(`thread pid ${pid} tid ${tid} of the file is not in Perfetto's thread table`);
  }
}
const processes = q("select upid, pid, name from process where upid != 0 order by pid");
const unnamedProc = processes.filter((p) => !p.name);
if (unnamedProc.length) failures.push(`unnamed process(es): pid ${unnamedProc.map((p) => p.pid).join(", ")}`);

const counters = counterTracks(q, opts.counters, failures, { jsonNames: true });
for (const name of opts.threads) {
  if (!threads.some((t) => t.name === name)) failures.push(`no thread named ${name}`);
}
const names = sliceNames(q, opts.slices, failures);
const flows = checkFlows(q, failures);
if (raw.flows !== undefined && flows < raw.flows) {
  failures.push(`the file has ${raw.flows} s/f flow pairs, Perfetto bound ${flows}`);
}
const flowPairs = q(
  "select a.name || ' -> ' || b.name as pair, count(*) as n from flow f " +
    "join slice a on a.id = f.slice_out join slice b on b.id = f.slice_in group by 1 order by n desc",
);
if (flows < opts.minFlows) failures.push(`${flows} flow(s), expected at least ${opts.minFlows}`);
if (sliceCount < opts.minSlices) failures.push(`${sliceCount} slice(s), expected at least ${opts.minSlices}`);
const instants = q("select count(*) as n from slice where dur = 0")[0].n;
if (instants < opts.minInstants) failures.push(`${instants} instant(s), expected at least ${opts.minInstants}`);

const summary = {
  file: opts.file,
  perfetto: wasm.version,
  events_in_file: raw.events,
  slices: sliceCount,
  instants,
  unfinished_slices: unfinishedCount,
  slice_names: Object.fromEntries(names.slice(0, 20).map((s) => [s.name, s.n])),
  threads: threads
    .filter((t) => t.has_track || inFile(t) || t.name)
    .map((t) => ({ pid: t.pid, tid: t.tid, name: t.name })),
  processes: processes.map((p) => ({ pid: p.pid, name: p.name })),
  counter_tracks: counters,
  flows,
  flow_pairs: Object.fromEntries(flowPairs.map((p) => [p.pair, p.n])),
  stats_errors: statsErrors,
  ok: failures.length === 0,
  failures,
};
console.log(JSON.stringify(summary, null, 2));
if (failures.length) {
  die(1, `FAIL ${opts.file}: ${failures.join("; ")}`);
}
process.stderr.write(`check-trace: OK ${opts.file}: ${sliceCount} slices, ${summary.threads.length} threads, ${counters.length} counter tracks, ${flows} flows\n`);
