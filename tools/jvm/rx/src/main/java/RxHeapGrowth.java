// Seed 000's heap-growth question on RxJava 3: the JVM counterpart of the lab's heap-growth
// rows (RxBench --workload heap-growth). A source faster than a consumer that does fixed
// work per message, through one of RxJava's buffers; the evidence is the live heap after a
// full collection, never a difference of totalMemory (the seed's invalid test).
//
// Buffers (--buffer):
//   observable              Observable.range(0, N).map(Msg::new).observeOn(single): no
//                           backpressure, observeOn's queue is unbounded (SpscLinkedArrayQueue)
//   on-backpressure-buffer  Flowable.range(0, N).map(Msg::new).onBackpressureBuffer()
//                           .observeOn(single, false, BOUND): an unbounded buffer before a
//                           bounded prefetch
//   observe-on              Flowable.range(0, N).map(Msg::new).observeOn(single, false, BOUND):
//                           bounded; the range emits only what is requested
//
// Live heap: right after System.gc() (a full, stop-the-world collection under the serial,
// parallel and G1 collectors the lab offers, unless
// -XX:+ExplicitGCInvokesConcurrent or -XX:+DisableExplicitGC is given: RxBench refuses
// those), the sum over the heap's memory pools of MemoryPoolMXBean.getCollectionUsage():
// each pool's occupancy just after that collection (MemoryMXBean's `used` also counts what
// was allocated since, and read 2-4 MB high in eden right after a full collection here),
// once before the run and on the source's thread after every N/8-th message
// leaves the source, the last after message N-1: the backlog is largest when the source
// has finished. The run's figure is the largest sample minus the sample before the run.
// The first run in a JVM first sends two messages through the same chain (untimed, within
// its run marks), so that the classes' static state is in the sample before the run.

import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.Observable;
import io.reactivex.rxjava3.core.Observer;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.disposables.Disposable;
import io.reactivex.rxjava3.functions.Function;
import io.reactivex.rxjava3.schedulers.Schedulers;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import io.reactivex.rxjava3.core.FlowableSubscriber;
import org.reactivestreams.Subscription;

final class RxHeapGrowth {
    static final String[] BUFFERS = {"observable", "on-backpressure-buffer", "observe-on"};

    /** Live-heap samples per run (besides the one before it). */
    static final int SAMPLES = 8;
    /** Depth samples per run, as the Rust rows' consumer takes them. */
    static final int DEPTH_SAMPLES = 200;

    private RxHeapGrowth() { }

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

    /** The source: range(0, n), without message 1 under the planted fault. */
    static Flowable<Integer> flowable(int n, boolean fault) {
        Flowable<Integer> f = Flowable.range(0, n);
        return fault ? f.filter(i -> i != 1) : f;
    }

    static Observable<Integer> observable(int n, boolean fault) {
        Observable<Integer> f = Observable.range(0, n);
        return fault ? f.filter(i -> i != 1) : f;
    }

    /** Whether this JVM ran the class-loading pass. */
    static boolean loaded;

    /** One run of the configured buffer; its figures (terminal "none" on a timeout). */
    static Run run(RxBench.Config cfg) throws InterruptedException {
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (a.contains("ExplicitGCInvokesConcurrent") || a.contains("DisableExplicitGC")) {
                throw new IllegalStateException("heap-growth reads the live heap after System.gc(), "
                    + "which " + a + " makes no full collection");
            }
        }
        // The first run in a JVM first sends two messages through the same chain, so that the
        // static state of the classes it loads (some 0.5 MB here) is in the sample before the
        // run, not counted as the buffer's.
        if (!loaded) {
            Run warm = new Run(2, cfg.work, false);
            subscribe(cfg, warm, false);
            warm.end.await(60, TimeUnit.SECONDS);
            loaded = true;
        }
        Run r = new Run(cfg.n, cfg.work, true);
        r.liveBefore = liveAfterGc();
        subscribe(cfg, r, cfg.fault != null);
        r.end.await(600, TimeUnit.SECONDS);
        return r;
    }

    /** Subscribes r's consumer to r.n messages through the configured buffer. */
    static void subscribe(RxBench.Config cfg, Run r, boolean fault) {
        Scheduler single = Schedulers.single();
        Function<Integer, Msg> make = r::make;
        if (cfg.buffer.equals("observable")) {
            observable(r.n, fault).map(make).observeOn(single).subscribe(new Observer<Msg>() {
                @Override public void onSubscribe(Disposable d) { }
                @Override public void onNext(Msg m) { r.take(m); }
                @Override public void onError(Throwable t) { r.ended("error: " + t); }
                @Override public void onComplete() { r.ended("complete"); }
            });
        } else {
            Flowable<Msg> f = flowable(r.n, fault).map(make);
            if (cfg.buffer.equals("on-backpressure-buffer")) f = f.onBackpressureBuffer();
            f.observeOn(single, false, cfg.bound).subscribe(new FlowableSubscriber<Msg>() {
                @Override public void onSubscribe(Subscription s) { s.request(Long.MAX_VALUE); }
                @Override public void onNext(Msg m) { r.take(m); }
                @Override public void onError(Throwable t) { r.ended("error: " + t); }
                @Override public void onComplete() { r.ended("complete"); }
            });
        }
    }

    /** The run's own check: every message arrived, once, in order, and the stream ended. */
    static String check(RxBench.Config cfg, Run r) {
        if (!r.terminal.equals("complete")) return "ended " + r.terminal;
        if (!r.inOrder) return "messages arrived out of order";
        if (r.received != r.produced.get()) {
            return r.received + " of " + r.produced.get() + " messages produced arrived";
        }
        return "ok";
    }

    static String json(RxBench.Config cfg, Run r) {
        long peak = r.live.stream().mapToLong(Long::longValue).max().orElse(-1);
        StringBuilder live = new StringBuilder();
        for (long v : r.live) live.append(live.length() > 0 ? "," : "").append(v);
        return String.format(Locale.ROOT,
            ",\"heap\":{\"live_before_bytes\":%d,\"live_peak_bytes\":%d,\"live_bytes\":[%s],"
                + "\"received\":%d,\"max_depth\":%d,\"depth_series\":[%s],\"checksum\":%d,"
                + "\"in_order\":%b,\"terminal\":%s,\"check\":%s}",
            r.liveBefore, peak, live, r.received, r.maxDepth, String.join(",", r.depth),
            r.acc, r.inOrder, Protocol.str(r.terminal), Protocol.str(check(cfg, r)));
    }
}
