package lab.referee;

import lab.bus.PlainParts;

/** What the bus referees' threads share: pinning as Bus pins, and who sent how many. */
final class BusPins {
    private BusPins() { }

    /**
     * Pins the calling thread to slot `slot` of `pin` (CPUs separated by `:`, consumer first,
     * as Bus's `--pin`; not commas, which JMH's `-p` reads as a list of values); an empty
     * list pins nothing.
     */
    static void pin(PlainParts parts, String pin, int slot) {
        if (pin.isEmpty()) return;
        String[] cpus = pin.split(":");
        if (slot >= cpus.length) {
            throw new IllegalArgumentException("pin " + pin + " has no CPU for thread " + slot);
        }
        parts.pin(Integer.parseInt(cpus[slot].trim()));
    }

    /**
     * Records producer `id`'s sending side; an id beyond the `producers` parameter means
     * `-tg` and `-p producers` disagree, and the check could not count.
     */
    static void register(PlainParts.Sending[] registered, int id, PlainParts.Sending s) {
        if (id >= registered.length) {
            throw new IllegalStateException("producer thread " + id + " beyond -p producers="
                + registered.length + ": -tg and the producers parameter must agree");
        }
        synchronized (registered) {
            registered[id] = s;
        }
    }

    /**
     * Producer `id`'s start on its own thread: pinned to its slot (after the consumer's),
     * its sending side made and registered for the check.
     */
    static PlainParts.Sending producer(PlainParts parts, String pin, PlainParts.Sending[] registered, int id) {
        pin(parts, pin, 1 + id);
        PlainParts.Sending s = parts.sending(id);
        register(registered, id, s);
        return s;
    }

    /** How many each registered producer sent (a producer that never ran sent none). */
    static long[] sent(PlainParts.Sending[] registered) {
        synchronized (registered) {
            long[] sent = new long[registered.length];
            for (int i = 0; i < sent.length; i++) sent[i] = registered[i] == null ? 0 : registered[i].sent();
            return sent;
        }
    }
}
