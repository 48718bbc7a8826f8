// Seed 004's own subject on the real JVM: Netty 4.2's PooledByteBufAllocator against its
// UnpooledByteBufAllocator, heap and direct buffers, allocate + release in ops/ms, as
// Netty's ByteBufAllocatorBenchmark measured it under JMH (one thread; per op:
// allocator.heapBuffer(size) or directBuffer(size), then release()). The lab's
// `alloc-pooled-vs-unpooled` starts this program once per fork, beside the Rust buffer
// pool and the global allocator, and reads its lines
// (tools/jvm/bus/src/main/java/Protocol.java).
//
// This program is the plain loop itself: the allocator's own API as a user calls it, no
// adapter between the lab and Netty, so it needs no separate "own loop" calibration.
//
// Every cycle also touches the buffer the way the Rust rows do (one byte written at index 0
// and read back: the value (k + 1) mod 256 for the process's k-th cycle) and counts the
// releases that freed the buffer (release() returned true): an iteration is valid when the
// checksum of the bytes read back is the closed form and every buffer was released. The
// lab recomputes the closed form itself from each iteration's first cycle.
//
// Command line (one line on stderr and exit 2 on a bad one):
//   NettyAlloc --allocator pooled|unpooled --memory heap|direct --size BYTES --ops N
//              --warmup W --runs R [--jit-warmup-ms T] [--fault leak-one]
// --jit-warmup-ms T: before the warm-up iterations, cycles of N ops until T ms have passed
//   (JMH's warm-up iterations last 1 s each; the compiler needs time, not a count), with
//   no marks; stated in the outcome.
// --fault leak-one: the cycle in the middle of each iteration skips its release(): every
//   iteration must come out valid:false (a leaked buffer).

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.internal.PlatformDependent;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

public final class NettyAlloc {
    /** The iteration's counts, filled by the loop. */
    static final class Counts {
        long checksum;
        long released;
    }

    /** What one iteration measured. */
    static final class Iteration {
        double ms, opsPerMs, cpuMs, allocatedPerOp, gcMs;
        long firstCycle, checksum, expected, released, gcCount;
        boolean valid;
        String verdict;
    }

    static final class Args {
        boolean pooled, heap;
        int size = -1;
        long ops = -1;
        int warmup = -1, runs = -1;
        long jitWarmupMs = 0;
        boolean leakOne;
    }

    private static void usage(String why) {
        System.err.println("NettyAlloc: " + why + " (usage: --allocator pooled|unpooled --memory heap|direct "
                + "--size BYTES --ops N --warmup W --runs R [--jit-warmup-ms T] [--fault leak-one])");
        System.exit(2);
    }

    private static long count(String flag, String v) {
        try {
            long n = Long.parseLong(v);
            if (n < 0) usage(flag + " must be at least 0 (got " + v + ")");
            return n;
        } catch (NumberFormatException e) {
            usage(flag + " takes a number (got '" + v + "')");
            return -1;
        }
    }

    static Args parse(String[] argv) {
        Args a = new Args();
        String allocator = null, memory = null;
        for (int i = 0; i < argv.length; i++) {
            String f = argv[i];
            String v = null;
            int eq = f.indexOf('=');
            if (eq > 0) {
                v = f.substring(eq + 1);
                f = f.substring(0, eq);
            } else if (i + 1 < argv.length) {
                v = argv[++i];
            }
            if (v == null) usage(f + " needs a value");
            switch (f) {
                case "--allocator": allocator = v; break;
                case "--memory": memory = v; break;
                case "--size": a.size = (int) Math.min(count(f, v), Integer.MAX_VALUE); break;
                case "--ops": a.ops = count(f, v); break;
                case "--warmup": a.warmup = (int) count(f, v); break;
                case "--runs": a.runs = (int) count(f, v); break;
                case "--jit-warmup-ms": a.jitWarmupMs = count(f, v); break;
                case "--fault":
                    if (!v.equals("leak-one")) usage("--fault: unknown fault '" + v + "'; valid: leak-one");
                    a.leakOne = true;
                    break;
                default: usage("unknown option '" + f + "'");
            }
        }
        if (!"pooled".equals(allocator) && !"unpooled".equals(allocator))
            usage("--allocator must be pooled or unpooled (got " + allocator + ")");
        if (!"heap".equals(memory) && !"direct".equals(memory))
            usage("--memory must be heap or direct (got " + memory + ")");
        if (a.size < 0 || a.ops < 1 || a.warmup < 0 || a.runs < 1)
            usage("--size, --ops (>= 1), --warmup and --runs (>= 1) are required");
        a.pooled = allocator.equals("pooled");
        a.heap = memory.equals("heap");
        return a;
    }

    /**
     * n allocate + touch + release cycles, the process's cycles first..first+n-1. The
     * allocator is one class per process, so the call sites stay monomorphic.
     */
    static void cycles(ByteBufAllocator alloc, boolean heap, int size, long first, long n, long leakAt, Counts c) {
        long sum = 0, released = 0;
        for (long i = 0; i < n; i++) {
            ByteBuf b = heap ? alloc.heapBuffer(size) : alloc.directBuffer(size);
            if (size > 0) {
                b.setByte(0, (int) (first + i + 1));
                sum += b.getUnsignedByte(0);
            }
            if (i != leakAt && b.release()) released++;
        }
        c.checksum = sum;
        c.released = released;
    }

    /** The checksum cycles first..first+n-1 must give: the sum of (k + 1) mod 256. */
    static long expected(int size, long first, long n) {
        if (size == 0) return 0;
        long sum = 0;
        for (long k = first; k < first + n; k++) sum += (k + 1) & 0xff;
        return sum;
    }

    static long gcCount() {
        long s = 0;
        for (GarbageCollectorMXBean g : ManagementFactory.getGarbageCollectorMXBeans()) s += Math.max(0, g.getCollectionCount());
        return s;
    }

    static long gcMs() {
        long s = 0;
        for (GarbageCollectorMXBean g : ManagementFactory.getGarbageCollectorMXBeans()) s += Math.max(0, g.getCollectionTime());
        return s;
    }

    static String json(Iteration it) {
        return "{\"ms\":" + Protocol.num(it.ms) + ",\"ops_per_ms\":" + Protocol.num(it.opsPerMs)
                + ",\"first_cycle\":" + it.firstCycle + ",\"checksum\":" + it.checksum
                + ",\"expected\":" + it.expected + ",\"released\":" + it.released
                + ",\"valid\":" + it.valid + ",\"verdict\":" + Protocol.str(it.verdict)
                + ",\"cpu_ms\":" + Protocol.num(it.cpuMs) + ",\"allocated_bytes_per_op\":" + Protocol.num(it.allocatedPerOp)
                + ",\"gc_count\":" + it.gcCount + ",\"gc_ms\":" + Protocol.num(it.gcMs) + "}";
    }

    static String list(List<Iteration> xs) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < xs.size(); i++) b.append(i > 0 ? "," : "").append(json(xs.get(i)));
        return b.append(']').toString();
    }

    /** Netty's version from its jar (from its manifest, else io.netty.versions.properties). */
    static String nettyVersion() {
        Package p = ByteBuf.class.getPackage();
        String v = p == null ? null : p.getImplementationVersion();
        if (v == null) {
            try {
                v = io.netty.util.Version.identify().values().stream()
                        .filter(x -> x.artifactId().equals("netty-buffer")).map(x -> x.artifactVersion())
                        .findFirst().orElse(null);
            } catch (RuntimeException e) {
                v = null;
            }
        }
        return v;
    }

    static Iteration measure(Protocol p, ByteBufAllocator alloc, Args a, int run, String phase, long first) {
        com.sun.management.ThreadMXBean tm = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        Counts c = new Counts();
        long leakAt = a.leakOne ? a.ops / 2 : -1;
        long gc0 = gcCount(), gcMs0 = gcMs();
        long cpu0 = tm.getCurrentThreadCpuTime(), al0 = tm.getCurrentThreadAllocatedBytes();
        long t0 = System.nanoTime();
        p.runStart(run, phase, t0);
        long s = System.nanoTime();
        cycles(alloc, a.heap, a.size, first, a.ops, leakAt, c);
        long e = System.nanoTime();
        p.runEnd(run, phase, e);
        long cpu1 = tm.getCurrentThreadCpuTime(), al1 = tm.getCurrentThreadAllocatedBytes();
        Iteration it = new Iteration();
        it.ms = (e - s) / 1e6;
        it.opsPerMs = a.ops / Math.max(it.ms, 1e-6);
        it.firstCycle = first;
        it.checksum = c.checksum;
        it.expected = expected(a.size, first, a.ops);
        it.released = c.released;
        List<String> wrong = new ArrayList<>();
        if (c.released != a.ops) wrong.add("released " + c.released + " of " + a.ops + " buffers");
        if (c.checksum != it.expected) wrong.add("checksum " + c.checksum + ", expected " + it.expected);
        it.valid = wrong.isEmpty();
        it.verdict = it.valid ? "ok" : String.join(", ", wrong);
        it.cpuMs = (cpu1 - cpu0) / 1e6;
        it.allocatedPerOp = (al1 - al0) / (double) a.ops;
        it.gcCount = gcCount() - gc0;
        it.gcMs = gcMs() - gcMs0;
        return it;
    }

    static String body(Protocol p, Args a) {
        ByteBufAllocator alloc = a.pooled ? new PooledByteBufAllocator(true) : new UnpooledByteBufAllocator(true);
        ByteBuf sample = a.heap ? alloc.heapBuffer(a.size) : alloc.directBuffer(a.size);
        String bufferClass = sample.getClass().getSimpleName();
        sample.release();
        long cycle = 1; // the sample above
        Counts c = new Counts();
        long jitStart = System.nanoTime(), jitCycles = 0;
        while ((System.nanoTime() - jitStart) / 1_000_000 < a.jitWarmupMs) {
            cycles(alloc, a.heap, a.size, cycle, a.ops, -1, c);
            cycle += a.ops;
            jitCycles += a.ops;
        }
        double jitMs = (System.nanoTime() - jitStart) / 1e6;
        List<Iteration> warm = new ArrayList<>(), runs = new ArrayList<>();
        for (int i = 0; i < a.warmup + a.runs; i++) {
            boolean measured = i >= a.warmup;
            Iteration it = measure(p, alloc, a, i, measured ? "measured" : "warmup", cycle);
            cycle += a.ops;
            (measured ? runs : warm).add(it);
            p.heartbeat(i);
        }
        return "{\"allocator\":" + Protocol.str(a.pooled ? "pooled" : "unpooled")
                + ",\"memory\":" + Protocol.str(a.heap ? "heap" : "direct")
                + ",\"size\":" + a.size + ",\"ops\":" + a.ops
                + ",\"allocator_class\":" + Protocol.str(alloc.getClass().getSimpleName())
                + ",\"buffer_class\":" + Protocol.str(bufferClass)
                + ",\"netty_version\":" + Protocol.str(nettyVersion())
                + ",\"has_unsafe\":" + PlatformDependent.hasUnsafe()
                + ",\"direct_no_cleaner\":" + PlatformDependent.useDirectBufferNoCleaner()
                + ",\"jit_warmup_ms\":" + Protocol.num(jitMs) + ",\"jit_warmup_cycles\":" + jitCycles
                + ",\"fault\":" + (a.leakOne ? "\"leak-one\"" : "null")
                + ",\"jvm\":" + Protocol.jvmJson()
                + ",\"warmup\":" + list(warm) + ",\"runs\":" + list(runs) + "}";
    }

    public static void main(String[] argv) throws Exception {
        Args a = parse(argv);
        Protocol p = Protocol.open();
        String[] result = new String[1];
        Throwable[] error = new Throwable[1];
        // One named thread does the work, so the lab's counters by thread can tell it from
        // the JVM's own (GC, JIT compiler) threads.
        Thread t = new Thread(() -> {
            try {
                result[0] = body(p, a);
            } catch (Throwable e) {
                error[0] = e;
            }
        }, "alloc");
        t.start();
        t.join();
        if (error[0] != null) {
            error[0].printStackTrace();
            p.failed(error[0].toString());
            System.exit(3);
        }
        p.done(result[0]);
        System.exit(0);
    }
}
