package lab.referee;

import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.dsl.Disruptor;
import com.lmax.disruptor.dsl.ProducerType;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import lab.bus.PlainParts;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * JMH's form of the bus's plain Disruptor loop (Plain.java, `Bus --plain --impl
 * disruptor`): P producer threads of JMH's own (`publish`: claim a slot, write the lab's
 * message in place with the producer's next sequence and stamp, publish) and the
 * Disruptor's own consumer thread, whose handler checks every message as Plain's does;
 * run with `-tg P`. The ring is bounded, so producers publish at the rate the consumer
 * takes: `publish`'s score is messages per µs, set beside the plain loop's M msgs/s.
 */
@State(Scope.Group)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class BusDisruptorReferee extends BusReferee {
    /** Ring slots, as Bus's `--ring-size`. */
    @Param({"65536"})
    public int ringSize;
    /** The wait strategy, as Bus's `--wait`. */
    @Param({"blocking"})
    public String waitStrategy;
    Disruptor<Object> disruptor;
    RingBuffer<Object> ring;
    /** Messages the handler has checked, published at each batch's end. */
    final AtomicLong handled = new AtomicLong();

    @Setup(Level.Trial)
    public void setup() {
        setupParts();
        disruptor = new Disruptor<>(parts::newMessage, ringSize, r -> new Thread(() -> {
                BusPins.pin(parts, pin, 0);
                r.run();
            }, "consumer"),
            producers == 1 ? ProducerType.SINGLE : ProducerType.MULTI,
            parts.waitStrategy(waitStrategy));
        disruptor.handleEventsWith((m, sequence, endOfBatch) -> {
            check.observe(m);
            if (endOfBatch) handled.setRelease(check.received());
        });
        ring = disruptor.start();
    }

    /** Once the consumer has caught up: every message checked, then the consumer halted. */
    @TearDown(Level.Trial)
    public void verify() throws InterruptedException {
        long[] sent = BusPins.sent(registered);
        long total = 0;
        for (long s : sent) total += s;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (handled.getAcquire() < total && System.nanoTime() < deadline) Thread.sleep(1);
        disruptor.halt();
        String v = check.verdict(sent);
        if (!v.equals("ok")) throw new IllegalStateException("the bus referee's check: " + v);
    }

    /** A producer thread: its id (its index in the group), pinned at the start. */
    @State(Scope.Thread)
    public static class Producer {
        PlainParts.Sending sending;

        @Setup(Level.Trial)
        public void setup(BusDisruptorReferee g, ThreadParams t) {
            sending = BusPins.producer(g.parts, g.pin, g.registered, t.getSubgroupThreadIndex());
        }
    }

    @Benchmark
    @Group("disruptor")
    @GroupThreads(1)
    public void publish(Producer p) {
        long slot = ring.next();
        try {
            p.sending.fill(ring.get(slot));
        } finally {
            ring.publish(slot);
        }
    }
}
