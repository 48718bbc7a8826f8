// The shared library of the JVM originals (seed 001's bus and its plain loops, and the
// queues JVM modules plug in): the command line and its Config, the queue seam (Plug,
// Channel, Sink, PlainLoop, Sender), the messages with their payload and digest, the
// per-producer split, the checksum, the consumer's Checker, latency samples and stamps.
// Bus (the measured harness), Plain (the originals' own loops) and the modules' plugs
// (JctoolsQueue) are programs on it.

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

class BusLib {
    BusLib() { }

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

}
