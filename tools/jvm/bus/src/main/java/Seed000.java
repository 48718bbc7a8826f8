// Seed 000's JVM programs, the part every library shares: the command line, the run loop
// (warm-up then measured runs, each between run marks with its GC, allocation and result),
// the outcome JSON and the JIT blackhole. Each library (RxBench on RxJava 3, ReactorBench on
// Reactor 3.8) is a `Library` whose workloads this class drives, so the lab starts both with
// one code path (lab/src/measure/rx.rs) and reads one outcome shape.
//
//   java -cp CP RxBench|ReactorBench --workload W --n N --warmup W --runs R [--fault drop-one]
//     [--demand bulk|one-by-one] [--scheduler S]                  (latency)
//     --case sync-request-1|publish-on-1|grid --policy drop-latest|drop-oldest|error
//     --capacity C [--rate R --service-ns S]                      (backpressure)
//     --buffer B --work W [--bound B]                             (heap-growth)
//
// Exit 0: done (also when a run's result is wrong: the outcome says so); 2: bad command
// line (one line on stderr); 3: failed. tools/jvm/README.md ("RxJava", "Reactor") has the
// details.

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

final class Seed000 {
    static final String[] CASES = {"sync-request-1", "publish-on-1", "grid"};
    static final String[] POLICIES = {"drop-latest", "drop-oldest", "error"};

    /** The publish-on/observe-on queue: Reactor's publishOn prefetch, the reactive crate's
     *  default. */
    static final int PREFETCH = 256;

    private Seed000() { }

    /** A library's side: its names and its workloads. */
    interface Library {
        /** The program's name, for errors ("RxBench"). */
        String tool();
        /** --workload's names, the four subscribe workloads first (range, just, hand-written,
         *  the publish-on sum), then latency, backpressure, heap-growth. */
        String[] workloads();
        /** --scheduler's names (latency), the single-thread one first. */
        String[] schedulers();
        /** --buffer's names (heap-growth). */
        String[] buffers();
        /** The outcome's key for the library's version ("rxjava_version"). */
        String versionKey();
        /** The library's version, from its jar. */
        String version();
        /** One run of a subscribe workload (the fault: one op fewer); its result. */
        long runOnce(Config c) throws InterruptedException;
        /** One latency run over n elements: samples into lat, crossings into crossed[0]; the
         *  elements that arrived in order (-1 on error or timeout). */
        long latency(Config c, int n, long[] lat, long[] crossed) throws InterruptedException;
        /** One backpressure run: its delivered count; its `,"bp":{…}` fields into extra. */
        long backpressure(Config c, StringBuilder extra) throws InterruptedException;
        /** One heap-growth run: its received count; its `,"heap":{…}` fields into extra. */
        long heapGrowth(Config c, StringBuilder extra) throws InterruptedException;
    }

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
        String scheduler;
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

        /** The ops one run performs: one fewer under the planted fault. */
        int ops() { return fault == null ? n : n - 1; }
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

    static String usage(Library lib) {
        return "usage: " + lib.tool() + " --workload " + String.join("|", lib.workloads())
            + " --n N --warmup W --runs R [--fault drop-one] [--demand bulk|one-by-one]"
            + " [--scheduler " + String.join("|", lib.schedulers()) + "]"
            + " [--case " + String.join("|", CASES) + "] [--policy " + String.join("|", POLICIES) + "]"
            + " [--capacity C] [--rate R] [--service-ns S]"
            + " [--buffer " + String.join("|", lib.buffers()) + "] [--work W] [--bound B]";
    }

    static Config parse(Library lib, String[] args) throws BadArgs {
        Config c = new Config();
        c.scheduler = lib.schedulers()[0];
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String v = null;
            int eq = a.indexOf('=');
            if (eq > 0) { v = a.substring(eq + 1); a = a.substring(0, eq); }
            else if (i + 1 < args.length) v = args[++i];
            if (v == null) throw new BadArgs(a + " needs a value");
            switch (a) {
                case "--workload": c.workload = oneOf(a, v, lib.workloads()); break;
                case "--n": c.n = count(a, v, 1); break;
                case "--case": c.bpCase = oneOf(a, v, CASES); break;
                case "--policy": c.policy = oneOf(a, v, POLICIES); break;
                case "--capacity": c.capacity = count(a, v, 1); break;
                case "--service-ns": c.serviceNs = count(a, v, 0); break;
                case "--buffer": c.buffer = oneOf(a, v, lib.buffers()); break;
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
                case "--fault": c.fault = oneOf(a, v, new String[] {"drop-one"}); break;
                case "--demand": c.demand = oneOf(a, v, new String[] {"bulk", "one-by-one"}); break;
                case "--scheduler": c.scheduler = oneOf(a, v, lib.schedulers()); break;
                default:
                    throw new BadArgs("unknown option '" + a + "'; " + usage(lib));
            }
        }
        if (c.workload == null || c.n < 0 || c.warmup < 0 || c.runs < 0) {
            throw new BadArgs("--workload, --n, --warmup and --runs are required; " + usage(lib));
        }
        if (c.workload.equals("backpressure") && (c.bpCase == null || c.capacity < 0)) {
            throw new BadArgs("--workload backpressure needs --case and --capacity; " + usage(lib));
        }
        if (c.workload.equals("heap-growth") && (c.buffer == null || c.work < 0)) {
            throw new BadArgs("--workload heap-growth needs --buffer and --work; " + usage(lib));
        }
        return c;
    }

    /**
     * Makes each element opaque to the JIT, as the Rust rows' `black_box(item)` does to
     * LLVM, without a fence: JMH's Blackhole trick, a store guarded by two volatile reads
     * (plain loads on x86) that can never both match. Without it HotSpot inlines a whole
     * subscribe loop, scalar-replaces its objects and folds the sums, and the loop then
     * times no subscriptions at all (docs/design-figures.md).
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
    static final class Sum {
        long sum;
        void add(int x) {
            OPAQUE.consume(x);
            sum += x;
        }
    }

    static void spinFor(long ns) {
        long t0 = System.nanoTime();
        while (System.nanoTime() - t0 < ns) Thread.onSpinWait();
    }

    /** The closed form every run must return: the range workloads sum 1..N, the others
     *  count N (backpressure: -1, the lab checks its counts). The range workloads are the
     *  library's first and fourth (range summed, the publish-on sum). */
    static long expected(Library lib, Config c) {
        if (c.workload.equals("backpressure")) return -1;
        String[] w = lib.workloads();
        boolean range = c.workload.equals(w[0]) || c.workload.equals(w[3]);
        return range ? (long) c.n * (c.n + 1L) / 2 : c.n;
    }

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

    /** The version in the jar that holds `cls`: its Implementation-Version, else its
     *  Bundle-Version. */
    static String jarVersion(Class<?> cls) {
        String v = cls.getPackage().getImplementationVersion();
        if (v != null) return v;
        try {
            java.net.URL u = cls.getProtectionDomain().getCodeSource().getLocation();
            try (java.util.jar.JarFile j = new java.util.jar.JarFile(new java.io.File(u.toURI()))) {
                return j.getManifest().getMainAttributes().getValue("Bundle-Version");
            }
        } catch (Exception e) {
            return null;
        }
    }

    /** One run between its marks; its JSON object. */
    static String oneRun(Library lib, Config c, Protocol proto, int w) throws InterruptedException {
        boolean measured = w >= c.warmup;
        String phase = measured ? "measured" : "warmup";
        long[] gc0 = gc();
        long a0 = allocated();
        boolean lat = c.workload.equals("latency");
        long[] samples = lat ? new long[c.ops()] : null;
        long[] crossed = {0};
        long t0 = System.nanoTime();
        proto.runStart(w, phase, t0);
        StringBuilder extra = new StringBuilder();
        long result;
        if (lat) result = lib.latency(c, c.ops(), samples, crossed);
        else if (c.workload.equals("backpressure")) result = lib.backpressure(c, extra);
        else if (c.workload.equals("heap-growth")) result = lib.heapGrowth(c, extra);
        else result = lib.runOnce(c);
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
        System.err.printf(Locale.ROOT, "%s %d: %.3f ms, result %d%n", phase, w, (t1 - t0) / 1e6, result);
        return String.format(Locale.ROOT,
            "{\"ns\":%d,\"result\":%d,\"gc_count\":%d,\"gc_ms\":%d,\"allocated_bytes\":%d%s}",
            t1 - t0, result, gc1[0] - gc0[0], gc1[1] - gc0[1], Math.max(0, a1 - a0), extra);
    }

    /** The outcome: the configuration, the library's version, the JVM and every run. */
    static String outcome(Library lib, Config c, List<String> warm, List<String> runs) {
        StringBuilder b = new StringBuilder("{\"workload\":").append(Protocol.str(c.workload));
        b.append(",\"n\":").append(c.n);
        b.append(",\"expected\":").append(expected(lib, c));
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
        b.append(",\"").append(lib.versionKey()).append("\":").append(Protocol.str(lib.version()));
        b.append(",\"jvm\":").append(Protocol.jvmJson());
        b.append(",\"warmup\":[").append(String.join(",", warm)).append(']');
        b.append(",\"runs\":[").append(String.join(",", runs)).append("]}");
        return b.toString();
    }

    /** The program: parse, run, report; exits 0, 2 (bad command line) or 3 (failed). */
    static void main(Library lib, String[] args) {
        Protocol proto = Protocol.open();
        if (args.length == 1 && (args[0].equals("--help") || args[0].equals("-h"))) {
            System.err.println(usage(lib));
            System.exit(0);
        }
        Config c;
        try {
            c = parse(lib, args);
        } catch (BadArgs e) {
            System.err.println(lib.tool() + ": " + e.getMessage());
            System.exit(2);
            return;
        }
        try {
            List<String> warm = new ArrayList<>();
            List<String> runs = new ArrayList<>();
            for (int w = 0; w < c.warmup + c.runs; w++) {
                (w >= c.warmup ? runs : warm).add(oneRun(lib, c, proto, w));
                proto.heartbeat(w);
            }
            proto.done(outcome(lib, c, warm, runs));
            System.exit(0);
        } catch (Throwable t) {
            String msg = t.toString();
            System.err.println(lib.tool() + ": failed: " + msg);
            t.printStackTrace(System.err);
            proto.failed(msg);
            System.exit(3);
        }
    }
}
