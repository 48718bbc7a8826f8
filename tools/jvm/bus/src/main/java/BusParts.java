// The bus's plain-loop parts behind lab.bus.PlainParts, for code outside this (unnamed)
// package: JMH's benchmarks of the plain loops. Each part is the one Plain.java uses.

import com.lmax.disruptor.WaitStrategy;

import java.util.function.Supplier;

final class BusParts implements lab.bus.PlainParts {
    private final Supplier<BusLib.Msg> form;
    private final long sampleEvery;

    BusParts(String message, int payload, long sampleEvery) {
        this.form = BusLib.form(message, payload);
        this.sampleEvery = sampleEvery;
    }

    @Override public Object newMessage() { return form.get(); }

    @Override public Sending sending(int id) { return new Producer(id, sampleEvery); }

    @Override public Checking checking(int producers) { return new Check(producers, form); }

    @Override public WaitStrategy waitStrategy(String wait) { return Bus.waitStrategy(wait); }

    @Override public void pin(int cpu) {
        try {
            Bus.pinCurrentThread(cpu);
        } catch (Exception e) {
            throw new IllegalStateException("cannot pin " + Thread.currentThread().getName() + ": " + e, e);
        }
    }

    /** Plain.producer's per-message work: the next sequence number, stamped as Bus stamps. */
    private static final class Producer implements Sending {
        private final int id;
        private final BusLib.Stamper stamps;
        private long seq;

        Producer(int id, long every) {
            this.id = id;
            this.stamps = new BusLib.Stamper(every);
        }

        @Override public Object fill(Object m) {
            ((BusLib.Msg) m).set(id, seq++, stamps.next());
            return m;
        }

        @Override public long sent() { return seq; }
    }

    /** Plain's consumer check (BusLib.Checker), its expected checksum computed at the end. */
    private static final class Check implements Checking {
        private final BusLib.Checker checker;
        private final Supplier<BusLib.Msg> form;

        Check(int producers, Supplier<BusLib.Msg> form) {
            this.checker = new BusLib.Checker(producers);
            this.form = form;
        }

        @Override public void observe(Object m) { checker.observe((BusLib.Msg) m); }

        @Override public long received() { return checker.received; }

        @Override public String verdict(long[] sent) {
            return checker.verdict(sent, BusLib.expectedChecksum(sent, form));
        }
    }
}
