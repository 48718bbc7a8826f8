// handoff-latency's JVM rows: the originals (LinkedBlockingQueue, the LMAX Disruptor) under
// the workloads the Rust rows run (lab/src/experiments/handoff_latency/cell.rs), recorded
// into HdrHistogram on this side and handed back encoded (V2, compressed, base64), which the
// lab decodes with the Rust hdrhistogram crate.
//
// * ping-pong: two lines, one message in flight; the pinger (the consumer of the way back)
//   records each round trip and sends the next.
// * fixed-rate: P producers on a schedule (open loop); message k (producer k mod P, its
//   number k div P) is due at start + k / rate; the consumer records taken - due (the
//   correction: a stall is charged to every message it delayed) and taken - sent (what a
//   recording with coordinated omission would show). Messages never sent are charged from
//   their due time to the run's end.
// * sweep: fixed-rate runs whose rate doubles until one is not sustained (a message never
//   sent, or p99 over the bound).
//
// The Disruptor's consumer is its own event processor (the handler), waiting with the wait
// strategy named; the queue's consumer is a thread in take().

import com.lmax.disruptor.ExceptionHandler;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.WaitStrategy;
import com.lmax.disruptor.dsl.Disruptor;
import com.lmax.disruptor.dsl.ProducerType;
import java.lang.management.CompilationMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import org.HdrHistogram.Histogram;

final class LatencyRun {
    private LatencyRun() { }

    /** As the Rust side's hdr::HIGHEST_NS: 1 ns .. 100 s, 3 significant digits. */
    static final long HIGHEST_NS = 100_000_000_000L;
    /** As cell::LATE_NS: a message sent this long after its due time is late. */
    static final long LATE_NS = 10_000;
    /** As cell::SLEEP_MARGIN_NS: a producer sleeps until this long before its due time. */
    static final long SLEEP_MARGIN_NS = 100_000;
    /** As journeys::KEPT. */
    static final int KEPT = 8;
    /** A run that has not ended this long after its schedule did has failed. */
    static final long GRACE_NS = TimeUnit.SECONDS.toNanos(30);

    static final String USAGE = "usage: LatencyRun --impl lbq|disruptor --workload"
        + " ping-pong|fixed-rate|sweep --wait blocking|lite-blocking|sleeping|yielding|busy-spin"
        + " --ring-size S --warmup W --runs R --jit-warmup J [--trips N] [--rate R]"
        + " [--producers P] [--duration-ms D] [--sweep-steps K] [--p99-bound-ns B]"
        + " [--pin CPU,CPU,...] [--stall-every N --stall-ns NS] [--send-late-ns NS]";

    static final class Config {
        String impl;
        String workload;
        String wait;
        int ringSize;
        int warmup;
        int runs;
        int jitWarmup;
        long trips = 5000;
        double rate = 1_000_000;
        int producers = 1;
        long durationMs = 100;
        int sweepSteps = 8;
        long p99BoundNs = 100_000;
        /** Planted faults, for the lab's own tests (as cell::Plant): the consumer sleeps
         *  stallNs after every stallEvery-th message; each producer sends sendLateNs late. */
        long stallEvery, stallNs, sendLateNs;
        /** null, or the CPU of the consumer (ping-pong: the pinger), then of each other thread. */
        int[] pin;

        /** The CPU of thread `i` (0: the consumer), or -1: where the kernel puts it. */
        int cpu(int i) {
            return pin == null || i >= pin.length ? -1 : pin[i];
        }
    }

    static Config parse(String[] args) throws BusLib.BadArgs {
        List<String> flags = List.of("--impl", "--workload", "--wait", "--ring-size", "--warmup",
            "--runs", "--jit-warmup", "--trips", "--rate", "--producers", "--duration-ms",
            "--sweep-steps", "--p99-bound-ns", "--pin", "--stall-every", "--stall-ns", "--send-late-ns");
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i += 2) {
            if (!flags.contains(args[i])) {
                throw new BusLib.BadArgs("unknown argument '" + args[i] + "'; valid flags: "
                    + String.join(" ", flags));
            }
            if (i + 1 >= args.length) throw new BusLib.BadArgs(args[i] + " needs a value; " + USAGE);
            if (m.put(args[i], args[i + 1]) != null) throw new BusLib.BadArgs(args[i] + " given twice");
        }
        for (String r : List.of("--impl", "--workload", "--wait", "--ring-size", "--warmup", "--runs", "--jit-warmup")) {
            if (!m.containsKey(r)) throw new BusLib.BadArgs("missing " + r + "; " + USAGE);
        }
        Config c = new Config();
        c.impl = BusLib.choice("--impl", m.get("--impl"), List.of("lbq", "disruptor"));
        c.workload = BusLib.choice("--workload", m.get("--workload"), List.of("ping-pong", "fixed-rate", "sweep"));
        c.wait = BusLib.choice("--wait", m.get("--wait"),
            List.of("blocking", "lite-blocking", "sleeping", "yielding", "busy-spin"));
        long ring = BusLib.count("--ring-size", m.get("--ring-size"), 1, 1L << 30);
        if (Long.bitCount(ring) != 1) {
            throw new BusLib.BadArgs("--ring-size: " + ring + " is not a power of two; valid: 1, 2, 4, ..., 1Gi");
        }
        c.ringSize = (int) ring;
        c.warmup = (int) BusLib.count("--warmup", m.get("--warmup"), 0, 1000);
        c.runs = (int) BusLib.count("--runs", m.get("--runs"), 1, 1000);
        c.jitWarmup = (int) BusLib.count("--jit-warmup", m.get("--jit-warmup"), 0, 100);
        if (m.containsKey("--trips")) c.trips = BusLib.count("--trips", m.get("--trips"), 1, 1L << 40);
        if (m.containsKey("--rate")) {
            c.rate = BusLib.count("--rate", m.get("--rate"), 1, 1L << 40);
        }
        if (m.containsKey("--producers")) c.producers = (int) BusLib.count("--producers", m.get("--producers"), 1, 1024);
        if (m.containsKey("--duration-ms")) c.durationMs = BusLib.count("--duration-ms", m.get("--duration-ms"), 1, 1L << 30);
        if (m.containsKey("--sweep-steps")) c.sweepSteps = (int) BusLib.count("--sweep-steps", m.get("--sweep-steps"), 1, 20);
        if (m.containsKey("--p99-bound-ns")) c.p99BoundNs = BusLib.count("--p99-bound-ns", m.get("--p99-bound-ns"), 1, HIGHEST_NS);
        if (m.containsKey("--stall-every")) c.stallEvery = BusLib.count("--stall-every", m.get("--stall-every"), 0, 1L << 40);
        if (m.containsKey("--stall-ns")) c.stallNs = BusLib.count("--stall-ns", m.get("--stall-ns"), 0, HIGHEST_NS);
        if (m.containsKey("--send-late-ns")) c.sendLateNs = BusLib.count("--send-late-ns", m.get("--send-late-ns"), 0, HIGHEST_NS);
        if (m.containsKey("--pin")) {
            String[] cpus = m.get("--pin").split(",");
            c.pin = new int[cpus.length];
            for (int i = 0; i < cpus.length; i++) c.pin[i] = (int) BusLib.count("--pin", cpus[i], 0, 4095);
        }
        return c;
    }

    /** Pins the calling thread to `cpu` (-1: leaves it), as Bus pins its threads. */
    static void pin(int cpu) throws Exception {
        if (cpu >= 0) Bus.pinCurrentThread(cpu);
    }

    // ---------------------------------------------------------------- lines

    /** The consumer's side: one call per message taken; false stops it. */
    interface Taker {
        boolean take(BusLib.Msg m) throws Exception;
    }

    /** One handoff for one run: producers send, one consumer thread takes. */
    abstract static class Line {
        volatile Throwable error;
        abstract void send(int producer, long seq, long sentNs) throws InterruptedException;
        /**
         * Starts the consumer thread `name` on `cpu` (-1: unpinned), which counts `ready`
         * down once pinned, then takes into `t` until it says stop.
         */
        abstract void start(String name, int cpu, java.util.concurrent.CountDownLatch ready, Taker t);
        /** Messages in the line behind the one the consumer is taking (its thread only). */
        abstract long depth();
        /** The slots of a bounded line, -1 for an unbounded one. */
        abstract long capacity();
        /** Waits for the consumer to stop (at most until `deadlineNs`), then frees the line. */
        abstract void join(long deadlineNs) throws Exception;

        void fail(Throwable t) {
            if (error == null) error = t;
        }

        void check() {
            if (error != null) throw new RuntimeException("the consumer failed", error);
        }
    }

    static void awaitThread(Thread t, long deadlineNs, String what) throws InterruptedException {
        while (t.isAlive()) {
            long left = deadlineNs - System.nanoTime();
            if (left <= 0) throw new IllegalStateException(what + " did not end in time");
            TimeUnit.NANOSECONDS.timedJoin(t, Math.min(left, TimeUnit.MILLISECONDS.toNanos(100)));
        }
    }

    /** LinkedBlockingQueue, unbounded as seed 001's: a new message per put, take() to wait. */
    static final class LbqLine extends Line {
        final LinkedBlockingQueue<BusLib.Msg> q = new LinkedBlockingQueue<>();
        final Supplier<BusLib.Msg> form;
        Thread thread;

        LbqLine(Supplier<BusLib.Msg> form) { this.form = form; }

        void send(int producer, long seq, long sentNs) throws InterruptedException {
            BusLib.Msg m = form.get();
            m.set(producer, seq, sentNs);
            q.put(m);
        }

        void start(String name, int cpu, java.util.concurrent.CountDownLatch ready, Taker t) {
            thread = new Thread(() -> {
                try {
                    pin(cpu);
                    ready.countDown();
                    while (t.take(q.take())) { }
                } catch (Throwable e) {
                    fail(e);
                }
            }, name);
            thread.start();
        }

        long depth() { return q.size(); }

        long capacity() { return -1; }

        void join(long deadlineNs) throws Exception {
            awaitThread(thread, deadlineNs, "the queue's consumer");
            check();
        }
    }

    /**
     * The Disruptor: preallocated slots written in place, the handler run by the
     * Disruptor's own processor thread with the wait strategy of `--wait`; a single-producer
     * sequencer where one thread publishes, as LMAX's latency tests use.
     */
    static final class DisruptorLine extends Line {
        final Disruptor<BusLib.Msg> d;
        RingBuffer<BusLib.Msg> rb;
        long current;
        final java.util.concurrent.CountDownLatch stopped = new java.util.concurrent.CountDownLatch(1);
        final long slots;

        int cpu = -1;
        java.util.concurrent.CountDownLatch ready;

        DisruptorLine(Config c, int producers, Supplier<BusLib.Msg> form, String name) {
            WaitStrategy ws = Bus.waitStrategy(c.wait);
            slots = c.ringSize;
            // The processor's thread pins itself and reports ready before it runs.
            d = new Disruptor<>(form::get, c.ringSize, r -> new Thread(() -> {
                try {
                    pin(cpu);
                } catch (Throwable e) {
                    fail(e);
                }
                ready.countDown();
                r.run();
            }, name), producers == 1 ? ProducerType.SINGLE : ProducerType.MULTI, ws);
            d.setDefaultExceptionHandler(new ExceptionHandler<BusLib.Msg>() {
                public void handleEventException(Throwable ex, long seq, BusLib.Msg e) { fail(ex); stopped.countDown(); }
                public void handleOnStartException(Throwable ex) { fail(ex); stopped.countDown(); }
                public void handleOnShutdownException(Throwable ex) { fail(ex); }
            });
        }

        void send(int producer, long seq, long sentNs) {
            long s = rb.next();
            try {
                rb.get(s).set(producer, seq, sentNs);
            } finally {
                rb.publish(s);
            }
        }

        void start(String name, int cpu, java.util.concurrent.CountDownLatch ready, Taker t) {
            this.cpu = cpu;
            this.ready = ready;
            d.handleEventsWith((e, sequence, endOfBatch) -> {
                current = sequence;
                if (stopped.getCount() > 0 && !t.take(e)) stopped.countDown();
            });
            rb = d.start();
        }

        long depth() { return rb.getCursor() - current; }

        long capacity() { return slots; }

        void join(long deadlineNs) throws Exception {
            long left = deadlineNs - System.nanoTime();
            if (!stopped.await(Math.max(left, 0), TimeUnit.NANOSECONDS)) {
                d.halt();
                throw new IllegalStateException("the Disruptor's handler did not end in time");
            }
            d.halt();
            check();
        }
    }

    static Line line(Config c, int producers, Supplier<BusLib.Msg> form, String consumer) {
        return c.impl.equals("lbq") ? new LbqLine(form) : new DisruptorLine(c, producers, form, consumer);
    }

    // ---------------------------------------------------------------- recording

    static Histogram hist() {
        return new Histogram(1, HIGHEST_NS, 3);
    }

    /** As hdr::record: 0 counts as 1 ns, above the highest as the highest. */
    static void record(Histogram h, long ns) {
        h.recordValue(Math.max(1, Math.min(ns, HIGHEST_NS)));
    }

    static String encode(Histogram h) {
        ByteBuffer b = ByteBuffer.allocate(h.getNeededByteBufferCapacity());
        int n = h.encodeIntoCompressedByteBuffer(b);
        byte[] bytes = new byte[n];
        b.flip();
        b.get(bytes, 0, n);
        return Base64.getEncoder().encodeToString(bytes);
    }

    /** As depth::Recorder: per power-of-two latency bucket, messages, sum and most depth. */
    static final class Depths {
        final long[][] b = new long[65][3];

        void record(long latencyNs, long depth) {
            long[] x = b[64 - Long.numberOfLeadingZeros(latencyNs)];
            x[0]++;
            x[1] += depth;
            x[2] = Math.max(x[2], depth);
        }

        String json(long capacity) {
            StringBuilder s = new StringBuilder("{\"capacity\":").append(capacity < 0 ? "null" : Long.toString(capacity));
            s.append(",\"buckets\":[");
            boolean first = true;
            for (int i = 0; i < b.length; i++) {
                if (b[i][0] == 0) continue;
                long from = i == 0 ? 0 : 1L << (i - 1);
                s.append(first ? "" : ",").append(String.format(Locale.ROOT,
                    "{\"from_ns\":%d,\"messages\":%d,\"depth_sum\":%d,\"depth_max\":%d}", from, b[i][0], b[i][1], b[i][2]));
                first = false;
            }
            return s.append("]}").toString();
        }
    }

    /** As journeys::Slowest: the KEPT slowest messages by latency from the due time. */
    static final class Slowest {
        final long[][] kept = new long[KEPT][]; // producer, seq, due, sent, taken
        int n;
        long floorNs;

        void offer(long latencyNs, BusLib.Msg m, long due, long taken) {
            if (latencyNs <= floorNs && n == KEPT) return;
            long[] j = {m.producer, m.seq, due, m.sentNs, taken};
            if (n < KEPT) {
                kept[n++] = j;
            } else {
                int min = 0;
                for (int i = 1; i < KEPT; i++) if (lat(kept[i]) < lat(kept[min])) min = i;
                kept[min] = j;
            }
            if (n == KEPT) {
                floorNs = Long.MAX_VALUE;
                for (long[] k : kept) floorNs = Math.min(floorNs, lat(k));
            }
        }

        static long lat(long[] j) { return Math.max(0, j[4] - j[2]); }

        String json() {
            List<long[]> l = new ArrayList<>();
            for (int i = 0; i < n; i++) l.add(kept[i]);
            l.sort((a, b) -> Long.compare(lat(b), lat(a)));
            List<String> out = new ArrayList<>();
            for (long[] j : l) {
                out.add(String.format(Locale.ROOT,
                    "{\"producer\":%d,\"seq\":%d,\"due_ns\":%d,\"sent_ns\":%d,\"taken_ns\":%d}", j[0], j[1], j[2], j[3], j[4]));
            }
            return "[" + String.join(",", out) + "]";
        }
    }

    // ---------------------------------------------------------------- workloads

    /** Ping-pong: `trips` round trips with one message in flight; the round trips, ns. */
    static Histogram pingPong(Config c, Supplier<BusLib.Msg> form) throws Exception {
        Line there = line(c, 1, form, "echo");
        Line back = line(c, 1, form, "pinger");
        Histogram h = hist();
        long[] next = {0};
        java.util.concurrent.CountDownLatch ready = new java.util.concurrent.CountDownLatch(2);
        back.start("pinger", c.cpu(0), ready, m -> {
            record(h, System.nanoTime() - m.sentNs);
            if (m.seq != next[0]) throw new IllegalStateException("round trip " + next[0] + " came back as seq " + m.seq);
            if (++next[0] == c.trips) {
                there.send(0, -1, 0);
                return false;
            }
            there.send(0, next[0], System.nanoTime());
            return true;
        });
        there.start("echo", c.cpu(1), ready, m -> {
            if (m.seq < 0) return false;
            back.send(0, m.seq, m.sentNs);
            return true;
        });
        ready.await();
        there.check();
        back.check();
        there.send(0, 0, System.nanoTime());
        long deadline = System.nanoTime() + GRACE_NS + c.trips * 100_000L;
        back.join(deadline);
        there.join(deadline);
        if (h.getTotalCount() != c.trips) {
            throw new IllegalStateException("recorded " + h.getTotalCount() + " of " + c.trips + " round trips");
        }
        return h;
    }

    /** One fixed-rate run's account. */
    static final class RateRun {
        Histogram corrected = hist();
        Histogram uncorrected = hist();
        long planned, sent, late, unsent;
        String verdict;
        Depths depths = new Depths();
        Slowest slowest = new Slowest();
        long capacity;
        double offered;

        String json() {
            return String.format(Locale.ROOT, "{\"offered\":%s,\"planned\":%d,\"sent\":%d,\"late\":%d,"
                + "\"unsent\":%d,\"depths\":%s,\"slowest\":%s}", Protocol.num(offered), planned, sent,
                late, unsent, depths.json(capacity), slowest.json());
        }
    }

    static long due(double rate, long k) {
        return (long) (k * 1e9 / rate);
    }

    /** As cell::wait_until: sleeps while far from `due`, then spins; the time it stopped. */
    static long waitUntil(long due) {
        long now = System.nanoTime();
        while (now < due) {
            if (due - now > 2 * SLEEP_MARGIN_NS) LockSupport.parkNanos(due - now - SLEEP_MARGIN_NS);
            else Thread.onSpinWait();
            now = System.nanoTime();
        }
        return now;
    }

    static RateRun fixedRate(Config c, double rate, long durationMs, Supplier<BusLib.Msg> form) throws Exception {
        final int P = c.producers;
        final long planned = Math.max(1, Math.round(durationMs / 1e3 * rate));
        final Line q = line(c, P, form, "consumer");
        final RateRun r = new RateRun();
        r.planned = planned;
        r.offered = rate;
        r.capacity = q.capacity();
        final BusLib.Checker checker = new BusLib.Checker(P);
        // Every thread pins itself and reports ready; then the schedule starts 1 ms on.
        final java.util.concurrent.CountDownLatch ready = new java.util.concurrent.CountDownLatch(P + 1);
        final java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
        final long[] at = new long[2]; // start, deadline: written before go opens
        final int[] ends = {0};
        q.start("consumer", c.cpu(0), ready, m -> {
            long start = at[0];
            if (m.seq < 0) return ++ends[0] < P;
            checker.observe(m);
            if (c.stallEvery > 0 && checker.received % c.stallEvery == 0) {
                Thread.sleep(c.stallNs / 1_000_000, (int) (c.stallNs % 1_000_000));
            }
            long now = System.nanoTime();
            long due = start + due(rate, m.seq * P + m.producer);
            long late = Math.max(0, now - due);
            record(r.corrected, late);
            record(r.uncorrected, Math.max(0, now - m.sentNs));
            if (late >= LATE_NS) r.depths.record(late, q.depth());
            r.slowest.offer(late, m, due, now);
            return true;
        });
        final long[] sent = new long[P];
        final long[] late = new long[P];
        Thread[] producers = new Thread[P];
        for (int i = 0; i < P; i++) {
            final int p = i;
            producers[i] = new Thread(() -> {
                try {
                    pin(c.cpu(p + 1));
                    ready.countDown();
                    go.await();
                    long start = at[0];
                    long deadline = at[1];
                    for (long seq = 0;; seq++) {
                        long k = seq * P + p;
                        if (k >= planned) break;
                        long due = start + due(rate, k);
                        long now = waitUntil(due + c.sendLateNs);
                        if (now > deadline) break;
                        if (now - due >= LATE_NS) late[p]++;
                        q.send(p, seq, now);
                        sent[p]++;
                    }
                    q.send(p, -1, 0);
                } catch (Throwable e) {
                    q.fail(e);
                }
            }, "producer-" + i);
            producers[i].start();
        }
        ready.await();
        q.check();
        final long start = System.nanoTime() + 1_000_000;
        final long deadline = start + 2 * TimeUnit.MILLISECONDS.toNanos(durationMs);
        at[0] = start;
        at[1] = deadline;
        go.countDown();
        long end = deadline + GRACE_NS;
        for (Thread t : producers) awaitThread(t, end, "a producer");
        q.join(end);
        long endNs = System.nanoTime();
        for (int p = 0; p < P; p++) {
            r.sent += sent[p];
            r.late += late[p];
            for (long k = sent[p] * P + p; k < planned; k += P) record(r.corrected, Math.max(0, endNs - (start + due(rate, k))));
        }
        r.unsent = planned - r.sent;
        r.verdict = checker.verdict(sent, BusLib.expectedChecksum(sent, form));
        return r;
    }

    /** Whether a fixed-rate run was sustained: every message sent, p99 within the bound. */
    static boolean sustained(RateRun r, long boundNs) {
        return r.unsent == 0 && r.corrected.getTotalCount() > 0 && r.corrected.getValueAtPercentile(99) <= boundNs;
    }

    // ---------------------------------------------------------------- runs and the outcome

    /**
     * One run: its JSON, written only when asked, after the last run, so that the code
     * that writes it is neither run nor compiled while a later run is measured (the JIT's
     * threads share this machine's few CPUs with the run's).
     */
    static Supplier<String> run(Config c, Supplier<BusLib.Msg> form, boolean warmup) throws Exception {
        String head = "{\"warmup\":" + warmup;
        switch (c.workload) {
            case "ping-pong": {
                Histogram h = pingPong(c, form);
                return () -> head + ",\"verdict\":\"ok\",\"hist\":" + Protocol.str(encode(h)) + "}";
            }
            case "fixed-rate": {
                RateRun r = fixedRate(c, c.rate, c.durationMs, form);
                return () -> head + ",\"verdict\":" + Protocol.str(r.verdict) + ",\"hist\":" + Protocol.str(encode(r.corrected))
                    + ",\"uncorrected\":" + Protocol.str(encode(r.uncorrected)) + ",\"rate\":" + r.json() + "}";
            }
            default: {
                List<RateRun> steps = new ArrayList<>();
                String verdict = "ok";
                double rate = c.rate;
                for (int s = 0; s < c.sweepSteps; s++) {
                    RateRun r = fixedRate(c, rate, c.durationMs, form);
                    steps.add(r);
                    if (!r.verdict.equals("ok")) {
                        verdict = "at " + Protocol.num(rate) + " msgs/s: " + r.verdict;
                        break;
                    }
                    if (!sustained(r, c.p99BoundNs)) break;
                    rate *= 2;
                }
                String v = verdict;
                return () -> {
                    List<String> out = new ArrayList<>();
                    for (RateRun r : steps) out.add("{\"hist\":" + Protocol.str(encode(r.corrected)) + ",\"rate\":" + r.json() + "}");
                    return head + ",\"verdict\":" + Protocol.str(v) + ",\"steps\":[" + String.join(",", out) + "]}";
                };
            }
        }
    }

    /** Messages a JIT warm-up pass moves at a fixed rate (a run at 1M msgs/s or more):
     *  past the thresholds of the JIT's last tier for the queue's and the run's code. */
    static final long JIT_MESSAGES = 200_000;
    /** Round trips a ping-pong JIT warm-up pass makes at least. */
    static final long JIT_TRIPS = 10_000;

    /**
     * One JIT warm-up pass, unrecorded: the workload's code paths run for at least
     * JIT_MESSAGES messages (JIT_TRIPS round trips), however few the cell's own runs move
     * (a sweep's first step at 50K msgs/s moves 2,000), so that compilation is not left to
     * the measured runs.
     */
    static void jit(Config c, Supplier<BusLib.Msg> form) throws Exception {
        if (c.workload.equals("ping-pong")) {
            Config j = copy(c);
            j.trips = Math.max(c.trips, JIT_TRIPS);
            pingPong(j, form);
        } else {
            double rate = Math.max(c.rate, 1_000_000);
            fixedRate(c, rate, (long) Math.ceil(JIT_MESSAGES / rate * 1e3), form).json();
        }
    }

    static Config copy(Config c) {
        Config j = new Config();
        j.impl = c.impl;
        j.workload = c.workload;
        j.wait = c.wait;
        j.ringSize = c.ringSize;
        j.trips = c.trips;
        j.rate = c.rate;
        j.producers = c.producers;
        j.durationMs = c.durationMs;
        j.pin = c.pin;
        return j;
    }

    /**
     * The JVM's own work so far, as its management beans count it: collections and their
     * milliseconds (every collector summed), and milliseconds its compiler threads spent
     * compiling. Read before and after each run; the difference is what the JVM did while
     * the run's threads were measured, on the CPUs they are pinned to.
     */
    static long[] runtimeNow() {
        long count = 0;
        long gcMs = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            count += Math.max(0, gc.getCollectionCount());
            gcMs += Math.max(0, gc.getCollectionTime());
        }
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        long jitMs = jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : -1;
        return new long[] {count, gcMs, jitMs, System.nanoTime()};
    }

    /** A run's share of the JVM's own work, from the counts before and after it. */
    static String runtimeJson(long[] before, long[] after) {
        String jit = before[2] < 0 ? "null" : Long.toString(after[2] - before[2]);
        return "{\"gc_count\":" + (after[0] - before[0]) + ",\"gc_ms\":" + (after[1] - before[1])
            + ",\"jit_ms\":" + jit + ",\"wall_ms\":" + Protocol.num((after[3] - before[3]) / 1e6) + "}";
    }

    public static void main(String[] args) {
        Protocol proto = Protocol.open();
        Config c;
        try {
            c = parse(args);
        } catch (BusLib.BadArgs e) {
            System.err.println("LatencyRun: " + e.getMessage());
            System.exit(2);
            return;
        }
        try {
            Supplier<BusLib.Msg> form = BusLib.form("inline", 16);
            for (int k = 0; k < c.jitWarmup; k++) jit(c, form);
            List<Supplier<String>> made = new ArrayList<>();
            // The JVM's own work per run, as numbers: formatted after the last run, as the
            // runs' JSON is.
            List<long[][]> spans = new ArrayList<>();
            for (int w = 0; w < c.warmup + c.runs; w++) {
                boolean warm = w < c.warmup;
                long[] before = runtimeNow();
                try {
                    made.add(run(c, form, warm));
                } catch (Exception e) {
                    // A run that failed is reported as such, and the runs already made are kept.
                    String failed = "{\"warmup\":" + warm + ",\"verdict\":" + Protocol.str("failed: " + e) + "}";
                    made.add(() -> failed);
                }
                spans.add(new long[][] {before, runtimeNow()});
                proto.heartbeat(w);
            }
            List<String> runs = new ArrayList<>();
            for (int i = 0; i < made.size(); i++) {
                String r = made.get(i).get();
                // Each run's object gains its runtime field before its closing brace.
                runs.add(r.substring(0, r.length() - 1) + ",\"runtime\":" + runtimeJson(spans.get(i)[0], spans.get(i)[1]) + "}");
            }
            String waitClass = c.impl.equals("disruptor") ? Bus.waitStrategy(c.wait).getClass().getSimpleName() : null;
            String[] dv = Bus.disruptorVersion();
            String hv = Bus.bundleVersion(Histogram.class);
            proto.done("{\"impl\":" + Protocol.str(c.impl) + ",\"wait\":" + Protocol.str(c.wait)
                + ",\"wait_strategy\":" + Protocol.str(waitClass)
                + ",\"disruptor_version\":" + Protocol.str(dv[0])
                + ",\"hdrhistogram_version\":" + Protocol.str(hv)
                + ",\"jit_warmup_passes\":" + c.jitWarmup
                + ",\"jvm\":" + Protocol.jvmJson() + ",\"runs\":[" + String.join(",", runs) + "]}");
            System.exit(0);
        } catch (Throwable t) {
            proto.exitFailed("LatencyRun", t);
        }
    }
}
