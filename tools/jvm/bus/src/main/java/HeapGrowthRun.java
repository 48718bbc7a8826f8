// Seed 000's heap-growth run, the part every library shares (RxHeapGrowth on RxJava 3,
// ReactorHeapGrowth on Reactor): the 40-byte message, the live-heap reading, a run's
// figures (produced, received, the depth series, the live-heap samples) and its check and
// JSON. tools/jvm/rx/src/main/java/RxHeapGrowth.java explains the method; a library's
// class builds its chain from Run.make (the source's map) and Run.take (the consumer).

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

final class HeapGrowthRun {
    /** Live-heap samples per run (besides the one before it). */
    static final int SAMPLES = 8;
    /** Depth samples per run, as the Rust rows' consumer takes them. */
    static final int DEPTH_SAMPLES = 200;

    private HeapGrowthRun() { }

    /** The reading needs System.gc() to be a full stop-the-world collection: refuses the
     *  flags that make it concurrent or a no-op. */
    static void refuseConcurrentGc() {
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (a.contains("ExplicitGCInvokesConcurrent") || a.contains("DisableExplicitGC")) {
                throw new IllegalStateException("heap-growth reads the live heap after System.gc(), "
                    + "which " + a + " makes no full collection");
            }
        }
    }

    /** The message: a sequence number and 16 payload bytes, 40 bytes on a 64-bit JVM with
     *  compressed pointers, as the Rust rows' handoff::Message<16> is 40 bytes. */
    static final class Msg {
        final long seq;
        final long w0;
        final long w1;
        Msg(long seq) {
            this.seq = seq;
            this.w0 = seq * 0x9E3779B97F4A7C15L;
            this.w1 = w0 ^ (w0 >>> 31);
        }
    }

    static final List<MemoryPoolMXBean> HEAP_POOLS = new ArrayList<>();
    static {
        for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
            if (p.getType() == MemoryType.HEAP) HEAP_POOLS.add(p);
        }
    }

    /** The heap's live bytes: a full collection, then each pool's occupancy just after it. */
    static long liveAfterGc() {
        System.gc();
        long sum = 0;
        for (MemoryPoolMXBean p : HEAP_POOLS) {
            MemoryUsage u = p.getCollectionUsage();
            if (u != null) sum += u.getUsed();
        }
        return sum;
    }

    /** One run's figures. */
    static final class Run {
        final int n;
        final long work;
        final long every;
        final long t0 = System.nanoTime();
        final AtomicLong produced = new AtomicLong();
        long liveBefore;
        final List<Long> live = new ArrayList<>();
        final List<String> depth = new ArrayList<>();
        long maxDepth;
        long received;
        boolean inOrder = true;
        long acc;
        String terminal = "none";
        final CountDownLatch end = new CountDownLatch(1);

        /** Whether make() samples the live heap (not in the class-loading pass). */
        final boolean sample;

        Run(int n, long work, boolean sample) {
            this.n = n;
            this.work = work;
            this.every = Math.max(1, n / DEPTH_SAMPLES);
            this.sample = sample;
        }

        /** The source's map: the message, counted; a live-heap sample every N/8 messages. */
        Msg make(int i) {
            Msg m = new Msg(i);
            long k = produced.incrementAndGet();
            if (sample && (k % Math.max(1, n / SAMPLES) == 0 || k == n)) live.add(liveAfterGc());
            return m;
        }

        /** The consumer's onNext: order, the fixed work, the depth every N/200 messages. */
        void take(Msg m) {
            if (m.seq != received) inOrder = false;
            received++;
            long a = acc;
            for (long j = 0; j < work; j++) a = a * 6364136223846793005L + m.seq;
            acc = a;
            if (received % every == 0) {
                long d = produced.get() - received;
                maxDepth = Math.max(maxDepth, d);
                depth.add(String.format(Locale.ROOT, "[%s,%d]",
                    Protocol.num((System.nanoTime() - t0) / 1e6), d));
            }
        }

        void ended(String how) {
            terminal = how;
            end.countDown();
        }
    }

    /** The run's own check: every message arrived, once, in order, and the stream ended. */
    static String check(Run r) {
        if (!r.terminal.equals("complete")) return "ended " + r.terminal;
        if (!r.inOrder) return "messages arrived out of order";
        if (r.received != r.produced.get()) {
            return r.received + " of " + r.produced.get() + " messages produced arrived";
        }
        return "ok";
    }

    static String json(Run r) {
        long peak = r.live.stream().mapToLong(Long::longValue).max().orElse(-1);
        StringBuilder live = new StringBuilder();
        for (long v : r.live) live.append(live.length() > 0 ? "," : "").append(v);
        return String.format(Locale.ROOT,
            ",\"heap\":{\"live_before_bytes\":%d,\"live_peak_bytes\":%d,\"live_bytes\":[%s],"
                + "\"received\":%d,\"max_depth\":%d,\"depth_series\":[%s],\"checksum\":%d,"
                + "\"in_order\":%b,\"terminal\":%s,\"check\":%s}",
            r.liveBefore, peak, live, r.received, r.maxDepth, String.join(",", r.depth),
            r.acc, r.inOrder, Protocol.str(r.terminal), Protocol.str(check(r)));
    }
}
