package lab.referee;

import lab.bus.PlainParts;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * What the bus referees share: the plain loop's settings as JMH parameters, the bus's parts
 * for them, the consumer's check and the producers' sending sides registered for it.
 */
@State(Scope.Group)
public abstract class BusReferee {
    /** The message's form, as Bus's `--message`. */
    @Param({"inline"})
    public String message;
    /** Payload bytes, as Bus's `--payload`. */
    @Param({"16"})
    public int payload;
    /** Stamp every K-th message of each producer, as Bus's `--sample-every` (0: never). */
    @Param({"1024"})
    public long sampleEvery;
    /** Producer threads (`-tg` must agree), for the check. */
    @Param({"1"})
    public int producers;
    /** CPUs to pin to, `:`-separated, consumer first then each producer; empty: none. */
    @Param({""})
    public String pin;

    PlainParts parts;
    PlainParts.Checking check;
    PlainParts.Sending[] registered;

    /** The parts, the check and the producers' slots, from the parameters. */
    void setupParts() {
        parts = PlainParts.of(message, payload, sampleEvery);
        check = parts.checking(producers);
        registered = new PlainParts.Sending[producers];
    }
}
