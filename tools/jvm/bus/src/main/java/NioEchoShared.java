// The parts the lab's JVM echo servers share (NioEcho here, NettyEcho in tools/jvm/netty):
// the document and the responses, byte for byte those of the Rust server
// (crates/echo-server/src/http.rs), and the lab's side of a server child: the command line,
// the commands on stdin that bracket each run, the GC account per run and the outcome.
//
// A server child of `lab echo-server` (tools/jvm/README.md, "Echo servers"):
//   java FLAGS -cp ... NioEcho|NettyEcho --port P [--fault short-body]
// binds 127.0.0.1:P, then reads commands from stdin, one a line:
//   run_start I PHASE   answers {"type":"run_start","run":I,"phase":PHASE,"t_ns":T}
//   run_end I PHASE     answers {"type":"run_end",...}, then {"type":"heartbeat","run":I}
//   stop (or EOF)       stops the server, answers {"type":"done","outcome":{...}}, exit 0.
// The answers are the lines of Protocol.java; the lab reads the perf counters of the java
// process's threads when it reads each mark, so the counts of a run are those between its
// marks. A bind or start failure answers {"type":"failed",...}, exit 3; a bad command line
// prints one line on stderr, exit 2.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

final class NioEchoShared {
    private NioEchoShared() {}

    /** The seed's Document Length, as the Rust server's http::DOCUMENT_LENGTH. */
    static final int DOCUMENT_LENGTH = 1028;
    /** What --fault short-body cuts off the document: a run must come out INVALID. */
    static final int SHORT_BY = 100;
    static final String SERVER_SOFTWARE = "lab-echo/0.1";

    /** The 1028-byte document, built as http.rs's make_document builds it. */
    static byte[] document() {
        byte[] head = "<html><head><title>lab-echo</title></head><body><h1>lab-echo/0.1</h1><p>"
                .getBytes(StandardCharsets.US_ASCII);
        byte[] tail = "</p></body></html>\n".getBytes(StandardCharsets.US_ASCII);
        byte[] filler = "A reactor-pattern echo server for the handoff lab. "
                .getBytes(StandardCharsets.US_ASCII);
        byte[] doc = new byte[DOCUMENT_LENGTH];
        System.arraycopy(head, 0, doc, 0, head.length);
        int n = head.length;
        for (int i = 0; n < DOCUMENT_LENGTH - tail.length; i++) doc[n++] = filler[i % filler.length];
        System.arraycopy(tail, 0, doc, n, tail.length);
        return doc;
    }

    /** The document this server answers with: the seed's, or shorter under the fault. */
    static byte[] servedDocument(boolean shortBody) {
        byte[] d = document();
        if (!shortBody) return d;
        byte[] s = new byte[d.length - SHORT_BY];
        System.arraycopy(d, 0, s, 0, s.length);
        return s;
    }

    /** The header block, as http.rs's head(): HTTP/1.0 status line, then four headers. */
    static String head(String status, int len, boolean keepAlive) {
        return "HTTP/1.0 " + status + "\r\nServer: " + SERVER_SOFTWARE + "\r\nContent-Length: " + len
                + "\r\nContent-Type: text/html\r\nConnection: " + (keepAlive ? "keep-alive" : "close")
                + "\r\n\r\n";
    }

    static byte[] withBody(String head, byte[] body) {
        byte[] h = head.getBytes(StandardCharsets.US_ASCII);
        byte[] r = new byte[h.length + body.length];
        System.arraycopy(h, 0, r, 0, h.length);
        System.arraycopy(body, 0, r, h.length, body.length);
        return r;
    }

    static final byte[] BAD_BODY =
            "<html><body><h1>400 Bad Request</h1></body></html>\n".getBytes(StandardCharsets.US_ASCII);

    /** The options both servers take. */
    static final class Options {
        int port = -1;
        boolean shortBody;
    }

    static final String USAGE = "usage: NioEcho|NettyEcho --port P [--fault short-body]";

    /** Parses the command line; on an error prints one line on stderr and exits 2. */
    static Options parse(String[] args) {
        Options o = new Options();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String v = null;
            int eq = a.indexOf('=');
            if (a.startsWith("--") && eq > 0) {
                v = a.substring(eq + 1);
                a = a.substring(0, eq);
            }
            if (a.equals("--help")) {
                System.err.println(USAGE);
                System.exit(0);
            }
            if (!a.equals("--port") && !a.equals("--fault")) bad("unknown option '" + a + "'; valid: --port, --fault");
            if (v == null) {
                if (i + 1 >= args.length) bad(a + " needs a value");
                v = args[++i];
            }
            if (a.equals("--port")) {
                try {
                    o.port = Integer.parseInt(v);
                } catch (NumberFormatException e) {
                    o.port = -1;
                }
                if (o.port < 0 || o.port > 65535) bad("--port '" + v + "' is not a port (0..65535)");
            } else if (v.equals("short-body")) {
                o.shortBody = true;
            } else {
                bad("--fault '" + v + "' is unknown; valid: short-body");
            }
        }
        if (o.port < 0) bad("--port is required");
        return o;
    }

    private static void bad(String why) {
        System.err.println(why);
        System.exit(2);
    }

    /** What a server reports when it stops, and how it stops. */
    interface Server {
        /** Stops accepting and serving; returns when its threads are gone. */
        void stop() throws Exception;

        /** Its own account, JSON fields without braces (requests_served, ...). */
        String accountJson();
    }

    /** GC collections and milliseconds summed over the collectors, now. */
    static long[] gc() {
        long count = 0, ms = 0;
        for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans()) {
            count += Math.max(0, b.getCollectionCount());
            ms += Math.max(0, b.getCollectionTime());
        }
        return new long[] {count, ms};
    }

    /**
     * The command loop: brackets each run with its marks and GC account until `stop` or EOF,
     * then stops the server and writes the outcome. Returns the exit code.
     */
    static int serve(Protocol proto, Server server, String name, Options o, String extraJson)
            throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        List<String> runs = new ArrayList<>();
        long[] gc0 = null;
        long t0 = 0;
        String line;
        while ((line = in.readLine()) != null) {
            String[] w = line.trim().split(" ");
            if (w[0].equals("stop")) break;
            if (w.length != 3 || !(w[0].equals("run_start") || w[0].equals("run_end"))) {
                proto.failed("unknown command '" + line + "'; valid: run_start I PHASE, run_end I PHASE, stop");
                server.stop();
                return 3;
            }
            int run = Integer.parseInt(w[1]);
            if (w[0].equals("run_start")) {
                gc0 = gc();
                t0 = System.nanoTime();
                proto.runStart(run, w[2], t0);
            } else {
                long t1 = System.nanoTime();
                long[] gc1 = gc();
                proto.runEnd(run, w[2], t1);
                long[] g = gc0 == null ? new long[] {0, 0} : gc0;
                runs.add("{\"run\":" + run + ",\"phase\":" + Protocol.str(w[2]) + ",\"ms\":"
                        + Protocol.nsToMs(t1 - t0) + ",\"gc_count\":" + (gc1[0] - g[0])
                        + ",\"gc_ms\":" + (gc1[1] - g[1]) + "}");
                proto.heartbeat(run);
            }
        }
        server.stop();
        proto.done("{\"server\":" + Protocol.str(name) + ",\"fault\":"
                + (o.shortBody ? "\"short-body\"" : "null") + ",\"document_length\":"
                + servedDocument(o.shortBody).length + "," + server.accountJson() + ","
                + "\"jvm\":" + Protocol.jvmJson() + extraJson + ",\"runs\":[" + String.join(",", runs) + "]}");
        return 0;
    }
}
