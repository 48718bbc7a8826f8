// Seed 000's backpressure run, the part every library shares (RxBackpressure on RxJava 3,
// ReactorBackpressure on Reactor): a run's counts, its own check and its JSON.
// tools/jvm/rx/src/main/java/RxBackpressure.java explains the cases.

import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

final class BackpressureRun {
    private BackpressureRun() { }

    /** One run's counts. Written by the source's and the subscriber's threads, read after
     *  the terminal signal (the latch orders them). */
    static final class Counts {
        long emitted;
        long lastEmitted = -1;
        boolean sourceInOrder = true;
        final AtomicLong dropped = new AtomicLong();
        /** MissingBackpressureExceptions the buffer signalled (on the source's thread). */
        long overflowErrors;
        long overflowsAtOnce = -1;
        long delivered;
        long lastDelivered = -1;
        boolean inOrder = true;
        String terminal = "none";
        double elapsedMs = -1;
        /** When the source emitted its first element: the pacing's origin (set there, not
         *  before subscribing, so that the time a cold JVM takes to load RxJava's classes is
         *  not taken for a producer that fell behind its schedule; docs/design-figures.md). */
        long t0 = -1;

        long overflows() { return dropped.get() + overflowErrors; }
    }

    /** The run's own check: every element that left the source either arrived or
     *  overflowed, in order, and the stream ended as its policy says. */
    static String check(Seed000.Config cfg, Counts c, String overflowError) {
        if (c.terminal.equals("none")) return "no terminal signal in time";
        if (!c.sourceInOrder) return "the source's elements were not 0, 1, 2, ... (element "
            + c.lastEmitted + " was its number " + (c.emitted - 1) + ")";
        if (!c.inOrder) return "elements arrived out of order";
        boolean error = cfg.policy.equals("error") && !cfg.bpCase.equals("sync-request-1");
        if (error) {
            if (!c.terminal.startsWith("error: " + overflowError)) {
                return "ended " + c.terminal + ", not with " + overflowError + "";
            }
            return "ok";
        }
        if (!c.terminal.equals("complete")) return "ended " + c.terminal;
        if (c.delivered + c.overflows() != c.emitted) {
            return "delivered " + c.delivered + " + overflowed " + c.overflows() + " != emitted " + c.emitted;
        }
        return "ok";
    }

    /** The run's fields for the outcome's run object. */
    static String json(Seed000.Config cfg, Counts c, String overflowError) {
        return String.format(Locale.ROOT,
            ",\"bp\":{\"emitted\":%d,\"last_emitted\":%d,\"delivered\":%d,\"overflows\":%d,"
                + "\"overflows_at_once\":%s,\"in_order\":%b,\"terminal\":%s,\"elapsed_ms\":%s,\"check\":%s}",
            c.emitted, c.lastEmitted, c.delivered, c.overflows(),
            c.overflowsAtOnce < 0 ? "null" : Long.toString(c.overflowsAtOnce), c.inOrder,
            Protocol.str(c.terminal), c.elapsedMs < 0 ? "null" : Protocol.num(c.elapsedMs),
            Protocol.str(check(cfg, c, overflowError)));
    }
}
