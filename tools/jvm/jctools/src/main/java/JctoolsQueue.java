// jvm-jctools: JCTools' MpscArrayQueue (JCTools 4, the version tools/jvm/pom.xml pins), the JVM's bounded
// multi-producer single-consumer array queue, as a queue Bus runs (`--impl jctools`, class
// loaded by name: see BusLib.Plug). Capacity `--ring-size`; producers retry `offer` while the
// queue is full and the consumer drains with the queue's own `drain(consumer, wait, exit)`
// (a loop of `relaxedPoll`), both idling with the wait that matches `--wait` (below and
// tools/jvm/README.md).

import org.jctools.queues.MessagePassingQueue;
import org.jctools.queues.MpscArrayQueue;

import java.io.InputStream;
import java.util.Properties;
import java.util.concurrent.locks.LockSupport;

final class JctoolsQueue implements BusLib.Plug {

    @Override public BusLib.Channel open(BusLib.Config c) {
        return new Queue(new MpscArrayQueue<>(c.ringSize), idler(c.wait));
    }

    /**
     * The Disruptor 3.4 wait strategy of the same name, step for step, as a JCTools
     * `WaitStrategy` (`idle(n)` is called with the number of empty tries so far):
     * busy-spin: `Thread.onSpinWait` (BusySpinWaitStrategy); yielding: 100 empty spins, then
     * `Thread.yield` (YieldingWaitStrategy); sleeping: 100 spins, 100 yields, then
     * `LockSupport.parkNanos(100)` (SleepingWaitStrategy's defaults). blocking and
     * lite-blocking: the queue has no condition to sleep on and no signal on offer, so after
     * 100 empty spins the thread parks, `LockSupport.parkNanos(1)` per empty try (the
     * kernel's timer slack makes that some 50 µs). The spins come first as in the Rust
     * ring's blocking wait, which also spins before it sleeps: parking on the first empty try
     * put a park of some 50 µs on nearly every message of a flowing queue, and that pairing,
     * not the queue, set the row.
     */
    static MessagePassingQueue.WaitStrategy idler(String wait) {
        switch (wait) {
            case "busy-spin":
                return n -> {
                    Thread.onSpinWait();
                    return n + 1;
                };
            case "yielding":
                return n -> {
                    if (n < 100) return n + 1;
                    Thread.yield();
                    return n;
                };
            case "sleeping":
                return n -> {
                    if (n < 100) return n + 1;
                    if (n < 200) {
                        Thread.yield();
                        return n + 1;
                    }
                    LockSupport.parkNanos(100);
                    return n;
                };
            default:
                return n -> {
                    if (n < 100) {
                        Thread.onSpinWait();
                        return n + 1;
                    }
                    LockSupport.parkNanos(1);
                    return n;
                };
        }
    }

    @Override public String waitStrategy(String wait) {
        switch (wait) {
            case "busy-spin": return "MpscArrayQueue, Thread.onSpinWait";
            case "yielding": return "MpscArrayQueue, 100 spins then Thread.yield";
            case "sleeping": return "MpscArrayQueue, 100 spins, 100 yields, then parkNanos(100)";
            default: return "MpscArrayQueue, 100 spins then parkNanos(1)";
        }
    }

    @Override public String library() {
        // A jar without Implementation-Version still carries Maven's pom.properties.
        try (InputStream in = MpscArrayQueue.class.getResourceAsStream(
                "/META-INF/maven/org.jctools/jctools-core/pom.properties")) {
            if (in != null) {
                Properties props = new Properties();
                props.load(in);
                return "jctools-core " + props.getProperty("version", "?");
            }
        } catch (Exception ignored) {
            // fall through
        }
        Package p = MpscArrayQueue.class.getPackage();
        return "jctools-core " + (p != null ? p.getImplementationVersion() : null);
    }

    /**
     * The own loop (`--plain`, the calibration jvm-jctools/own-loop): MpscArrayQueue as its
     * user writes the loop, `offer` retried and `drain(consumer, wait, exit)` with JCTools'
     * WaitStrategy of the same `--wait`, in code of its own rather than {@link Queue}'s, so
     * the calibration measures the adapter Bus runs.
     */
    @Override public BusLib.PlainLoop plain(BusLib.Config c) {
        final MpscArrayQueue<BusLib.Msg> q = new MpscArrayQueue<>(c.ringSize);
        final MessagePassingQueue.WaitStrategy idle = idler(c.wait);
        return new BusLib.PlainLoop() {
            @Override public BusLib.Sender sender(java.util.function.Supplier<BusLib.Msg> form) {
                return (id, seq, sent) -> {
                    BusLib.Msg m = form.get();
                    m.set(id, seq, sent);
                    for (int n = 0; !q.offer(m); ) n = idle.idle(n);
                };
            }

            @Override public void consume(BusLib.Checker checker, long n) {
                final long[] k = new long[1];
                q.drain(m -> {
                    checker.observe(m);
                    k[0]++;
                }, idle, () -> k[0] < n);
            }
        };
    }

    /** One run's queue. */
    static final class Queue implements BusLib.Channel {
        final MpscArrayQueue<BusLib.Msg> q;
        final MessagePassingQueue.WaitStrategy idle;
        Queue(MpscArrayQueue<BusLib.Msg> q, MessagePassingQueue.WaitStrategy idle) {
            this.q = q;
            this.idle = idle;
        }

        @Override public void send(BusLib.Msg m) {
            int n = 0;
            while (!q.offer(m)) n = idle.idle(n);
        }

        @Override public void consume(BusLib.Sink sink) {
            q.drain(sink::accept, idle, sink::more);
        }
    }
}
