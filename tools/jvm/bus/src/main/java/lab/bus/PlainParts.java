package lab.bus;

import com.lmax.disruptor.WaitStrategy;

/**
 * The parts of the bus's plain loops (Plain.java) that code outside the bus's own (unnamed)
 * package may use: the lab's message in the run's form, a producer's sending side (its id,
 * its next sequence number, a stamp every K-th message as Bus stamps), the consumer's check
 * of every message, and Bus's wait strategies by name. JMH's benchmarks of the plain loops
 * (tools/jvm/jmh's BusLbqReferee, BusDisruptorReferee) run their threads over these, so
 * that JMH times the per-message work the lab's `Bus --plain` child times. Messages are
 * `Object` here because their classes are package-private to the bus.
 */
public interface PlainParts {
    /** A new message of the run's form (for a queue's put or a ring's preallocated slot). */
    Object newMessage();

    /** Producer `id`'s sending side. */
    Sending sending(int id);

    /** A consumer's check over `producers` producers' messages. */
    Checking checking(int producers);

    /** Bus's Disruptor wait strategy by its `--wait` name. */
    WaitStrategy waitStrategy(String wait);

    /** Pins the calling thread to `cpu` as Bus pins its threads (taskset, then checked). */
    void pin(int cpu);

    /** One producer: the fields of its next message. */
    interface Sending {
        /** Sets `m` to this producer's next message (id, sequence, stamp); returns `m`. */
        Object fill(Object m);

        /** How many messages it has filled. */
        long sent();
    }

    /** The consumer's check: count, per-producer order, checksum. */
    interface Checking {
        /** Checks one message. */
        void observe(Object m);

        /** How many it has checked. */
        long received();

        /** `ok`, or what failed, given what each producer sent. */
        String verdict(long[] sent);
    }

    /**
     * The bus's parts for messages of form `message` (`inline` or `byte-array`) with
     * `payload` bytes, stamped every `sampleEvery`-th message of each producer (0: never).
     */
    static PlainParts of(String message, int payload, long sampleEvery) {
        try {
            Class<?> k = Class.forName("BusParts");
            java.lang.reflect.Constructor<?> c = k.getDeclaredConstructor(String.class, int.class, long.class);
            c.setAccessible(true);
            return (PlainParts) c.newInstance(message, payload, sampleEvery);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("the bus's BusParts is not on the class path: " + e, e);
        }
    }
}
