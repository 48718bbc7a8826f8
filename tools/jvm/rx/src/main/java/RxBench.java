// Seed 000's workloads on RxJava 3, the second JVM peer of the lab's reactive crate beside
// Reactor (the version tools/jvm/pom.xml pins): the JVM counterparts of
// the lab's reactive crate in subscribe-overhead, publish-on-latency, backpressure-buffer
// and heap-growth. One named workload per process, W warm-up runs then R measured runs,
// each run's result checked against its closed form (backpressure and heap-growth: against
// their counts, by the run itself and again by the lab). --fault drop-one: one op fewer
// per run (backpressure, heap-growth: the source never emits element 1).
// Speaks the lab's child protocol (Protocol.java): run marks, heartbeats, done / failed.
//
//   java -cp "target/jvm/rx/classes:$(cat target/jvm/rx/classpath.txt)" RxBench \
//     --workload flowable-range|single-just|hand-written|observe-on|latency|backpressure|heap-growth \
//     --n N --warmup W --runs R [--fault drop-one]
//     [--demand bulk|one-by-one] [--scheduler single|computation]   (latency)
//     --case sync-request-1|publish-on-1|grid --policy drop-latest|drop-oldest|error
//     --capacity C [--rate R --service-ns S]                       (backpressure: RxBackpressure.java)
//     --buffer observable|on-backpressure-buffer|observe-on --work W [--bound B]
//                                                                  (heap-growth: RxHeapGrowth.java)
//
// Exit 0: done (also when a run's result is wrong: the outcome says so); 2: bad command
// line (one line on stderr); 3: failed. tools/jvm/README.md ("RxJava") has the details.

import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.Single;
import io.reactivex.rxjava3.functions.Consumer;
import io.reactivex.rxjava3.schedulers.Schedulers;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

final class RxBench {
    static final String USAGE = "usage: RxBench --workload flowable-range|single-just|hand-written|observe-on|latency"
        + "|backpressure|heap-growth --n N --warmup W --runs R [--fault drop-one] [--demand bulk|one-by-one]"
        + " [--scheduler single|computation] [--case sync-request-1|publish-on-1|grid]"
        + " [--policy drop-latest|drop-oldest|error] [--capacity C] [--rate R] [--service-ns S]"
        + " [--buffer observable|on-backpressure-buffer|observe-on] [--work W] [--bound B]";
    static final String[] WORKLOADS = {"flowable-range", "single-just", "hand-written", "observe-on", "latency",
        "backpressure", "heap-growth"};

    /** observe-on's queue: Reactor's publishOn prefetch, the reactive crate's default. */
    static final int PREFETCH = 256;

    static final class BadArgs extends Exception {
        private static final long serialVersionUID = 1L;
        BadArgs(String m) { super(m); }
    }

    static final class Config {
        String workload;
        int n = -1;
        int warmup = -1;
        int runs = -1;
        String fault;
        String demand = "bulk";
        String scheduler = "single";
        /** backpressure: the case, the overflow policy, the buffer's capacity, the source's
         *  rate as a multiple of the consumer's nominal one, the consumer's service time. */
        String bpCase;
        String policy = "drop-latest";
        int capacity = -1;
        double rate = 1;
        long serviceNs = 20_000;
        /** heap-growth: the buffer, the consumer's multiply-adds per message, the bound. */
        String buffer;
        long work = -1;
        int bound = 1024;
    }

    static String oneOf(String flag, String v, String[] valid) throws BadArgs {
        if (!List.of(valid).contains(v)) {
            throw new BadArgs(flag + ": unknown '" + v + "'; valid: " + String.join(", ", valid));
        }
        return v;
    }

    static int count(String flag, String v, int min) throws BadArgs {
        long mult = 1;
        String s = v;
        if (s.endsWith("Ki")) { mult = 1L << 10; s = s.substring(0, s.length() - 2); }
        else if (s.endsWith("Mi")) { mult = 1L << 20; s = s.substring(0, s.length() - 2); }
        else if (s.endsWith("M")) { mult = 1_000_000L; s = s.substring(0, s.length() - 1); }
        long n;
        try {
            n = Math.multiplyExact(Long.parseLong(s), mult);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new BadArgs(flag + ": '" + v + "' is not a count; valid: " + min + ".." + Integer.MAX_VALUE);
        }
        if (n < min || n > Integer.MAX_VALUE) {
            throw new BadArgs(flag + ": " + n + " is out of range; valid: " + min + ".." + Integer.MAX_VALUE);
        }
        return (int) n;
    }

    static Config parse(String[] args) throws BadArgs {
        Config c = new Config();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String v = null;
            int eq = a.indexOf('=');
            if (eq > 0) { v = a.substring(eq + 1); a = a.substring(0, eq); }
            else if (i + 1 < args.length) v = args[++i];
            if (v == null) throw new BadArgs(a + " needs a value");
            switch (a) {
                case "--workload":
                    if (!List.of(WORKLOADS).contains(v)) {
                        throw new BadArgs("--workload: unknown '" + v + "'; valid: " + String.join(", ", WORKLOADS));
                    }
                    c.workload = v;
                    break;
                case "--n": c.n = count(a, v, 1); break;
                case "--case": c.bpCase = oneOf(a, v, RxBackpressure.CASES); break;
                case "--policy": c.policy = oneOf(a, v, RxBackpressure.POLICIES); break;
                case "--capacity": c.capacity = count(a, v, 1); break;
                case "--service-ns": c.serviceNs = count(a, v, 0); break;
                case "--buffer": c.buffer = oneOf(a, v, RxHeapGrowth.BUFFERS); break;
                case "--work": c.work = count(a, v, 1); break;
                case "--bound": c.bound = count(a, v, 1); break;
                case "--rate":
                    try {
                        c.rate = Double.parseDouble(v);
                    } catch (NumberFormatException e) {
                        c.rate = -1;
                    }
                    if (!(c.rate > 0) || Double.isInfinite(c.rate)) {
                        throw new BadArgs("--rate: '" + v + "' is not a positive number");
                    }
                    break;
                case "--warmup": c.warmup = count(a, v, 0); break;
                case "--runs": c.runs = count(a, v, 1); break;
                case "--fault":
                    if (!v.equals("drop-one")) throw new BadArgs("--fault: unknown '" + v + "'; valid: drop-one");
                    c.fault = v;
                    break;
                case "--demand":
                    if (!v.equals("bulk") && !v.equals("one-by-one")) {
                        throw new BadArgs("--demand: unknown '" + v + "'; valid: bulk, one-by-one");
                    }
                    c.demand = v;
                    break;
                case "--scheduler":
                    if (!v.equals("single") && !v.equals("computation")) {
                        throw new BadArgs("--scheduler: unknown '" + v + "'; valid: single, computation");
                    }
                    c.scheduler = v;
                    break;
                default:
                    throw new BadArgs("unknown option '" + a + "'; " + USAGE);
            }
        }
        if (c.workload == null || c.n < 0 || c.warmup < 0 || c.runs < 0) {
            throw new BadArgs("--workload, --n, --warmup and --runs are required; " + USAGE);
        }
        if (c.workload.equals("backpressure") && (c.bpCase == null || c.capacity < 0)) {
            throw new BadArgs("--workload backpressure needs --case and --capacity; " + USAGE);
        }
        if (c.workload.equals("heap-growth") && (c.buffer == null || c.work < 0)) {
            throw new BadArgs("--workload heap-growth needs --buffer and --work; " + USAGE);
        }
        return c;
    }

    // ------------------------------------------------------------------ the workloads

    /**
     * Makes each element opaque to the JIT, as the Rust rows' `black_box(item)` does to
     * LLVM, without a fence: JMH's Blackhole trick, a store guarded by two volatile reads
     * (plain loads on x86) that can never both match. Without it HotSpot inlines a whole
     * subscribe loop, scalar-replaces its objects and folds the sums (the hand-written
     * loop ran at 0.2 ns a subscription).
     */
    static final class Opaque {
        volatile int b1 = 1;
        volatile int b2 = 2;
        int bait;
        void consume(int v) {
            if (v == b1 & v == b2) bait = v;
        }
    }

    static final Opaque OPAQUE = new Opaque();

    /** Sums what it is given; read `sum` after the run (no volatile store per element). */
    static final class Sum implements Consumer<Integer> {
        long sum;
        @Override public void accept(Integer v) {
            int x = v;
            OPAQUE.consume(x);
            sum += x;
        }
    }

    /**
     * Seed 000's SyncSinglePublisher written against org.reactivestreams: one element, then
     * onComplete, once demand arrives. Rules honoured: request(n <= 0) signals onError
     * (3.9); a request from inside onSubscribe or onNext does not recurse (3.3: the
     * `emitting` flag); after a terminal signal or cancel nothing more is signalled (1.3,
     * 3.6, 3.7).
     */
    static final class SyncSinglePublisher<T> implements Publisher<T> {
        final T value;
        SyncSinglePublisher(T value) { this.value = value; }

        @Override public void subscribe(Subscriber<? super T> s) {
            if (s == null) throw new NullPointerException("subscriber (rule 1.9)");
            s.onSubscribe(new Single1<>(s, value));
        }

        static final class Single1<T> implements Subscription {
            final Subscriber<? super T> s;
            final T value;
            boolean done;
            boolean emitting;

            Single1(Subscriber<? super T> s, T value) { this.s = s; this.value = value; }

            @Override public void request(long n) {
                if (done) return;
                if (n <= 0) {
                    done = true;
                    s.onError(new IllegalArgumentException("rule 3.9: request(" + n + ")"));
                    return;
                }
                if (emitting) return;
                emitting = true;
                done = true;
                s.onNext(value);
                s.onComplete();
            }

            @Override public void cancel() { done = true; }
        }
    }

    /** The seed's subscriber: requests everything, sums. */
    static final class SumSubscriber implements Subscriber<Integer> {
        final Sum into;
        SumSubscriber(Sum into) { this.into = into; }
        @Override public void onSubscribe(Subscription s) { s.request(Long.MAX_VALUE); }
        @Override public void onNext(Integer v) { into.accept(v); }
        @Override public void onError(Throwable t) { throw new IllegalStateException(t); }
        @Override public void onComplete() { }
    }

    /**
     * Seed 000's latency test: range(0, n).map(i -> {nanoTime, thread}).observeOn(scheduler,
     * false, 256), the subscriber recording nanoTime - stamp per element into `lat` (sized
     * before the run) and whether the element was stamped on another thread. Bulk demand:
     * request(Long.MAX_VALUE) once; one-by-one: request(1) after each element. Returns the
     * elements that arrived in order (-1 on error or timeout); `crossed[0]` counts crossings.
     */
    static long latency(Config c, int n, long[] lat, long[] crossed) throws InterruptedException {
        boolean one = c.demand.equals("one-by-one");
        CountDownLatch end = new CountDownLatch(1);
        AtomicBoolean failed = new AtomicBoolean();
        int[] got = {0};
        boolean[] inOrder = {true};
        io.reactivex.rxjava3.core.Scheduler sched =
            c.scheduler.equals("single") ? Schedulers.single() : Schedulers.computation();
        Flowable.range(0, n)
            .map(i -> new long[] {System.nanoTime(), i, Thread.currentThread().getId()})
            .observeOn(sched, false, PREFETCH)
            .subscribe(new io.reactivex.rxjava3.core.FlowableSubscriber<long[]>() {
                Subscription s;
                @Override public void onSubscribe(Subscription s) {
                    this.s = s;
                    s.request(one ? 1 : Long.MAX_VALUE);
                }
                @Override public void onNext(long[] e) {
                    long now = System.nanoTime();
                    int k = got[0]++;
                    lat[k] = Math.max(1, now - e[0]);
                    if (e[1] != k) inOrder[0] = false;
                    if (e[2] != Thread.currentThread().getId()) crossed[0]++;
                    if (one) s.request(1);
                }
                @Override public void onError(Throwable t) { failed.set(true); end.countDown(); }
                @Override public void onComplete() { end.countDown(); }
            });
        if (!end.await(60, TimeUnit.SECONDS) || failed.get() || !inOrder[0]) return -1;
        return got[0];
    }

    /** One run: the result it computed (the fault makes it one short). */
    static long runOnce(Config c) throws InterruptedException {
        int n = c.fault == null ? c.n : c.n - 1;
        Sum sum = new Sum();
        switch (c.workload) {
            case "flowable-range":
                Flowable.range(1, n).subscribe(sum);
                return sum.sum;
            case "single-just": {
                Single<Integer> single = Single.just(1);
                for (int i = 0; i < n; i++) single.subscribe(sum);
                return sum.sum;
            }
            case "hand-written": {
                SyncSinglePublisher<Integer> p = new SyncSinglePublisher<>(1);
                for (int i = 0; i < n; i++) p.subscribe(new SumSubscriber(sum));
                return sum.sum;
            }
            case "observe-on": {
                CountDownLatch end = new CountDownLatch(1);
                AtomicBoolean failed = new AtomicBoolean();
                long[] result = {0};
                Flowable.range(1, n)
                    .observeOn(Schedulers.single(), false, PREFETCH)
                    .subscribe(sum, e -> { failed.set(true); end.countDown(); },
                        () -> { result[0] = sum.sum; end.countDown(); });
                if (!end.await(60, TimeUnit.SECONDS) || failed.get()) return -1;
                return result[0];
            }
            default:
                throw new IllegalStateException("no workload " + c.workload);
        }
    }

    /** The closed form every run must return. */
    static long expected(Config c) {
        if (c.workload.equals("latency") || c.workload.equals("heap-growth")) return c.n;
        if (c.workload.equals("backpressure")) return -1; // the lab checks the counts
        return c.workload.equals("flowable-range") || c.workload.equals("observe-on")
            ? (long) c.n * (c.n + 1L) / 2 : c.n;
    }

    // ------------------------------------------------------------------ per-run figures

    static long[] gc() {
        long count = 0, ms = 0;
        for (GarbageCollectorMXBean g : ManagementFactory.getGarbageCollectorMXBeans()) {
            count += Math.max(0, g.getCollectionCount());
            ms += Math.max(0, g.getCollectionTime());
        }
        return new long[] {count, ms};
    }

    /** Bytes allocated so far by every live thread (HotSpot's per-thread counters). */
    static long allocated() {
        com.sun.management.ThreadMXBean t =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (long b : t.getThreadAllocatedBytes(t.getAllThreadIds())) sum += Math.max(0, b);
        return sum;
    }

    /** RxJava's version from its jar's manifest (else its Bundle-Version). */
    static String rxVersion() {
        String v = Flowable.class.getPackage().getImplementationVersion();
        if (v != null) return v;
        try {
            java.net.URL u = Flowable.class.getProtectionDomain().getCodeSource().getLocation();
            try (java.util.jar.JarFile j = new java.util.jar.JarFile(new java.io.File(u.toURI()))) {
                return j.getManifest().getMainAttributes().getValue("Bundle-Version");
            }
        } catch (Exception e) {
            return null;
        }
    }

    public static void main(String[] args) {
        Protocol proto = Protocol.open();
        if (args.length == 1 && (args[0].equals("--help") || args[0].equals("-h"))) {
            System.err.println(USAGE);
            System.exit(0);
        }
        Config c;
        try {
            c = parse(args);
        } catch (BadArgs e) {
            System.err.println("RxBench: " + e.getMessage());
            System.exit(2);
            return;
        }
        try {
            List<String> warm = new ArrayList<>();
            List<String> runs = new ArrayList<>();
            for (int w = 0; w < c.warmup + c.runs; w++) {
                boolean measured = w >= c.warmup;
                String phase = measured ? "measured" : "warmup";
                long[] gc0 = gc();
                long a0 = allocated();
                boolean lat = c.workload.equals("latency");
                int n = c.fault == null ? c.n : c.n - 1;
                long[] samples = lat ? new long[n] : null;
                long[] crossed = {0};
                long t0 = System.nanoTime();
                proto.runStart(w, phase, t0);
                StringBuilder extra = new StringBuilder();
                long result;
                if (lat) {
                    result = latency(c, n, samples, crossed);
                } else if (c.workload.equals("backpressure")) {
                    RxBackpressure.Counts k = RxBackpressure.run(c);
                    result = k.delivered;
                    extra.append(RxBackpressure.json(c, k));
                } else if (c.workload.equals("heap-growth")) {
                    RxHeapGrowth.Run k = RxHeapGrowth.run(c);
                    result = k.received;
                    extra.append(RxHeapGrowth.json(c, k));
                } else {
                    result = runOnce(c);
                }
                long t1 = System.nanoTime();
                proto.runEnd(w, phase, t1);
                long a1 = allocated();
                long[] gc1 = gc();
                if (lat) {
                    extra.append(",\"crossed\":").append(crossed[0]).append(",\"latency_ns\":[");
                    int k = (int) Math.max(0, result);
                    for (int i = 0; i < k && measured; i++) extra.append(i > 0 ? "," : "").append(samples[i]);
                    extra.append(']');
                }
                (measured ? runs : warm).add(String.format(Locale.ROOT,
                    "{\"ns\":%d,\"result\":%d,\"gc_count\":%d,\"gc_ms\":%d,\"allocated_bytes\":%d%s}",
                    t1 - t0, result, gc1[0] - gc0[0], gc1[1] - gc0[1], Math.max(0, a1 - a0), extra));
                System.err.printf(Locale.ROOT, "%s %d: %.3f ms, result %d%n", phase, w, (t1 - t0) / 1e6, result);
                proto.heartbeat(w);
            }
            StringBuilder b = new StringBuilder("{\"workload\":").append(Protocol.str(c.workload));
            b.append(",\"n\":").append(c.n);
            b.append(",\"expected\":").append(expected(c));
            b.append(",\"prefetch\":").append(PREFETCH);
            b.append(",\"demand\":").append(Protocol.str(c.demand));
            b.append(",\"scheduler\":").append(Protocol.str(c.scheduler));
            b.append(",\"fault\":").append(Protocol.str(c.fault));
            if (c.workload.equals("backpressure")) {
                b.append(",\"case\":").append(Protocol.str(c.bpCase));
                b.append(",\"policy\":").append(Protocol.str(c.policy));
                b.append(",\"capacity\":").append(c.capacity);
                b.append(",\"rate\":").append(Protocol.num(c.rate));
                b.append(",\"service_ns\":").append(c.serviceNs);
            }
            if (c.workload.equals("heap-growth")) {
                b.append(",\"buffer\":").append(Protocol.str(c.buffer));
                b.append(",\"work\":").append(c.work);
                b.append(",\"bound\":").append(c.bound);
            }
            b.append(",\"rxjava_version\":").append(Protocol.str(rxVersion()));
            b.append(",\"jvm\":").append(Protocol.jvmJson());
            b.append(",\"warmup\":[").append(String.join(",", warm)).append(']');
            b.append(",\"runs\":[").append(String.join(",", runs)).append("]}");
            proto.done(b.toString());
            System.exit(0);
        } catch (Throwable t) {
            String msg = t.toString();
            System.err.println("RxBench: failed: " + msg);
            t.printStackTrace(System.err);
            proto.failed(msg);
            System.exit(3);
        }
    }
}
