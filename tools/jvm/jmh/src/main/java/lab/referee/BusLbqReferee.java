package lab.referee;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import lab.bus.PlainParts;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Control;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * JMH's form of the bus's plain `LinkedBlockingQueue` loop (Plain.java, `Bus --plain --impl
 * lbq`): an asymmetric group, P producer threads (`put`: the lab's message, the producer's
 * next sequence and stamp, `put`) and one consumer (`take`: every message checked as Plain
 * checks it), JMH's own threads in place of Plain's; run with `-tg P,1` (subgroups in the
 * order of their methods' names). The score of `take` is messages consumed per µs, which
 * the lab sets beside the plain loop's M msgs/s. The queue is unbounded, as jvm-lbq's is;
 * what is left in it when an iteration ends is drained through the check before the next.
 * The consumer polls with a timeout rather than `take`, so that it can leave when the
 * iteration ends with the queue empty: both wait on the queue's one `notEmpty` condition.
 */
@State(Scope.Group)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class BusLbqReferee extends BusReferee {
    LinkedBlockingQueue<Object> q;

    @Setup(Level.Trial)
    public void setup() {
        setupParts();
        q = new LinkedBlockingQueue<>();
    }

    /** What the queue still holds when an iteration ends goes through the check. */
    @TearDown(Level.Iteration)
    public void drain() {
        for (Object m; (m = q.poll()) != null; ) check.observe(m);
    }

    /** Every message sent was received once, in per-producer order, with its checksum. */
    @TearDown(Level.Trial)
    public void verify() {
        drain();
        String v = check.verdict(BusPins.sent(registered));
        if (!v.equals("ok")) throw new IllegalStateException("the bus referee's check: " + v);
    }

    /** A producer thread: its id (its index in the `put` subgroup), pinned at the start. */
    @State(Scope.Thread)
    public static class Producer {
        PlainParts.Sending sending;

        @Setup(Level.Trial)
        public void setup(BusLbqReferee g, ThreadParams t) {
            sending = BusPins.producer(g.parts, g.pin, g.registered, t.getSubgroupThreadIndex());
        }
    }

    /** The consumer thread, pinned at the start. */
    @State(Scope.Thread)
    public static class Consumer {
        @Setup(Level.Trial)
        public void setup(BusLbqReferee g) {
            BusPins.pin(g.parts, g.pin, 0);
        }
    }

    @Benchmark
    @Group("lbq")
    @GroupThreads(1)
    public void put(Producer p) throws InterruptedException {
        q.put(p.sending.fill(parts.newMessage()));
    }

    @Benchmark
    @Group("lbq")
    @GroupThreads(1)
    public void take(Consumer c, Control control) throws InterruptedException {
        Object m;
        while ((m = q.poll(1, TimeUnit.MILLISECONDS)) == null) {
            if (control.stopMeasurement) return;
        }
        check.observe(m);
    }
}
