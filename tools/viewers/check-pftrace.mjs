#!/usr/bin/env node
// Loads a native Perfetto trace (`.pftrace`, the lab's protobuf twin of a Chrome JSON trace)
// into Perfetto's own trace processor (the wasm the Perfetto UI runs, from
// tools/viewers/setup.sh) and checks that Perfetto reads what the lab meant: no import
// errors or data-loss stats, no unfinished slice, every thread and process with a track
// named, every counter sample on a counter track, flows bound to slices at both ends. With
// `--twin FILE.trace.json` the JSON trace is loaded too and the two must agree: the same
// number of slices (the JSON's scheduler slices aside: the `.pftrace` holds the kernel's
// records instead, which Perfetto turns into thread states), the same counter tracks (the
// JSON importer names them "<name> <arg>", the protobuf ones "<name>"), and at least as
// many flows between the lab's own slices. Prints a JSON summary; exits 1 with a one-line
// reason on failure, 2 on bad usage or a missing setup.
//
// usage: node tools/viewers/check-pftrace.mjs FILE.pftrace [--twin FILE.trace.json]
//          [--expect-thread NAME]... [--expect-counter NAME]... [--expect-slice NAME]...
//          [--expect-flow FROM->TO]... [--expect-sleeps THREAD]...
//          [--expect-woken-by THREAD=WAKER_PREFIX]... [--expect-cpu-tracks] [--min-flows N]

import fs from "node:fs";
import { checkFlows, checkStats, counterTracks, loadTrace, sliceNames } from "./lib/trace-checks.mjs";
import { findWasm } from "./lib/trace-processor.mjs";

const USAGE =
  "usage: check-pftrace.mjs FILE.pftrace [--twin FILE.trace.json] [--expect-thread NAME]... " +
  "[--expect-counter NAME]... [--expect-slice NAME]... [--expect-flow FROM->TO]... " +
  "[--expect-sleeps THREAD]... [--expect-woken-by THREAD=WAKER_PREFIX]... [--expect-cpu-tracks] [--min-flows N]";

// Categories of the slices the lab adds to a JSON trace from the scheduler's records
// (`lab/src/profile/sched.rs`): the `.pftrace` carries those records as ftrace packets.
const SCHED_CATEGORIES = ["sched", "wakeup"];

function die(code, msg) {
  process.stderr.write(`check-pftrace: ${msg}\n`);
  process.exit(code);
}

function parseArgs(argv) {
  const o = {
    file: null, twin: null, threads: [], counters: [], slices: [], flows: [], sleeps: [],
    wokenBy: [], cpuTracks: false, minFlows: 0,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const str = () => {
      const v = argv[++i];
      if (v === undefined) die(2, `${a} needs a value\n${USAGE}`);
      return v;
    };
    if (a === "--twin") o.twin = str();
    else if (a === "--expect-thread") o.threads.push(str());
    else if (a === "--expect-counter") o.counters.push(str());
    else if (a === "--expect-slice") o.slices.push(str());
    else if (a === "--expect-flow") {
      const [from, to] = str().split("->");
      if (!from || !to) die(2, `--expect-flow needs FROM->TO\n${USAGE}`);
      o.flows.push([from, to]);
    } else if (a === "--expect-sleeps") o.sleeps.push(str());
    else if (a === "--expect-woken-by") {
      const [thread, waker] = str().split("=");
      if (!thread || !waker) die(2, `--expect-woken-by needs THREAD=WAKER_PREFIX\n${USAGE}`);
      o.wokenBy.push([thread, waker]);
    } else if (a === "--expect-cpu-tracks") o.cpuTracks = true;
    else if (a === "--min-flows") {
      const v = str();
      if (!/^\d+$/.test(v)) die(2, `--min-flows needs a non-negative integer, got ${v}`);
      o.minFlows = Number(v);
    } else if (a === "-h" || a === "--help") {
      console.log(USAGE);
      process.exit(0);
    } else if (a.startsWith("-")) die(2, `unknown option ${a}\n${USAGE}`);
    else if (o.file === null) o.file = a;
    else die(2, `one file at a time (got ${o.file} and ${a})\n${USAGE}`);
  }
  if (o.file === null) die(2, USAGE);
  return o;
}

/** A loaded trace, its failures named by `label`, and a query function over it. */
function open(wasmPath, file, failures, label) {
  let bytes;
  try {
    bytes = fs.readFileSync(file);
  } catch (e) {
    die(2, `cannot read ${file}: ${e.message}`);
  }
  return { q: loadTrace(wasmPath, bytes, failures, `${label}: `), bytes: bytes.length };
}

const sqlStr = (s) => `'${s.replaceAll("'", "''")}'`;
const notSched = (alias) =>
  `(${alias}.category is null or ${alias}.category not in (${SCHED_CATEGORIES.map(sqlStr).join(", ")}))`;

const opts = parseArgs(process.argv.slice(2));
if (!opts.file.endsWith(".pftrace")) die(2, `${opts.file} is not a .pftrace file\n${USAGE}`);
let wasm;
try {
  wasm = findWasm();
} catch (e) {
  die(2, e.message);
}
const failures = [];
const pf = open(wasm.path, opts.file, failures, "pftrace");
const q = pf.q;

checkStats(q, failures);
const slices = q("select count(*) as n from slice")[0].n;
const unfinished = q("select count(*) as n from slice where dur = -1")[0].n;
if (unfinished) failures.push(`${unfinished} unfinished slice(s) (dur = -1)`);

const threads = q(
  "select t.utid, t.tid, t.name, p.pid, p.name as process, " +
    "exists(select 1 from thread_track tt where tt.utid = t.utid) as has_track " +
    "from thread t left join process p using(upid) where t.utid != 0 order by t.tid",
);
const unnamed = threads.filter((t) => t.has_track && !t.name);
if (unnamed.length) failures.push(`unnamed thread(s) with tracks: tid ${unnamed.map((t) => t.tid).join(", ")}`);
const processes = q(
  "select p.upid, p.pid, p.name from process p where p.upid != 0 and " +
    "exists(select 1 from thread t join thread_track tt using(utid) where t.upid = p.upid)",
);
const unnamedProc = processes.filter((p) => !p.name);
if (unnamedProc.length) failures.push(`unnamed process(es): pid ${unnamedProc.map((p) => p.pid).join(", ")}`);
for (const name of opts.threads) {
  if (!threads.some((t) => t.name === name && t.has_track)) failures.push(`no thread track named ${name}`);
}

// Every counter sample on a counter track, and the expected ones there with samples.
const strayCounters = q(
  "select count(*) as n from counter c left join counter_track t on t.id = c.track_id where t.id is null",
)[0].n;
if (strayCounters) failures.push(`${strayCounters} counter sample(s) off any counter track`);
const counters = counterTracks(q, opts.counters, failures);

const names = sliceNames(q, opts.slices, failures);
const flows = checkFlows(q, failures);
const flowPairs = q(
  "select a.name as src, b.name as dst, count(*) as n from flow f join slice a on a.id = f.slice_out " +
    "join slice b on b.id = f.slice_in group by 1, 2 order by n desc",
);
for (const [from, to] of opts.flows) {
  if (!flowPairs.some((p) => p.src === from && p.dst === to)) failures.push(`no flow from a ${from} slice to a ${to} slice`);
}
if (flows < opts.minFlows) failures.push(`${flows} flow(s), expected at least ${opts.minFlows}`);

// The kernel's records: thread states and CPU tracks, built by Perfetto itself.
const cpuSlices = q("select count(*) as n from sched")[0].n;
if (opts.cpuTracks && cpuSlices === 0) failures.push("no CPU track slices (the sched table is empty)");
const states = q(
  "select t.name, s.state, count(*) as n from thread_state s join thread t using(utid) group by 1, 2 order by 1, 2",
);
for (const name of opts.sleeps) {
  const n = states.filter((s) => s.name === name && /^[SD]/.test(s.state ?? "")).reduce((a, s) => a + s.n, 0);
  if (n === 0) failures.push(`thread ${name} has no sleeping (S or D) thread state`);
}
const wakers = q(
  "select t.name as thread, w.name as waker, count(*) as n from thread_state s join thread t using(utid) " +
    "join thread w on w.utid = s.waker_utid group by 1, 2 order by n desc",
);
for (const [thread, prefix] of opts.wokenBy) {
  if (!wakers.some((w) => w.thread === thread && (w.waker ?? "").startsWith(prefix))) {
    failures.push(`no wake-up of ${thread} by a thread named ${prefix}…`);
  }
}

let twin = null;
if (opts.twin) {
  const j = open(wasm.path, opts.twin, failures, "json twin");
  const jSlices = j.q(`select count(*) as n from slice s where ${notSched("s")}`)[0].n;
  const jCounters = j.q("select distinct name from counter_track order by name").map((r) => r.name);
  const jFlows = j.q(
    `select count(*) as n from flow f join slice a on a.id = f.slice_out join slice b on b.id = f.slice_in where ${notSched("a")} and ${notSched("b")}`,
  )[0].n;
  if (jSlices !== slices) failures.push(`the JSON twin has ${jSlices} slices (scheduler slices aside), the .pftrace ${slices}`);
  for (const name of jCounters) {
    const base = name.replace(/ [^ ]+$/, "");
    if (!counters.some((t) => t.name === name || t.name === base)) {
      failures.push(`the JSON twin's counter track ${name} is not in the .pftrace`);
    }
  }
  if (flows < jFlows) failures.push(`the JSON twin binds ${jFlows} flows between the lab's slices, the .pftrace ${flows}`);
  twin = { file: opts.twin, bytes: j.bytes, slices: jSlices, counter_tracks: jCounters.length, flows: jFlows };
}

const summary = {
  file: opts.file,
  perfetto: wasm.version,
  bytes: pf.bytes,
  slices,
  slice_names: Object.fromEntries(names.slice(0, 20).map((s) => [s.name, s.n])),
  threads: threads.filter((t) => t.has_track).map((t) => ({ pid: t.pid, tid: t.tid, name: t.name })),
  processes: processes.map((p) => ({ pid: p.pid, name: p.name })),
  counter_tracks: counters,
  flows,
  flow_pairs: Object.fromEntries(flowPairs.map((p) => [`${p.src} -> ${p.dst}`, p.n])),
  cpu_slices: cpuSlices,
  thread_states: states.filter((s) => opts.sleeps.includes(s.name) || opts.wokenBy.some(([t]) => t === s.name)),
  wakers: wakers.slice(0, 20),
  twin,
  ok: failures.length === 0,
  failures,
};
console.log(JSON.stringify(summary, null, 2));
if (failures.length) die(1, `FAIL ${opts.file}: ${failures.join("; ")}`);
process.stderr.write(
  `check-pftrace: OK ${opts.file}: ${slices} slices, ${summary.threads.length} threads, ` +
    `${counters.length} counter tracks, ${flows} flows, ${cpuSlices} CPU slices` +
    (twin ? `; ${pf.bytes} bytes against the JSON's ${twin.bytes}` : "") + "\n",
);
