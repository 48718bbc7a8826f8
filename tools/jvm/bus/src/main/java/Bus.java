// Seed 001's game-server message bus on the real JVM: java.util.concurrent.LinkedBlockingQueue
// (put/take) against the LMAX Disruptor 4.0 or 3.4 (ringBuffer.next/get/publish, one EventHandler),
// P producer threads and one consumer, measured like the Rust harness measures its ports.
// A child process of the lab's runner: one JSON object per line on stdout, diagnostics on
// stderr. See tools/jvm/README.md for the command line and the protocol.

import com.lmax.disruptor.BlockingWaitStrategy;
import com.lmax.disruptor.BusySpinWaitStrategy;
import com.lmax.disruptor.EventHandler;
import com.lmax.disruptor.ExceptionHandler;
import com.lmax.disruptor.LiteBlockingWaitStrategy;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.SleepingWaitStrategy;
import com.lmax.disruptor.WaitStrategy;
import com.lmax.disruptor.YieldingWaitStrategy;
import com.lmax.disruptor.dsl.Disruptor;
import com.lmax.disruptor.dsl.ProducerType;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

public final class Bus extends BusLib {
    private Bus() { }




    // ---------------------------------------------------------------- per-thread accounting

    static final com.sun.management.ThreadMXBean TMX =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    /** One thread's figures over one run: start snapshot, end snapshot, both by the thread. */
    static final class ThreadStats {
        final String name;
        /** The CPU this thread pins itself to, or -1 (the kernel places it). */
        final int pinTo;
        long cpu0, user0, alloc0, vol0, invol0;
        long cpu1, user1, alloc1, vol1, invol1;
        ThreadStats(String name, int pinTo) { this.name = name; this.pinTo = pinTo; }

        /** Before the start gate (outside the timed window). */
        void start() throws Exception {
            if (pinTo >= 0) pinCurrentThread(pinTo);
            long[] cs = contextSwitches();
            vol0 = cs[0]; invol0 = cs[1];
            cpu0 = TMX.getCurrentThreadCpuTime();
            user0 = TMX.getCurrentThreadUserTime();
            alloc0 = TMX.getCurrentThreadAllocatedBytes();
        }
        /** Right after the thread's last message: the two cheap counters. */
        void endFast() {
            alloc1 = TMX.getCurrentThreadAllocatedBytes();
            cpu1 = TMX.getCurrentThreadCpuTime();
        }
        /** The slower ones (user time and context switches read /proc). */
        void endSlow() {
            user1 = TMX.getCurrentThreadUserTime();
            long[] cs = contextSwitches();
            vol1 = cs[0]; invol1 = cs[1];
        }
    }

    /**
     * Pins the calling thread to one CPU, as the Rust harness pins its threads: Java has no
     * affinity API, so `taskset -p` on this thread's Linux tid (from /proc/thread-self),
     * then a check of the kernel's Cpus_allowed_list. Runs before the start gate.
     */
    static void pinCurrentThread(int cpu) throws Exception {
        String tid = Files.readSymbolicLink(Paths.get("/proc/thread-self")).getFileName().toString();
        Process p = new ProcessBuilder("taskset", "-p", "-c", Integer.toString(cpu), tid)
            .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes()).trim();
        if (p.waitFor() != 0) throw new RuntimeException("taskset -p -c " + cpu + " " + tid + ": " + out);
        for (String line : Files.readAllLines(Paths.get("/proc/thread-self/status"))) {
            if (line.startsWith("Cpus_allowed_list:") && !line.substring(18).trim().equals(Integer.toString(cpu))) {
                throw new RuntimeException("pinned to CPU " + cpu + " but " + line.trim());
            }
        }
    }

    static volatile boolean csReadable = true;

    /** This thread's {voluntary, involuntary} context switches, or {-1, -1}. */
    static long[] contextSwitches() {
        long[] r = {-1, -1};
        if (!csReadable) return r;
        try {
            for (String line : Files.readAllLines(Paths.get("/proc/thread-self/status"))) {
                if (line.startsWith("voluntary_ctxt_switches:")) r[0] = Long.parseLong(line.substring(24).trim());
                else if (line.startsWith("nonvoluntary_ctxt_switches:")) r[1] = Long.parseLong(line.substring(27).trim());
            }
        } catch (Exception e) {
            csReadable = false;
        }
        return r;
    }

    static long[] gcTotals() {
        long n = 0, ms = 0;
        for (GarbageCollectorMXBean g : ManagementFactory.getGarbageCollectorMXBeans()) {
            n += Math.max(0, g.getCollectionCount());
            ms += Math.max(0, g.getCollectionTime());
        }
        return new long[] {n, ms};
    }

    // ---------------------------------------------------------------- one run

    static final class Result {
        double ms;
        String verdict;
        ThreadStats[] threads;
        long gcCount, gcMs;
        long messages;
        Latencies latencies;
        String waitStrategy; // the Disruptor's WaitStrategy class, or null
    }

    /** Shared by the threads of one run. */
    static final class RunState {
        final CountDownLatch ready;
        final CountDownLatch gate = new CountDownLatch(1);
        final CountDownLatch done = new CountDownLatch(1);
        final AtomicReference<Throwable> error = new AtomicReference<>();
        volatile long endNs;
        RunState(int workers) { ready = new CountDownLatch(workers); }
        void fail(Throwable t) { error.compareAndSet(null, t); }
        void awaitGate() throws InterruptedException { ready.countDown(); gate.await(); }
    }

    /** The message producer `p` skips under --fault drop-one (producer 0 only), or -1. */
    static long skipped(Config c, int p, long count) {
        return (c.fault != null && p == 0 && count > 0) ? count / 2 : -1;
    }

    /** Where a run is announced on the protocol (null: not at all, as for JIT passes). */
    static final class Mark {
        final Protocol proto;
        final int run;
        final String phase;
        Mark(Protocol proto, int run, String phase) { this.proto = proto; this.run = run; this.phase = phase; }
    }


    /**
     * Producer `id`'s body: `count` messages (less the planted skip), each K-th stamped
     * with nanoTime as the Rust harness stamps them (a countdown from seq 0), then -1.
     */
    static Runnable producer(Config c, RunState st, ThreadStats s, int id, long count, Sender out) {
        final long skip = skipped(c, id, count);
        final long every = c.sampleEvery;
        return () -> {
            try {
                s.start();
                st.awaitGate();
                final Stamper stamps = new Stamper(every);
                if (skip < 0) {
                    // The loop of every run without a planted fault: what the plain loop does.
                    for (long seq = 0; seq < count; seq++) out.send(id, seq, stamps.next());
                } else {
                    for (long seq = 0; seq < count; seq++) {
                        if (seq == skip) continue;
                        out.send(id, seq, stamps.next());
                    }
                }
                out.send(id, -1, 0);
                s.endFast();
                st.done.await();
                s.endSlow();
            } catch (Throwable t) {
                st.fail(t);
            }
        };
    }

    static WaitStrategy waitStrategy(String wait) {
        switch (wait) {
            case "blocking": return new BlockingWaitStrategy();
            case "lite-blocking": return new LiteBlockingWaitStrategy();
            case "sleeping": return new SleepingWaitStrategy();
            case "yielding": return new YieldingWaitStrategy();
            default: return new BusySpinWaitStrategy();
        }
    }

    static Result run(Config c, long n, Mark mark) throws Exception {
        final int P = c.producers;
        final long[] per = spread(n, P);
        final RunState st = new RunState(P + 1);
        final ThreadStats[] stats = new ThreadStats[P + 1];
        for (int i = 0; i < P; i++) stats[i] = new ThreadStats("producer-" + i, c.pin == null ? -1 : c.pin[i + 1]);
        stats[P] = new ThreadStats("consumer", c.pin == null ? -1 : c.pin[0]);
        final Checker checker = new Checker(P);
        final Latencies lat = new Latencies(samples(per, c.sampleEvery));
        final Supplier<Msg> form = form(c.message, c.payload);

        Thread[] producers = new Thread[P];
        Thread consumerThread;
        Disruptor<Msg> disruptor = null;
        String waitClass = null;

        if (c.impl.equals("lbq")) {
            final LinkedBlockingQueue<Msg> q = new LinkedBlockingQueue<>(c.capacity);
            for (int i = 0; i < P; i++) {
                // A new message per put, as Java code does (one object inline, two with a byte[]).
                Sender put = (id, seq, sent) -> {
                    Msg m = form.get();
                    m.set(id, seq, sent);
                    q.put(m);
                };
                producers[i] = new Thread(producer(c, st, stats[i], i, per[i], put), stats[i].name);
            }
            consumerThread = new Thread(() -> {
                ThreadStats s = stats[P];
                try {
                    s.start();
                    st.awaitGate();
                    int ends = 0;
                    while (true) {
                        Msg m = q.take();
                        if (m.seq < 0) {
                            if (++ends == P) break;
                            continue;
                        }
                        if (m.sentNs != 0) lat.record(System.nanoTime() - m.sentNs);
                        checker.observe(m);
                    }
                    st.endNs = System.nanoTime();
                    s.endFast();
                    s.endSlow();
                    st.done.countDown();
                } catch (Throwable t) {
                    st.fail(t);
                }
            }, "consumer");
            consumerThread.start();
        } else if (c.impl.equals("disruptor")) {
            WaitStrategy ws = waitStrategy(c.wait);
            waitClass = ws.getClass().getSimpleName();
            final Thread[] made = new Thread[1];
            // The event factory preallocates every slot; producers write the fields in place.
            final ThreadStats consumerStats = stats[P];
            // The processor thread waits at the same gate as the producers before it runs the
            // processor: in the thread's own runnable, not the handler's onStart, which 3.x
            // calls only through LifecycleAware (gone in 4.0), so both lines gate alike.
            disruptor = new Disruptor<>(form::get, c.ringSize, r -> {
                Thread t = new Thread(() -> {
                    try {
                        consumerStats.start();
                        st.awaitGate();
                    } catch (Throwable e) {
                        st.fail(e); // and run on, as a failed onStart would have
                    }
                    r.run();
                }, "consumer");
                made[0] = t;
                return t;
            }, c.producerType.equals("single") ? ProducerType.SINGLE : ProducerType.MULTI, ws);
            disruptor.handleEventsWith(new Handler(st, stats[P], checker, lat, P));
            disruptor.setDefaultExceptionHandler(new ExceptionHandler<Msg>() {
                public void handleEventException(Throwable ex, long seq, Msg e) { st.fail(ex); }
                public void handleOnStartException(Throwable ex) { st.fail(ex); }
                public void handleOnShutdownException(Throwable ex) { st.fail(ex); }
            });
            final RingBuffer<Msg> rb = disruptor.start();
            consumerThread = made[0];
            for (int i = 0; i < P; i++) {
                Sender publish = (id, seq, sent) -> {
                    long slot = rb.next();
                    try {
                        rb.get(slot).set(id, seq, sent);
                    } finally {
                        rb.publish(slot);
                    }
                };
                producers[i] = new Thread(producer(c, st, stats[i], i, per[i], publish), stats[i].name);
            }
        } else {
            consumerThread = plugged(c, st, stats, checker, lat, form, per, producers);
            waitClass = PLUG.waitStrategy(c.wait);
        }
        for (Thread t : producers) t.start();

        // Everyone snapshots itself and waits at the gate; the clock starts when it opens.
        long limitNs = TimeUnit.SECONDS.toNanos(30) + n * 5_000L; // 30 s + 5 µs a message
        long waitStart = System.nanoTime();
        while (!st.ready.await(100, TimeUnit.MILLISECONDS)) {
            checkAlive(st, waitStart, limitNs, "threads to reach the start gate");
        }
        long[] gc0 = gcTotals();
        long t0 = System.nanoTime();
        if (mark != null) mark.proto.runStart(mark.run, mark.phase, t0);
        st.gate.countDown();
        while (!st.done.await(100, TimeUnit.MILLISECONDS)) {
            checkAlive(st, t0, limitNs, "the consumer to receive every producer's end marker");
        }
        long t1 = st.endNs;
        long[] gc1 = gcTotals();
        if (mark != null) mark.proto.runEnd(mark.run, mark.phase, t1);
        for (Thread t : producers) t.join();
        if (disruptor != null) disruptor.shutdown(); // everything is consumed: halts at once
        consumerThread.join();
        if (st.error.get() != null) throw new RuntimeException("worker thread failed", st.error.get());

        Result r = new Result();
        r.ms = (t1 - t0) / 1e6;
        r.verdict = checker.verdict(per, expected(c, n, per));
        r.threads = stats;
        r.gcCount = gc1[0] - gc0[0];
        r.gcMs = gc1[1] - gc0[1];
        r.messages = n;
        r.latencies = lat;
        r.waitStrategy = waitClass;
        return r;
    }

    /**
     * A group's queue ({@link #PLUG}): a new message per send, as for the LinkedBlockingQueue
     * (a queue of references), and the consumer's loop is the queue's own (`consume`); the
     * check and the stamps are the same as for the built-in queues. Fills `producers`,
     * starts and returns the consumer.
     */
    static Thread plugged(Config c, RunState st, ThreadStats[] stats, Checker checker,
                          Latencies lat, Supplier<Msg> form, long[] per, Thread[] producers) {
        final int P = c.producers;
        final Channel q = PLUG.open(c);
        for (int i = 0; i < P; i++) {
            Sender send = (id, seq, sent) -> {
                Msg m = form.get();
                m.set(id, seq, sent);
                q.send(m);
            };
            producers[i] = new Thread(producer(c, st, stats[i], i, per[i], send), stats[i].name);
        }
        Thread consumer = new Thread(() -> {
            ThreadStats s = stats[P];
            try {
                s.start();
                st.awaitGate();
                q.consume(new Sink() {
                    int ends;
                    @Override public void accept(Msg m) {
                        if (m.seq < 0) {
                            ends++;
                            return;
                        }
                        if (m.sentNs != 0) lat.record(System.nanoTime() - m.sentNs);
                        checker.observe(m);
                    }
                    @Override public boolean more() { return ends < P; }
                });
                st.endNs = System.nanoTime();
                s.endFast();
                s.endSlow();
                st.done.countDown();
            } catch (Throwable t) {
                st.fail(t);
            }
        }, "consumer");
        consumer.start();
        return consumer;
    }

    static void checkAlive(RunState st, long since, long limitNs, String what) {
        Throwable t = st.error.get();
        if (t != null) throw new RuntimeException("worker thread failed", t);
        if (System.nanoTime() - since > limitNs) {
            throw new RuntimeException("timed out after " + (limitNs / 1_000_000_000L)
                + " s waiting for " + what);
        }
    }

    /** The Disruptor's consumer: one EventHandler on the processor's own thread. */
    static final class Handler implements EventHandler<Msg> {
        final RunState st;
        final ThreadStats stats;
        final Checker checker;
        final Latencies lat;
        final int producers;
        int ends;
        Handler(RunState st, ThreadStats stats, Checker checker, Latencies lat, int producers) {
            this.st = st; this.stats = stats; this.checker = checker; this.lat = lat; this.producers = producers;
        }

        @Override public void onEvent(Msg e, long sequence, boolean endOfBatch) {
            if (e.seq < 0) {
                if (++ends == producers) {
                    st.endNs = System.nanoTime();
                    stats.endFast();
                    stats.endSlow();
                    st.done.countDown();
                }
                return;
            }
            if (e.sentNs != 0) lat.record(System.nanoTime() - e.sentNs);
            checker.observe(e);
        }
    }

    // ---------------------------------------------------------------- expected checksums

    static final Map<Long, Long> EXPECTED = new LinkedHashMap<>();

    static long expected(Config c, long n, long[] per) {
        return EXPECTED.computeIfAbsent(n, k -> expectedChecksum(per, form(c.message, c.payload)));
    }

    // ---------------------------------------------------------------- JSON by hand

    static String str(String s) { return Protocol.str(s); }

    static String num(double d) { return Protocol.num(d); }

    static String nsToMs(long ns) { return Protocol.nsToMs(ns); }

    /** A run's JSON; `latency`: with its latency samples (measured runs). */
    static String runJson(Result r, boolean latency) {
        StringBuilder b = new StringBuilder();
        b.append("{\"ms\":").append(num(r.ms));
        b.append(",\"msgs_per_sec\":").append(num(r.messages / (r.ms / 1e3)));
        b.append(",\"valid\":").append(r.verdict.equals("ok"));
        b.append(",\"verdict\":").append(str(r.verdict));
        b.append(",\"threads\":[");
        long alloc = 0, vol = 0, invol = 0;
        boolean cs = true;
        for (int i = 0; i < r.threads.length; i++) {
            ThreadStats t = r.threads[i];
            long a = t.alloc1 - t.alloc0;
            alloc += a;
            boolean tcs = t.vol0 >= 0 && t.vol1 >= 0;
            cs &= tcs;
            if (tcs) { vol += t.vol1 - t.vol0; invol += t.invol1 - t.invol0; }
            if (i > 0) b.append(',');
            b.append("{\"name\":").append(str(t.name));
            b.append(",\"cpu_ms\":").append(nsToMs(t.cpu1 - t.cpu0));
            b.append(",\"user_ms\":").append(nsToMs(t.user1 - t.user0));
            b.append(",\"allocated_bytes\":").append(a);
            b.append(",\"voluntary_cs\":").append(tcs ? String.valueOf(t.vol1 - t.vol0) : "null");
            b.append(",\"involuntary_cs\":").append(tcs ? String.valueOf(t.invol1 - t.invol0) : "null");
            b.append('}');
        }
        b.append("],\"gc_count\":").append(r.gcCount);
        b.append(",\"gc_ms\":").append(r.gcMs);
        b.append(",\"allocated_bytes_per_message\":").append(num((double) alloc / r.messages));
        b.append(",\"voluntary_cs\":").append(cs ? String.valueOf(vol) : "null");
        b.append(",\"involuntary_cs\":").append(cs ? String.valueOf(invol) : "null");
        if (latency) {
            b.append(",\"latency_ns\":[");
            for (int i = 0; i < r.latencies.n; i++) b.append(i > 0 ? "," : "").append(r.latencies.v[i]);
            b.append(']');
        }
        return b.append('}').toString();
    }

    static String[] disruptorVersion() {
        Package p = RingBuffer.class.getPackage();
        if (p != null && p.getImplementationVersion() != null) {
            return new String[] {p.getImplementationVersion(), "manifest"};
        }
        // A jar without Implementation-Version still carries Maven's pom.properties.
        try (InputStream in = RingBuffer.class.getResourceAsStream(
                "/META-INF/maven/com.lmax/disruptor/pom.properties")) {
            if (in != null) {
                Properties props = new Properties();
                props.load(in);
                String v = props.getProperty("version");
                if (v != null) return new String[] {v, "pom.properties"};
            }
        } catch (Exception ignored) {
            // fall through
        }
        // LMAX's own jars (Maven Central's) carry neither: their OSGi Bundle-Version.
        String v = bundleVersion(RingBuffer.class);
        return v != null ? new String[] {v, "Bundle-Version"} : new String[] {null, null};
    }

    /** The Bundle-Version of the jar `c` was loaded from, or null. */
    static String bundleVersion(Class<?> c) {
        try {
            java.net.URL u = c.getProtectionDomain().getCodeSource().getLocation();
            try (java.util.jar.JarFile j = new java.util.jar.JarFile(new java.io.File(u.toURI()))) {
                return j.getManifest().getMainAttributes().getValue("Bundle-Version");
            }
        } catch (Exception e) {
            return null;
        }
    }

    // ---------------------------------------------------------------- main

    /** The outcome object of the done line. */
    static String outcome(Config c, long[] per, long jitN, List<String> jitMs, String waitClass,
                          List<String> warm, List<String> runs) {
        StringBuilder b = new StringBuilder();
        b.append("{\"impl\":").append(str(c.impl));
        b.append(",\"producers\":").append(c.producers);
        b.append(",\"messages\":").append(c.messages);
        b.append(",\"per_producer\":[");
        for (int p = 0; p < per.length; p++) b.append(p > 0 ? "," : "").append(per[p]);
        b.append("],\"payload_bytes\":").append(c.payload);
        b.append(",\"message\":").append(str(c.message));
        b.append(",\"expected_checksum\":").append(Long.toUnsignedString(expected(c, c.messages, per)));
        b.append(",\"sample_every\":").append(c.sampleEvery);
        b.append(",\"ring_size\":").append(c.ringSize);
        b.append(",\"capacity\":").append(c.capacityGiven ? String.valueOf(c.capacity) : "null");
        b.append(",\"wait\":").append(str(c.wait));
        b.append(",\"wait_strategy\":").append(str(waitClass));
        b.append(",\"producer_type\":").append(str(c.producerType));
        b.append(",\"fault\":").append(str(c.fault));
        b.append(",\"jit_warmup_passes\":").append(c.jitWarmup);
        b.append(",\"jit_warmup_messages\":").append(jitN);
        b.append(",\"jit_warmup_ms\":[").append(String.join(",", jitMs)).append(']');
        b.append(",\"jvm\":").append(Protocol.jvmJson());
        b.append(",\"library\":").append(str(PLUG != null ? PLUG.library() : null));
        String[] dv = disruptorVersion();
        b.append(",\"disruptor_version\":").append(str(dv[0]));
        b.append(",\"disruptor_version_source\":").append(str(dv[1]));
        b.append(",\"warmup\":[").append(String.join(",", warm)).append(']');
        b.append(",\"runs\":[").append(String.join(",", runs)).append(']');
        return b.append('}').toString();
    }

    public static void main(String[] args) {
        // Only protocol lines go to the real stdout; anything else that prints goes to stderr.
        Protocol proto = Protocol.open();

        if (args.length == 1 && (args[0].equals("--help") || args[0].equals("-h"))) {
            System.err.println(USAGE);
            System.exit(0);
        }
        Config c;
        try {
            c = parse(args);
        } catch (BadArgs e) {
            System.err.println("Bus: " + e.getMessage());
            System.exit(2);
            return;
        }
        if (PLUGS.containsKey(c.impl)) {
            try {
                PLUG = plug(c.impl);
            } catch (BadArgs e) {
                System.err.println("Bus: " + e.getMessage());
                System.exit(2);
                return;
            }
        }
        if (c.plain) {
            Plain.main(c, proto);
            return;
        }
        try {
            long[] per = spread(c.messages, c.producers);
            long jitN = Math.min(c.messages, 1_000_000L);
            // The expected checksums are computed before any run, outside every timed window.
            expected(c, c.messages, per);
            List<String> jitMs = new ArrayList<>();
            for (int k = 0; k < c.jitWarmup; k++) {
                Result r = run(c, jitN, null);
                jitMs.add(num(r.ms));
                System.err.printf(Locale.ROOT, "jit warm-up %d/%d: %d messages, %.1f ms, %s%n",
                    k + 1, c.jitWarmup, jitN, r.ms, r.verdict);
            }
            List<String> warm = new ArrayList<>();
            List<String> runs = new ArrayList<>();
            String waitClass = null;
            for (int w = 0; w < c.warmup + c.runs; w++) {
                boolean measured = w >= c.warmup;
                Result r = run(c, c.messages, new Mark(proto, w, measured ? "measured" : "warmup"));
                waitClass = r.waitStrategy;
                (measured ? runs : warm).add(runJson(r, measured));
                System.err.printf(Locale.ROOT, "%s %d: %.1f ms, %.2f M msgs/s, %s%n",
                    measured ? "run" : "warm-up", measured ? w - c.warmup : w,
                    r.ms, c.messages / r.ms / 1e3, r.verdict);
                proto.heartbeat(w);
            }
            proto.done(outcome(c, per, jitN, jitMs, waitClass, warm, runs));
            System.exit(0);
        } catch (Throwable t) {
            proto.exitFailed("Bus", t);
        }
    }
}
