// Seed 001's game-server message bus on the real JVM: java.util.concurrent.LinkedBlockingQueue
// (put/take) against the LMAX Disruptor 3.4 (ringBuffer.next/get/publish, one EventHandler),
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

public final class Bus {

    // ---------------------------------------------------------------- command line

    static final String USAGE =
        "usage: Bus --impl lbq|disruptor|jctools --producers P --messages N --warmup W --runs R"
        + " --ring-size S --wait blocking|lite-blocking|sleeping|yielding|busy-spin"
        + " --producer-type multi|single [--capacity C] [--payload 16|64|256]"
        + " [--message inline|byte-array] [--sample-every K]"
        + " [--jit-warmup K] [--fault drop-one] [--pin CPU,CPU,...] [--plain]";

    /** A bad command line: one line on stderr, exit 2. */
    static final class BadArgs extends Exception {
        private static final long serialVersionUID = 1L;
        BadArgs(String m) { super(m); }
    }

    static final class Config {
        String impl;
        int producers;
        long messages;
        int warmup;
        int runs;
        int ringSize;
        String wait;
        String producerType;
        int capacity = Integer.MAX_VALUE; // LinkedBlockingQueue's own "unbounded"
        boolean capacityGiven;
        int payload = 16;
        /** "inline": the payload as long fields of the message; "byte-array": a byte[] per message. */
        String message = "inline";
        /** Stamp every K-th message of each producer with its send time (0: none). */
        long sampleEvery;
        int jitWarmup = 2;
        String fault; // null or "drop-one"
        int[] pin; // null, or the CPU of the consumer, then of producer 0, 1, ...
        /** Plain.java's own loop instead of the measured runs (no checks but the count). */
        boolean plain;
    }

    static final List<String> FLAGS = List.of("--impl", "--producers", "--messages", "--warmup",
        "--runs", "--ring-size", "--wait", "--producer-type", "--capacity", "--payload",
        "--message", "--sample-every", "--jit-warmup", "--fault", "--pin", "--plain");
    /** The built-in queues, then the ones a JVM group supplies ({@link #PLUGS}). */
    static final List<String> IMPLS = List.of("lbq", "disruptor", "jctools");

    static final List<String> REQUIRED = List.of("--impl", "--producers", "--messages",
        "--warmup", "--runs", "--ring-size", "--wait", "--producer-type");

    /** A count: digits, optionally with a binary suffix Ki, Mi or Gi (8Mi = 8388608). */
    static long count(String flag, String v, long min, long max) throws BadArgs {
        String s = v.trim();
        long mult = 1;
        if (s.endsWith("Ki")) { mult = 1L << 10; s = s.substring(0, s.length() - 2); }
        else if (s.endsWith("Mi")) { mult = 1L << 20; s = s.substring(0, s.length() - 2); }
        else if (s.endsWith("Gi")) { mult = 1L << 30; s = s.substring(0, s.length() - 2); }
        long n;
        try {
            if (s.isEmpty() || !s.chars().allMatch(Character::isDigit)) throw new NumberFormatException();
            n = Math.multiplyExact(Long.parseLong(s), mult);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new BadArgs(flag + ": '" + v + "' is not a whole number (digits, optionally"
                + " with Ki, Mi or Gi); valid: " + min + ".." + max);
        }
        if (n < min || n > max) {
            throw new BadArgs(flag + ": " + v + " is out of range; valid: " + min + ".." + max);
        }
        return n;
    }

    static String choice(String flag, String v, List<String> valid) throws BadArgs {
        if (!valid.contains(v)) {
            throw new BadArgs(flag + ": '" + v + "' is not one of " + String.join("|", valid));
        }
        return v;
    }

    static Config parse(String[] args) throws BadArgs {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--plain")) {
                if (m.put(a, "") != null) throw new BadArgs(a + " given twice");
                continue;
            }
            String v = null;
            int eq = a.indexOf('=');
            if (a.startsWith("--") && eq > 0) { v = a.substring(eq + 1); a = a.substring(0, eq); }
            if (!FLAGS.contains(a)) {
                throw new BadArgs("unknown argument '" + args[i] + "'; valid flags: "
                    + String.join(" ", FLAGS));
            }
            if (v == null) {
                if (i + 1 >= args.length) throw new BadArgs(a + " needs a value; " + USAGE);
                v = args[++i];
            }
            if (m.put(a, v) != null) throw new BadArgs(a + " given twice");
        }
        List<String> missing = new ArrayList<>();
        for (String r : REQUIRED) if (!m.containsKey(r)) missing.add(r);
        if (!missing.isEmpty()) {
            throw new BadArgs("missing " + String.join(", ", missing) + "; " + USAGE);
        }
        Config c = new Config();
        c.impl = choice("--impl", m.get("--impl"), IMPLS);
        c.plain = m.containsKey("--plain");
        c.producers = (int) count("--producers", m.get("--producers"), 1, 1024);
        c.messages = count("--messages", m.get("--messages"), 1, 1L << 40);
        c.warmup = (int) count("--warmup", m.get("--warmup"), 0, 1000);
        c.runs = (int) count("--runs", m.get("--runs"), 1, 1000);
        long ring = count("--ring-size", m.get("--ring-size"), 1, 1L << 30);
        if (Long.bitCount(ring) != 1) {
            throw new BadArgs("--ring-size: " + m.get("--ring-size")
                + " is not a power of two; valid: 1, 2, 4, ..., 1Gi");
        }
        c.ringSize = (int) ring;
        c.wait = choice("--wait", m.get("--wait"),
            List.of("blocking", "lite-blocking", "sleeping", "yielding", "busy-spin"));
        c.producerType = choice("--producer-type", m.get("--producer-type"), List.of("multi", "single"));
        if (m.containsKey("--capacity")) {
            if (!c.impl.equals("lbq")) {
                throw new BadArgs("--capacity applies to --impl lbq only (the Disruptor's bound"
                    + " is --ring-size)");
            }
            c.capacity = (int) count("--capacity", m.get("--capacity"), 1, Integer.MAX_VALUE);
            c.capacityGiven = true;
        }
        if (m.containsKey("--payload")) {
            c.payload = Integer.parseInt(choice("--payload", m.get("--payload"), List.of("16", "64", "256")));
        }
        if (m.containsKey("--message")) {
            c.message = choice("--message", m.get("--message"), List.of("inline", "byte-array"));
        }
        if (m.containsKey("--sample-every")) {
            c.sampleEvery = count("--sample-every", m.get("--sample-every"), 0, 1L << 40);
        }
        if (m.containsKey("--jit-warmup")) {
            c.jitWarmup = (int) count("--jit-warmup", m.get("--jit-warmup"), 0, 100);
        }
        if (m.containsKey("--fault")) c.fault = choice("--fault", m.get("--fault"), List.of("drop-one"));
        if (m.containsKey("--pin")) {
            String[] cpus = m.get("--pin").split(",");
            if (cpus.length != c.producers + 1) {
                throw new BadArgs("--pin: " + cpus.length + " CPUs for " + (c.producers + 1)
                    + " threads; valid: one CPU per thread, the consumer's first");
            }
            c.pin = new int[cpus.length];
            for (int i = 0; i < cpus.length; i++) c.pin[i] = (int) count("--pin", cpus[i], 0, 4095);
        }
        if (c.impl.equals("disruptor") && c.producerType.equals("single") && c.producers > 1) {
            throw new BadArgs("--producer-type single needs --producers 1 (the single-producer"
                + " sequencer is unsafe with more); valid: multi, or --producers 1");
        }
        return c;
    }

    // ---------------------------------------------------------------- queues from JVM groups

    /**
     * A queue that a JVM group (tools/jvm/GROUP/, built against its own jars) supplies, so
     * that Bus runs it with everything else unchanged (messages, split, check, stamps,
     * per-thread accounting, the protocol): `--impl GROUP` loads the class PLUGS names, by
     * name, so the base classes compile and run without the group's jars.
     */
    interface Plug {
        /** A fresh, empty queue for one run (capacity `--ring-size`, wait `--wait`). */
        Channel open(Config c);
        /** What `--wait` runs in this library, for the outcome's `wait_strategy`. */
        String waitStrategy(String wait);
        /** The library and its version as its jar states them, for the outcome. */
        String library();
        /**
         * A fresh queue in the library's own plain loop (`--plain`): its API called directly
         * by code of its own, not through this plug's {@link Channel}, so that the
         * calibration measures the plug's adapter too.
         */
        PlainLoop plain(Config c);
    }

    /** One run's queue as its library's user writes the loop (see {@link Plug#plain}). */
    interface PlainLoop {
        /** A producer's send: a new message from `form`, set, handed over. */
        Sender sender(Supplier<Msg> form);
        /** The consumer's loop: takes `n` messages, each into `checker`. */
        void consume(Checker checker, long n) throws InterruptedException;
    }

    /** One run's queue: producers `send`, the one consumer `consume`s. */
    interface Channel {
        /** Hands `m` over, waiting (the run's wait) while the queue is full. */
        void send(Msg m);
        /** Takes every message into `sink` until `sink.more()` is false, waiting while empty. */
        void consume(Sink sink);
    }

    /** The consumer's side of a {@link Channel}. */
    interface Sink {
        void accept(Msg m);
        /** Whether to keep taking messages. */
        boolean more();
    }

    /** The group's queue of this process's `--impl`, or null for a built-in one. */
    static Plug PLUG;

    /** `--impl` name → the class of its group that implements {@link Plug}. */
    static final Map<String, String> PLUGS = Map.of("jctools", "JctoolsQueue");

    /** The plug-in of `impl`, loaded by name, or a bad command line naming the build. */
    static Plug plug(String impl) throws BadArgs {
        String cls = PLUGS.get(impl);
        try {
            return (Plug) Class.forName(cls).getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException | LinkageError e) {
            throw new BadArgs("--impl " + impl + ": class " + cls + " is not on the class path ("
                + e + "); build tools/jvm with Maven (`just jvm`) and run with the class path of"
                + " its module " + impl + " (target/jvm/" + impl + "/classes and classpath.txt)");
        }
    }

    // ---------------------------------------------------------------- messages and checks

    static final VarHandle LE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    /** SplitMix64's finaliser, bit for bit the Rust harness's handoff::mix64. */
    static long mix64(long z) {
        z += 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /**
     * A message: who sent it, its number, its send time when sampled, and its payload. The
     * payload is the little-endian words handoff::Message::new derives from (producer, seq)
     * (w0 = mix64((producer << 40) ^ seq), each next word mix64 of the one before), and
     * digest() is handoff::Message::digest over the same words, so a JVM run and a Rust run
     * of the same N and P expect the same checksum whatever the form. The forms:
     * Inline16/64/256 hold the words as long fields of the message (one object a message,
     * as the Rust message carries its payload inline); MsgBytes holds them in a byte[] of
     * its own (two objects a message, as Java code often does). One form runs per process,
     * so the JIT sees one subclass at every call site.
     */
    abstract static class Msg {
        int producer;
        long seq; // -1: this producer's end marker
        long sentNs; // System.nanoTime() at send for a sampled message, else 0
        abstract void fill(long h);
        abstract long digest(long h);

        /** Makes this message (producer, seq)'s, in place. */
        final void set(int producer, long seq, long sentNs) {
            this.producer = producer;
            this.seq = seq;
            this.sentNs = sentNs;
            fill(mix64(((long) producer << 40) ^ seq));
        }

        /** This message's contribution to the checksum (handoff::Message::digest). */
        final long digest() {
            return digest(mix64(((long) producer << 40) ^ seq));
        }
    }

    /** The payload in a byte[] of its own (`--message byte-array`). */
    static final class MsgBytes extends Msg {
        final byte[] payload;
        MsgBytes(int payloadBytes) { payload = new byte[payloadBytes]; }
        @Override void fill(long h) {
            for (int off = 0; off < payload.length; off += 8) {
                LE.set(payload, off, h);
                h = mix64(h);
            }
        }
        @Override long digest(long h) {
            for (int off = 0; off < payload.length; off += 8) {
                h = mix64(h ^ (long) LE.get(payload, off));
            }
            return h;
        }
    }

    /** 16 payload bytes as 2 longs in the message itself. */
    static final class Inline16 extends Msg {
        long w0, w1;
        @Override void fill(long h) {
            w0 = h;
            w1 = h = mix64(h);
        }
        @Override long digest(long h) {
            h = mix64(h ^ w0);
            h = mix64(h ^ w1);
            return h;
        }
    }

    /** 64 payload bytes as 8 longs in the message itself. */
    static final class Inline64 extends Msg {
        long w0, w1, w2, w3, w4, w5, w6, w7;
        @Override void fill(long h) {
            w0 = h;
            w1 = h = mix64(h);
            w2 = h = mix64(h);
            w3 = h = mix64(h);
            w4 = h = mix64(h);
            w5 = h = mix64(h);
            w6 = h = mix64(h);
            w7 = h = mix64(h);
        }
        @Override long digest(long h) {
            h = mix64(h ^ w0);
            h = mix64(h ^ w1);
            h = mix64(h ^ w2);
            h = mix64(h ^ w3);
            h = mix64(h ^ w4);
            h = mix64(h ^ w5);
            h = mix64(h ^ w6);
            h = mix64(h ^ w7);
            return h;
        }
    }

    /** 256 payload bytes as 32 longs in the message itself. */
    static final class Inline256 extends Msg {
        long w0, w1, w2, w3, w4, w5, w6, w7, w8, w9, w10, w11, w12, w13, w14, w15, w16, w17, w18, w19, w20, w21, w22, w23, w24, w25, w26, w27, w28, w29, w30, w31;
        @Override void fill(long h) {
            w0 = h;
            w1 = h = mix64(h);
            w2 = h = mix64(h);
            w3 = h = mix64(h);
            w4 = h = mix64(h);
            w5 = h = mix64(h);
            w6 = h = mix64(h);
            w7 = h = mix64(h);
            w8 = h = mix64(h);
            w9 = h = mix64(h);
            w10 = h = mix64(h);
            w11 = h = mix64(h);
            w12 = h = mix64(h);
            w13 = h = mix64(h);
            w14 = h = mix64(h);
            w15 = h = mix64(h);
            w16 = h = mix64(h);
            w17 = h = mix64(h);
            w18 = h = mix64(h);
            w19 = h = mix64(h);
            w20 = h = mix64(h);
            w21 = h = mix64(h);
            w22 = h = mix64(h);
            w23 = h = mix64(h);
            w24 = h = mix64(h);
            w25 = h = mix64(h);
            w26 = h = mix64(h);
            w27 = h = mix64(h);
            w28 = h = mix64(h);
            w29 = h = mix64(h);
            w30 = h = mix64(h);
            w31 = h = mix64(h);
        }
        @Override long digest(long h) {
            h = mix64(h ^ w0);
            h = mix64(h ^ w1);
            h = mix64(h ^ w2);
            h = mix64(h ^ w3);
            h = mix64(h ^ w4);
            h = mix64(h ^ w5);
            h = mix64(h ^ w6);
            h = mix64(h ^ w7);
            h = mix64(h ^ w8);
            h = mix64(h ^ w9);
            h = mix64(h ^ w10);
            h = mix64(h ^ w11);
            h = mix64(h ^ w12);
            h = mix64(h ^ w13);
            h = mix64(h ^ w14);
            h = mix64(h ^ w15);
            h = mix64(h ^ w16);
            h = mix64(h ^ w17);
            h = mix64(h ^ w18);
            h = mix64(h ^ w19);
            h = mix64(h ^ w20);
            h = mix64(h ^ w21);
            h = mix64(h ^ w22);
            h = mix64(h ^ w23);
            h = mix64(h ^ w24);
            h = mix64(h ^ w25);
            h = mix64(h ^ w26);
            h = mix64(h ^ w27);
            h = mix64(h ^ w28);
            h = mix64(h ^ w29);
            h = mix64(h ^ w30);
            h = mix64(h ^ w31);
            return h;
        }
    }

    /** A new empty message of the configured form and payload size. */
    static Supplier<Msg> form(String message, int payload) {
        if (message.equals("byte-array")) return () -> new MsgBytes(payload);
        switch (payload) {
            case 16: return Inline16::new;
            case 64: return Inline64::new;
            case 256: return Inline256::new;
            default: throw new IllegalArgumentException("no inline message of " + payload + " bytes");
        }
    }

    /** What the producers are asked to send: the first N % P producers send one more. */
    static long[] spread(long n, int p) {
        long[] s = new long[p];
        for (int i = 0; i < p; i++) s[i] = n / p + (i < n % p ? 1 : 0);
        return s;
    }

    /** The sum of the digests of everything the producers are asked to send. */
    static long expectedChecksum(long[] perProducer, Supplier<Msg> form) {
        Msg m = form.get();
        long sum = 0;
        for (int p = 0; p < perProducer.length; p++) {
            for (long s = 0; s < perProducer[p]; s++) {
                m.set(p, s, 0);
                sum += m.digest();
            }
        }
        return sum;
    }

    /** The consumer's check, like handoff::Checker: count, per-producer order, checksum. */
    static final class Checker {
        final long[] next;
        long received, outOfOrder, unknown, checksum;
        Checker(int producers) { next = new long[producers]; }

        void observe(Msg m) {
            int producer = m.producer;
            long seq = m.seq;
            received++;
            checksum += m.digest();
            if (producer >= 0 && producer < next.length) {
                if (seq != next[producer]) outOfOrder++;
                next[producer] = seq + 1;
            } else {
                unknown++;
            }
        }

        /** "ok", or what failed, worded as handoff::Verdict::describe words it. */
        String verdict(long[] sent, long expected) {
            long total = 0;
            boolean tails = true;
            for (int i = 0; i < sent.length; i++) { total += sent[i]; tails &= next[i] == sent[i]; }
            long ooo = outOfOrder + (!tails && received == total ? 1 : 0);
            List<String> parts = new ArrayList<>();
            if (received != total) parts.add("received " + received + " of " + total + " sent");
            if (ooo > 0) parts.add(ooo + " out of per-producer order");
            if (unknown > 0) parts.add(unknown + " from unknown producers");
            if (checksum != expected) parts.add("checksum mismatch");
            return parts.isEmpty() ? "ok" : String.join(", ", parts);
        }
    }

    /**
     * The consumer's latency samples of one run, ns (receipt's nanoTime minus the stamp,
     * at least 1, as the Rust harness records them), in an array sized before the run for
     * every stamped message, so recording allocates nothing.
     */
    static final class Latencies {
        final long[] v;
        int n;
        Latencies(int capacity) { v = new long[capacity]; }
        void record(long ns) {
            if (n < v.length) v[n++] = Math.max(1, ns);
        }
    }

    /** Stamped messages of a run: every K-th of each producer from its first (seq 0). */
    static int samples(long[] per, long every) {
        if (every == 0) return 0;
        long s = 0;
        for (long c : per) s += (c + every - 1) / every;
        return (int) Math.min(s, Integer.MAX_VALUE - 8);
    }

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
     * A producer's stamps: `System.nanoTime()` for every K-th message from seq 0, 0 for the
     * others (and for all when K is 0), as the Rust harness stamps them (a countdown).
     */
    static final class Stamper {
        private final long every;
        private long countdown;
        Stamper(long every) { this.every = every; }

        long next() {
            if (every <= 0) return 0;
            long sent = 0;
            if (countdown == 0) {
                countdown = every;
                sent = System.nanoTime();
            }
            countdown--;
            return sent;
        }
    }

    /** One producer's loop: every message through `send`, then its end marker. */
    interface Sender {
        void send(int producer, long seq, long sentNs) throws Exception;
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
            String msg = t.toString();
            for (Throwable x = t.getCause(); x != null; x = x.getCause()) msg += "; caused by " + x;
            System.err.println("Bus: failed: " + msg);
            t.printStackTrace(System.err);
            proto.failed(msg);
            System.exit(3);
        }
    }
}
