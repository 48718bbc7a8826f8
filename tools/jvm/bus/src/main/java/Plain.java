// Bus --plain: each JVM original in the plainest loop its own API allows, as a user of the
// library would write it, to calibrate Bus's measured runs against (jvm-lbq against
// jvm-lbq/own-loop). What it keeps is what the Rust peers' own loops keep: the same message
// as Bus (BusLib.form: the lab's message, inline or byte-array, payload filled), stamped every
// K-th as Bus stamps it, and the same check of every message (BusLib.Checker: count,
// per-producer order, checksum), the same split over producers, a new queue or Disruptor
// per run, the clock from the start gate to the consumer's last message. What it leaves
// out is Bus's harness: end markers, latency recording, per-thread accounting, run marks
// and protocol lines while it runs.

import com.lmax.disruptor.EventHandler;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.dsl.Disruptor;
import com.lmax.disruptor.dsl.ProducerType;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.function.Supplier;

final class Plain {
    private Plain() { }

    /** JIT passes, W warm-up runs, R runs; one done line: {"plain":true,"runs":[{ms,...}]}. */
    static void main(BusLib.Config c, Protocol proto) {
        try {
            long jitN = Math.min(c.messages, 1_000_000L);
            for (int k = 0; k < c.jitWarmup; k++) run(c, jitN);
            List<String> runs = new ArrayList<>();
            for (int w = 0; w < c.warmup + c.runs; w++) {
                double ms = run(c, c.messages);
                System.err.printf(Locale.ROOT, "plain %s %d: %.1f ms, %.2f M msgs/s%n",
                    w < c.warmup ? "warm-up" : "run", w < c.warmup ? w : w - c.warmup, ms, c.messages / ms / 1e3);
                proto.heartbeat(w);
                if (w >= c.warmup) {
                    runs.add("{\"ms\":" + Protocol.num(ms) + ",\"msgs_per_sec\":"
                        + Protocol.num(c.messages / (ms / 1e3)) + "}");
                }
            }
            proto.done("{\"plain\":true,\"impl\":" + Protocol.str(c.impl) + ",\"producers\":"
                + c.producers + ",\"messages\":" + c.messages + ",\"message\":"
                + Protocol.str(c.message) + ",\"wait\":" + Protocol.str(c.wait)
                + ",\"sample_every\":" + c.sampleEvery + ",\"runs\":[" + String.join(",", runs) + "]}");
            System.exit(0);
        } catch (Throwable t) {
            System.err.println("Bus --plain: failed: " + t);
            t.printStackTrace(System.err);
            proto.failed(t.toString());
            System.exit(3);
        }
    }

    /**
     * Pins the calling thread as Bus pins its own (`--pin`: the consumer's CPU, then each
     * producer's), so the plain loop runs in the lab cell's placement; a failure to pin
     * ends the run loudly.
     */
    static void pin(BusLib.Config c, int slot) {
        if (c.pin == null) return;
        try {
            Bus.pinCurrentThread(c.pin[slot]);
        } catch (Exception e) {
            throw new IllegalStateException("cannot pin " + Thread.currentThread().getName() + ": " + e, e);
        }
    }

    /**
     * Producer `id`'s plain loop: `count` messages through `send`, each K-th stamped with
     * nanoTime as Bus stamps them; no end marker (the consumer counts to N).
     */
    static Runnable producer(BusLib.Config c, int id, long count, BusLib.Sender send,
                             CountDownLatch ready, CountDownLatch gate) {
        return () -> {
            try {
                pin(c, id + 1);
                ready.countDown();
                gate.await();
                final BusLib.Stamper stamps = new BusLib.Stamper(c.sampleEvery);
                for (long seq = 0; seq < count; seq++) send.send(id, seq, stamps.next());
            } catch (Exception e) {
                throw new IllegalStateException("producer-" + id + ": " + e, e);
            }
        };
    }

    /** A consumer's loop over one run's messages. */
    interface Loop {
        void run() throws InterruptedException;
    }

    /**
     * Starts the consumer thread: pinned, at the gate with the producers, then `loop`, then
     * the end time and `done`.
     */
    static void consumer(BusLib.Config c, CountDownLatch ready, CountDownLatch gate,
                         CountDownLatch done, long[] end, Loop loop) {
        new Thread(() -> {
            try {
                pin(c, 0);
                ready.countDown();
                gate.await();
                loop.run();
                end[0] = System.nanoTime();
                done.countDown();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "consumer").start();
    }

    /** One run, ms; throws when the check of the consumer's messages fails. */
    static double run(BusLib.Config c, long n) throws Exception {
        final long[] per = BusLib.spread(n, c.producers);
        final long expected = Bus.expected(c, n, per); // before the clock starts
        final Supplier<BusLib.Msg> form = BusLib.form(c.message, c.payload);
        final BusLib.Checker checker = new BusLib.Checker(c.producers);
        final CountDownLatch ready = new CountDownLatch(c.producers + 1);
        final CountDownLatch gate = new CountDownLatch(1);
        final CountDownLatch done = new CountDownLatch(1);
        final long[] end = new long[1];
        final BusLib.Sender send;
        Runnable stop = null;
        if (c.impl.equals("lbq")) {
            final LinkedBlockingQueue<BusLib.Msg> q = new LinkedBlockingQueue<>(c.capacity);
            send = (id, seq, sent) -> {
                BusLib.Msg m = form.get();
                m.set(id, seq, sent);
                q.put(m);
            };
            consumer(c, ready, gate, done, end, () -> {
                for (long k = 0; k < n; k++) checker.observe(q.take());
            });
        } else if (c.impl.equals("disruptor")) {
            final Disruptor<BusLib.Msg> d = new Disruptor<>(form::get, c.ringSize, (ThreadFactory) r -> new Thread(() -> {
                    pin(c, 0);
                    r.run();
                }, "consumer"),
                c.producerType.equals("single") ? ProducerType.SINGLE : ProducerType.MULTI,
                Bus.waitStrategy(c.wait));
            d.handleEventsWith(new EventHandler<BusLib.Msg>() {
                long k;
                @Override public void onEvent(BusLib.Msg e, long sequence, boolean endOfBatch) {
                    checker.observe(e);
                    if (++k == n) {
                        end[0] = System.nanoTime();
                        done.countDown();
                    }
                }
            });
            final RingBuffer<BusLib.Msg> rb = d.start();
            ready.countDown(); // the processor thread starts with the Disruptor
            send = (id, seq, sent) -> {
                long slot = rb.next();
                try {
                    rb.get(slot).set(id, seq, sent);
                } finally {
                    rb.publish(slot);
                }
            };
            stop = d::shutdown;
        } else if (BusLib.PLUG != null) {
            // A JVM module's queue in its own plain loop, the library's API called by that
            // module's own code (not through the plug's Channel, which is what Bus runs).
            final BusLib.PlainLoop q = BusLib.PLUG.plain(c);
            send = q.sender(form);
            consumer(c, ready, gate, done, end, () -> q.consume(checker, n));
        } else {
            throw new IllegalStateException("no plain loop for --impl " + c.impl);
        }
        Thread[] producers = new Thread[c.producers];
        for (int i = 0; i < c.producers; i++) {
            producers[i] = new Thread(producer(c, i, per[i], send, ready, gate), "producer-" + i);
            producers[i].start();
        }
        ready.await();
        long t0 = System.nanoTime();
        gate.countDown();
        done.await();
        for (Thread t : producers) t.join();
        if (stop != null) stop.run();
        String verdict = checker.verdict(per, expected);
        if (!verdict.equals("ok")) throw new IllegalStateException("the plain loop's check: " + verdict);
        return (end[0] - t0) / 1e6;
    }
}
