// The checks that check-trace.mjs (a Chrome JSON trace) and check-pftrace.mjs (a native
// Perfetto trace, and its JSON twin) both make through Perfetto's trace processor: loading
// a trace, the stats it counts as errors, its slice names, its counter tracks and the
// integrity of its flows. Each check appends one-line reasons to the caller's `failures`,
// in the order the caller runs the checks, and returns what the caller's summary prints.
// `prefix` names the trace in those reasons where a script loads more than one.

import { TraceProcessor } from "./trace-processor.mjs";

/**
 * Loads `bytes` into a fresh trace processor and returns a query function over it. Import
 * errors and a failed load are failures, not exceptions. So is a query Perfetto cannot
 * answer (e.g. no `slice` table after a failed import), reported once per trace: the
 * failed query answers no rows, or a count of 0 where it was a single `count(*) as n`, so
 * the caller goes on and prints its summary regardless.
 */
export function loadTrace(wasmPath, bytes, failures, prefix = "") {
  const tp = new TraceProcessor(wasmPath);
  try {
    for (const e of tp.load(bytes)) failures.push(`${prefix}import error: ${e}`);
  } catch (e) {
    failures.push(`${prefix}trace processor failed loading the file: ${e.message}`);
  }
  let failed = false;
  return (sql) => {
    try {
      return tp.query(sql);
    } catch (e) {
      if (!failed) failures.push(`${prefix}trace processor: ${e.message.split("\n").slice(-1)[0]} (in \`${sql}\`)`);
      failed = true;
      return /count\(\*\) as n from/.test(sql) && !/group by/.test(sql) ? [{ n: 0 }] : [];
    }
  };
}

/**
 * The stats Perfetto counts as errors or data loss, each a failure. With `source`, the
 * rows also carry the stats table's `source` column, for a summary that prints them.
 */
export function checkStats(q, failures, { source = false } = {}) {
  const rows = q(
    `select name, idx, severity, ${source ? "source, " : ""}value from stats ` +
      "where severity in ('error', 'data_loss') and value > 0 order by name",
  );
  for (const s of rows) {
    failures.push(`stats ${s.severity}: ${s.name}${s.idx !== null ? `[${s.idx}]` : ""} = ${s.value}`);
  }
  return rows;
}

/** Slice names with their counts, the most frequent first; each of `expected` must name a slice. */
export function sliceNames(q, expected, failures) {
  const names = q("select name, count(*) as n from slice group by name order by n desc");
  for (const name of expected) {
    if (!names.some((s) => s.name === name)) failures.push(`no slice named ${name}`);
  }
  return names;
}

/**
 * Counter tracks with their sample counts, by name; each of `expected` must name a track
 * with samples. Perfetto's JSON importer names a counter track "<name> <arg>", one track
 * per arg of the counter event, so with `jsonNames` an expected name also matches those.
 */
export function counterTracks(q, expected, failures, { jsonNames = false } = {}) {
  const tracks = q(
    "select t.name, count(c.id) as samples from counter_track t left join counter c on c.track_id = t.id group by t.id order by t.name",
  );
  for (const name of expected) {
    const hit = tracks.find((t) => t.name === name || (jsonNames && t.name.startsWith(`${name} `)));
    if (!hit) failures.push(`no counter track named ${name}`);
    else if (hit.samples === 0) failures.push(`counter track ${hit.name} has no samples`);
  }
  return tracks;
}

/** The number of flows Perfetto bound; each must have a slice at both ends. */
export function checkFlows(q, failures) {
  const flows = q("select count(*) as n from flow")[0].n;
  const broken = q(
    "select count(*) as n from flow f left join slice a on a.id = f.slice_out left join slice b on b.id = f.slice_in where a.id is null or b.id is null",
  )[0].n;
  if (broken) failures.push(`${broken} flow(s) point at missing slices`);
  return flows;
}
