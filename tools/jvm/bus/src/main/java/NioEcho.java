// Seed 003's design on the JVM: ReactiveJ's reactor pattern with plain java.nio. ONE thread
// ("echo-selector") owns one Selector and does everything: accepts, reads, parses, writes.
// It answers every request with the document of the Rust echo server (same bytes, same
// headers, the same keep-alive rules: HTTP/1.1 keeps the connection unless it says
// `Connection: close`, HTTP/1.0 only with `Connection: keep-alive`; the response's status
// line is HTTP/1.0 and says keep-alive or close, as http.rs writes it), so `lab echo-server`
// drives it with the same load generator and ab and checks it the same way.
//
// Like the Rust event loop: TCP_NODELAY on accepted sockets, an 8 KiB input buffer per
// connection (a larger request gets 400 and the connection closes), responses written from
// one shared read-only buffer per kind (a duplicate per response, no copy), OP_WRITE asked
// for only when a write stops short. The command line, stdin commands and outcome are
// NioEchoShared's.

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;

final class NioEcho implements NioEchoShared.Server {
    static final int MAX_REQUEST = 8 * 1024;

    private final Selector selector;
    private final ServerSocketChannel listener;
    private final ByteBuffer okClose, okKeep, headClose, headKeep, bad;
    private volatile boolean running = true;
    private Thread thread;
    private volatile String fatal;
    // Written by the selector thread only; read after it is joined.
    private long served, badRequests, errors, selects, accepted, partialWrites;

    NioEcho(int port, boolean shortBody) throws IOException {
        byte[] doc = NioEchoShared.servedDocument(shortBody);
        okClose = frozen(NioEchoShared.withBody(NioEchoShared.head("200 OK", doc.length, false), doc));
        okKeep = frozen(NioEchoShared.withBody(NioEchoShared.head("200 OK", doc.length, true), doc));
        headClose = frozen(NioEchoShared.head("200 OK", doc.length, false).getBytes(StandardCharsets.US_ASCII));
        headKeep = frozen(NioEchoShared.head("200 OK", doc.length, true).getBytes(StandardCharsets.US_ASCII));
        bad = frozen(NioEchoShared.withBody(
                NioEchoShared.head("400 Bad Request", NioEchoShared.BAD_BODY.length, false), NioEchoShared.BAD_BODY));
        selector = Selector.open();
        listener = ServerSocketChannel.open();
        listener.bind(new InetSocketAddress("127.0.0.1", port), 1024);
        listener.configureBlocking(false);
        listener.register(selector, SelectionKey.OP_ACCEPT);
    }

    private static ByteBuffer frozen(byte[] b) {
        ByteBuffer d = ByteBuffer.allocateDirect(b.length);
        d.put(b).flip();
        return d.asReadOnlyBuffer();
    }

    /** One connection: its input and the response being written. */
    private static final class Conn {
        final SocketChannel ch;
        final ByteBuffer in = ByteBuffer.allocate(MAX_REQUEST);
        ByteBuffer out;
        boolean keepAlive, closeAfter, isOk;

        Conn(SocketChannel ch) { this.ch = ch; }
    }

    void start() {
        thread = new Thread(this::loop, "echo-selector");
        thread.start();
    }

    private void loop() {
        try {
            while (running) {
                selector.select();
                selects++;
                Iterator<SelectionKey> it = selector.selectedKeys().iterator();
                while (it.hasNext()) {
                    SelectionKey k = it.next();
                    it.remove();
                    if (!k.isValid()) continue;
                    if (k.isAcceptable()) {
                        acceptAll();
                        continue;
                    }
                    Conn c = (Conn) k.attachment();
                    try {
                        if (k.isWritable()) {
                            write(k, c);
                            if (c.out == null && k.isValid()) answer(k, c); // pipelined requests
                        }
                        if (k.isValid() && k.isReadable()) read(k, c);
                    } catch (IOException e) {
                        errors++;
                        close(k, c);
                    }
                }
            }
        } catch (Throwable t) {
            fatal = String.valueOf(t);
        } finally {
            for (SelectionKey k : selector.keys()) {
                try { k.channel().close(); } catch (IOException ignored) { /* stopping */ }
            }
            try { selector.close(); } catch (IOException ignored) { /* stopping */ }
        }
    }

    private void acceptAll() throws IOException {
        SocketChannel ch;
        while ((ch = listener.accept()) != null) {
            accepted++;
            ch.configureBlocking(false);
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            ch.register(selector, SelectionKey.OP_READ, new Conn(ch));
        }
    }

    private static void close(SelectionKey k, Conn c) {
        k.cancel();
        try { c.ch.close(); } catch (IOException ignored) { /* already gone */ }
    }

    /** Reads what is there, then answers every complete request in the buffer. */
    private void read(SelectionKey k, Conn c) throws IOException {
        if (c.out != null) return; // a response is still being written (OP_READ is off then)
        int n = c.ch.read(c.in);
        if (n < 0) {
            close(k, c);
            return;
        }
        answer(k, c);
    }

    private void answer(SelectionKey k, Conn c) throws IOException {
        while (c.out == null && k.isValid()) {
            int consumed = parse(c);
            if (consumed == 0) return; // incomplete
            if (consumed < 0) {
                c.out = bad.duplicate();
                c.closeAfter = true;
                c.isOk = false;
                c.in.clear();
            } else {
                c.in.flip();
                c.in.position(consumed);
                c.in.compact();
            }
            write(k, c);
        }
    }

    private void write(SelectionKey k, Conn c) throws IOException {
        if (c.out == null) return;
        c.ch.write(c.out);
        if (c.out.hasRemaining()) {
            if (k.interestOps() != SelectionKey.OP_WRITE) {
                partialWrites++;
                k.interestOps(SelectionKey.OP_WRITE); // the rest of the response first
            }
            return;
        }
        c.out = null;
        if (c.isOk) served++; else badRequests++;
        if (k.interestOps() != SelectionKey.OP_READ) k.interestOps(SelectionKey.OP_READ);
        if (c.closeAfter) close(k, c);
    }

    /**
     * Parses the request at the front of c.in (position = bytes held): 0 when incomplete, -1
     * when malformed or too large (a 400), else the bytes it occupies, with c.out set to its
     * response. Leading empty lines are skipped; lines end in CRLF or LF.
     */
    private int parse(Conn c) {
        byte[] b = c.in.array();
        int len = c.in.position();
        int pos = 0;
        while (pos < len && (b[pos] == '\r' || b[pos] == '\n')) pos++;
        int lineStart = pos, lineNo = 0, contentLength = -1;
        boolean http11 = false, close = false, keepToken = false, head = false;
        while (true) {
            int nl = -1;
            for (int i = lineStart; i < len; i++) if (b[i] == '\n') { nl = i; break; }
            if (nl < 0) return len >= MAX_REQUEST ? -1 : 0;
            int end = nl > lineStart && b[nl - 1] == '\r' ? nl - 1 : nl;
            String line = new String(b, lineStart, end - lineStart, StandardCharsets.ISO_8859_1);
            lineStart = nl + 1;
            if (lineNo++ == 0) {
                String[] p = line.split(" ", -1);
                if (p.length != 3 || p[0].isEmpty() || p[1].isEmpty()) return -1;
                if (p[2].equals("HTTP/1.1")) http11 = true;
                else if (!p[2].equals("HTTP/1.0")) return -1;
                head = p[0].equals("HEAD");
                continue;
            }
            if (line.isEmpty()) break;
            int colon = line.indexOf(':');
            if (colon <= 0 || line.charAt(0) == ' ' || line.charAt(0) == '\t') return -1;
            String name = line.substring(0, colon);
            String value = line.substring(colon + 1).trim();
            if (name.equalsIgnoreCase("connection")) {
                for (String t : value.split(",")) {
                    close |= t.trim().equalsIgnoreCase("close");
                    keepToken |= t.trim().equalsIgnoreCase("keep-alive");
                }
            } else if (name.equalsIgnoreCase("content-length")) {
                int n;
                try { n = Integer.parseInt(value); } catch (NumberFormatException e) { return -1; }
                if (n < 0 || (contentLength >= 0 && contentLength != n)) return -1;
                contentLength = n;
            } else if (name.equalsIgnoreCase("transfer-encoding")) {
                return -1;
            }
        }
        long consumed = (long) lineStart + Math.max(0, contentLength);
        if (consumed > MAX_REQUEST) return -1;
        if (consumed > len) return 0;
        boolean keep = http11 ? !close : keepToken && !close;
        c.keepAlive = keep;
        c.closeAfter = !keep;
        c.isOk = true;
        c.out = head ? (keep ? headKeep : headClose).duplicate() : (keep ? okKeep : okClose).duplicate();
        return (int) consumed;
    }

    @Override
    public void stop() throws InterruptedException {
        running = false;
        selector.wakeup();
        thread.join();
        try { listener.close(); } catch (IOException ignored) { /* stopping */ }
    }

    @Override
    public String accountJson() {
        return "\"requests_served\":" + served + ",\"bad_requests\":" + badRequests + ",\"errors\":" + errors
                + ",\"event_loop_iterations\":" + selects + ",\"connections_accepted\":" + accepted
                + ",\"partial_writes\":" + partialWrites + ",\"fatal\":" + Protocol.str(fatal);
    }

    public static void main(String[] args) {
        NioEchoShared.Options o = NioEchoShared.parse(args);
        Protocol proto = Protocol.open();
        int code;
        try {
            NioEcho s = new NioEcho(o.port, o.shortBody);
            s.start();
            code = NioEchoShared.serve(proto, s, "java-nio", o, ",\"threads\":{\"selector\":1}");
        } catch (Throwable t) {
            t.printStackTrace();
            proto.failed("java-nio: " + t);
            code = 3;
        }
        System.exit(code);
    }
}
