// The lab's child protocol, the JVM side: one JSON object per line on the real stdout,
// nothing else there (System.out is redirected to stderr, so stray prints cannot corrupt
// it). Shared by every JVM competitor: a new one is a Java class that opens a Protocol
// and a variant line in lab/src/measure/variants.rs. The lines are described in
// tools/jvm/README.md ("Protocol").

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

final class Protocol {
    private final PrintStream out;

    private Protocol(PrintStream out) { this.out = out; }

    /**
     * The JVM a program ran on, as every outcome's `jvm` object carries it: java and VM
     * versions, the VM's name, its flags, its collectors, its heap limit and CPUs.
     */
    static String jvmJson() {
        List<String> flags = new ArrayList<>();
        for (String f : ManagementFactory.getRuntimeMXBean().getInputArguments()) flags.add(str(f));
        List<String> gcs = new ArrayList<>();
        for (GarbageCollectorMXBean g : ManagementFactory.getGarbageCollectorMXBeans()) gcs.add(str(g.getName()));
        return "{\"version\":" + str(System.getProperty("java.version"))
            + ",\"vm_version\":" + str(System.getProperty("java.vm.version"))
            + ",\"vm_name\":" + str(System.getProperty("java.vm.name"))
            + ",\"flags\":[" + String.join(",", flags) + "],\"gc\":[" + String.join(",", gcs)
            + "],\"max_heap_bytes\":" + Runtime.getRuntime().maxMemory()
            + ",\"available_processors\":" + Runtime.getRuntime().availableProcessors() + "}";
    }

    /** Takes the real stdout for protocol lines and sends System.out to stderr. */
    static Protocol open() {
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        System.setOut(System.err);
        return new Protocol(out);
    }

    private synchronized void line(String s) {
        out.println(s);
        out.flush();
    }

    /** After each warm-up or measured run: i counts warm-up runs first, from 0. */
    void heartbeat(int run) {
        line("{\"type\":\"heartbeat\",\"run\":" + run + "}");
    }

    /**
     * Just before run `run` opens its start gate: `phase` is "warmup" or "measured" (run
     * counts as the heartbeat's does), `tNs` is System.nanoTime(), which on Linux is
     * CLOCK_MONOTONIC read as is (HotSpot's os::javaTimeNanos), the clock of every
     * process on the machine.
     */
    void runStart(int run, String phase, long tNs) {
        line("{\"type\":\"run_start\",\"run\":" + run + ",\"phase\":" + str(phase) + ",\"t_ns\":" + tNs + "}");
    }

    /** When the consumer has taken run `run`'s last end marker (same clock as runStart). */
    void runEnd(int run, String phase, long tNs) {
        line("{\"type\":\"run_end\",\"run\":" + run + ",\"phase\":" + str(phase) + ",\"t_ns\":" + tNs + "}");
    }

    /** The outcome, a JSON object, once, at the end. */
    void done(String outcomeJson) {
        line("{\"type\":\"done\",\"outcome\":" + outcomeJson + "}");
    }

    /** No outcome: why. */
    void failed(String error) {
        line("{\"type\":\"failed\",\"error\":" + str(error) + "}");
    }

    /**
     * A program's end after measuring started and failed: the error and its causes on one
     * line, on stderr with its stack and as the `failed` line; exit 3 (not bad input).
     */
    void exitFailed(String program, Throwable t) {
        String msg = t.toString();
        for (Throwable x = t.getCause(); x != null; x = x.getCause()) msg += "; caused by " + x;
        System.err.println(program + ": failed: " + msg);
        t.printStackTrace(System.err);
        failed(msg);
        System.exit(3);
    }

    // ---------------------------------------------------------------- JSON by hand

    static String str(String s) {
        if (s == null) return "null";
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            switch (ch) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                case '\t': b.append("\\t"); break;
                default:
                    if (ch < 0x20) b.append(String.format(Locale.ROOT, "\\u%04x", (int) ch));
                    else b.append(ch);
            }
        }
        return b.append('"').toString();
    }

    static String num(double d) {
        if (Double.isNaN(d) || Double.isInfinite(d)) return "null";
        return String.format(Locale.ROOT, "%.3f", d);
    }

    static String nsToMs(long ns) { return ns < 0 ? "null" : num(ns / 1e6); }
}
