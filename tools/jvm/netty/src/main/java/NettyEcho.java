// The Java server a user would pick for seed 003's job: Netty 4.2 (the version tools/jvm/pom.xml pins),
// one boss NioEventLoopGroup thread accepting ("echo-boss") and ONE worker NioEventLoopGroup
// thread ("echo-worker") serving every connection through HttpServerCodec, the way Netty's
// own HttpHelloWorldServer example is written (no aggregator: the handler answers the
// HttpRequest and lets the body chunks go). It answers every request with the Rust echo
// server's document: the same bytes (status line HTTP/1.0, headers Server, Content-Length,
// Content-Type, Connection, in that order), keep-alive by Netty's HttpUtil.isKeepAlive (the
// Rust server's rules: HTTP/1.1 unless `Connection: close`, HTTP/1.0 only with
// `Connection: keep-alive`), closing after the response otherwise. The response body is one
// shared direct buffer (Unpooled.unreleasableBuffer, a retainedDuplicate per response, no
// copy), TCP_NODELAY on accepted channels as in the Rust server. A request Netty's decoder
// rejects gets 400 and the connection closes. Command line, stdin commands and outcome:
// NioEchoShared (the base classes, on the class path).

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.Version;
import io.netty.util.concurrent.FastThreadLocalThread;
import java.net.InetSocketAddress;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicLong;

final class NettyEcho implements NioEchoShared.Server {
    private final NioEventLoopGroup boss = new NioEventLoopGroup(1, named("echo-boss"));
    private final NioEventLoopGroup worker = new NioEventLoopGroup(1, named("echo-worker"));
    private final Channel listener;
    private final ByteBuf document, badBody;
    // Touched by the worker thread only (one event loop), read after it has stopped.
    private long served, badRequests, errors;
    private final AtomicLong accepted = new AtomicLong();

    /** One FastThreadLocalThread named `name` (what Netty's DefaultThreadFactory makes). */
    private static ThreadFactory named(String name) {
        return r -> new FastThreadLocalThread(r, name);
    }

    NettyEcho(int port, boolean shortBody) throws InterruptedException {
        byte[] doc = NioEchoShared.servedDocument(shortBody);
        document = Unpooled.unreleasableBuffer(Unpooled.directBuffer(doc.length).writeBytes(doc));
        badBody = Unpooled.unreleasableBuffer(
                Unpooled.directBuffer(NioEchoShared.BAD_BODY.length).writeBytes(NioEchoShared.BAD_BODY));
        ChannelHandler handler = new Handler();
        ServerBootstrap b = new ServerBootstrap()
                .group(boss, worker)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 1024)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        accepted.incrementAndGet();
                        // Netty's defaults (4 KiB request line, 8 KiB of headers); a body's
                        // chunks reach the handler as HttpContent and are released unread.
                        ch.pipeline().addLast(new HttpServerCodec(), handler);
                    }
                });
        listener = b.bind(new InetSocketAddress("127.0.0.1", port)).sync().channel();
    }

    @ChannelHandler.Sharable
    private final class Handler extends SimpleChannelInboundHandler<HttpObject> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, HttpObject msg) {
            if (!(msg instanceof HttpRequest)) return; // body chunks, LastHttpContent
            HttpRequest req = (HttpRequest) msg;
            if (req.decoderResult().isFailure()) {
                badRequests++;
                respond(ctx, HttpResponseStatus.BAD_REQUEST, badBody, false, false);
                return;
            }
            boolean keep = HttpUtil.isKeepAlive(req);
            served++;
            respond(ctx, HttpResponseStatus.OK, document, keep, req.method().equals(HttpMethod.HEAD));
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            errors++;
            ctx.close();
        }
    }

    private void respond(ChannelHandlerContext ctx, HttpResponseStatus status, ByteBuf body,
            boolean keep, boolean head) {
        int len = body.readableBytes();
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_0, status,
                head ? Unpooled.EMPTY_BUFFER : body.retainedDuplicate(), false, false);
        r.headers()
                .add("Server", NioEchoShared.SERVER_SOFTWARE)
                .add("Content-Length", len)
                .add("Content-Type", "text/html")
                .add("Connection", keep ? "keep-alive" : "close");
        if (keep) {
            ctx.writeAndFlush(r, ctx.voidPromise());
        } else {
            ctx.writeAndFlush(r).addListener(ChannelFutureListener.CLOSE);
        }
    }

    @Override
    public void stop() throws InterruptedException {
        listener.close().sync();
        boss.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.SECONDS).sync();
        worker.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.SECONDS).sync();
    }

    @Override
    public String accountJson() {
        return "\"requests_served\":" + served + ",\"bad_requests\":" + badRequests + ",\"errors\":" + errors
                + ",\"event_loop_iterations\":null,\"connections_accepted\":" + accepted.get()
                + ",\"partial_writes\":null,\"fatal\":null";
    }

    private static String nettyVersion() {
        Version v = Version.identify().get("netty-codec-http");
        return v == null ? null : v.artifactVersion();
    }

    public static void main(String[] args) {
        NioEchoShared.Options o = NioEchoShared.parse(args);
        Protocol proto = Protocol.open();
        int code;
        try {
            NettyEcho s = new NettyEcho(o.port, o.shortBody);
            code = NioEchoShared.serve(proto, s, "netty", o,
                    ",\"netty_version\":" + Protocol.str(nettyVersion()));
        } catch (Throwable t) {
            t.printStackTrace();
            proto.failed("netty: " + t);
            code = 3;
        }
        System.exit(code);
    }
}
