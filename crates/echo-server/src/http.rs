//! The HTTP/1.x subset the server speaks: a bounded request parser and the fixed
//! responses, built once and shared by every connection (no allocation per response).

use std::sync::OnceLock;

/// Length of the document every `200 OK` carries: the seed's `Document Length`.
pub const DOCUMENT_LENGTH: usize = 1028;

/// The `Server` header value.
pub const SERVER_SOFTWARE: &str = "lab-echo/0.1";

/// Why a request was rejected with `400 Bad Request`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum BadReason {
    /// The request line is not `METHOD SP target SP HTTP/1.x`.
    RequestLine,
    /// The version is not `HTTP/1.0` or `HTTP/1.1`.
    Version,
    /// A header line is malformed (no name, no colon, folded, control characters).
    Header,
    /// `Content-Length` is not a number, or appears twice with different values.
    ContentLength,
    /// `Transfer-Encoding` is not supported by this server.
    TransferEncoding,
    /// Headers plus body exceed the per-connection buffer.
    TooLarge,
}

impl BadReason {
    /// A short description.
    pub fn describe(self) -> &'static str {
        match self {
            BadReason::RequestLine => "malformed request line",
            BadReason::Version => "unsupported HTTP version (HTTP/1.0 and HTTP/1.1 are)",
            BadReason::Header => "malformed header line",
            BadReason::ContentLength => "invalid Content-Length",
            BadReason::TransferEncoding => "Transfer-Encoding is not supported",
            BadReason::TooLarge => "request larger than the connection buffer",
        }
    }
}

/// What a complete request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// `GET` or any other method: answered with the document.
    Get,
    /// `HEAD`: the headers without the body.
    Head,
}

/// The outcome of parsing the front of a connection's input buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parse {
    /// More bytes are needed.
    Incomplete,
    /// A whole request (headers and body) occupies the first `consumed` bytes.
    Complete {
        /// Bytes the request occupies, body included.
        consumed: usize,
        /// The method.
        method: Method,
        /// Whether the connection stays open after the response.
        keep_alive: bool,
    },
    /// The request is malformed; the connection gets a 400 and is closed.
    Bad(BadReason),
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

/// Whether a comma-separated header value lists `token` (ASCII case-insensitive).
fn lists(value: &[u8], token: &[u8]) -> bool {
    value.split(|&b| b == b',').any(|t| trim(t).eq_ignore_ascii_case(token))
}

/// Parses the request at the front of `buf`, which may hold at most `max` bytes.
/// Leading empty lines are skipped (RFC 9112 §2.2); lines may end in CRLF or a bare LF.
pub fn parse_request(buf: &[u8], max: usize) -> Parse {
    let full = buf.len() >= max;
    let incomplete = if full { Parse::Bad(BadReason::TooLarge) } else { Parse::Incomplete };
    let mut pos = 0;
    // Skip empty lines before the request line.
    loop {
        match buf.get(pos..) {
            Some([b'\r', b'\n', ..]) => pos += 2,
            Some([b'\n', ..]) => pos += 1,
            Some([b'\r']) | Some([]) => return incomplete,
            _ => break,
        }
    }
    let mut lines = Lines { buf, pos };
    let Some(request_line) = lines.next() else { return incomplete };
    let mut parts = request_line.split(|&b| b == b' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Parse::Bad(BadReason::RequestLine);
    };
    if method.is_empty()
        || !method.iter().all(|&b| is_tchar(b))
        || target.is_empty()
        || target.iter().any(|&b| b <= b' ' || b == 0x7f)
    {
        return Parse::Bad(BadReason::RequestLine);
    }
    let http11 = match version {
        b"HTTP/1.1" => true,
        b"HTTP/1.0" => false,
        _ => return Parse::Bad(BadReason::Version),
    };
    let mut close = false;
    let mut keep_alive_token = false;
    let mut content_length: Option<usize> = None;
    loop {
        let Some(line) = lines.next() else { return incomplete };
        if line.is_empty() {
            break;
        }
        if line[0] == b' ' || line[0] == b'\t' {
            return Parse::Bad(BadReason::Header); // obsolete line folding
        }
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            return Parse::Bad(BadReason::Header);
        };
        let (name, value) = (&line[..colon], trim(&line[colon + 1..]));
        if name.is_empty()
            || !name.iter().all(|&b| is_tchar(b))
            || value.iter().any(|&b| (b < b' ' && b != b'\t') || b == 0x7f)
        {
            return Parse::Bad(BadReason::Header);
        }
        if name.eq_ignore_ascii_case(b"connection") {
            close |= lists(value, b"close");
            keep_alive_token |= lists(value, b"keep-alive");
        } else if name.eq_ignore_ascii_case(b"content-length") {
            let n = match std::str::from_utf8(value).ok().and_then(|s| s.parse::<usize>().ok()) {
                Some(n) if value.iter().all(u8::is_ascii_digit) => n,
                _ => return Parse::Bad(BadReason::ContentLength),
            };
            if content_length.is_some_and(|c| c != n) {
                return Parse::Bad(BadReason::ContentLength);
            }
            content_length = Some(n);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            return Parse::Bad(BadReason::TransferEncoding);
        }
    }
    let consumed = lines.pos.saturating_add(content_length.unwrap_or(0));
    if consumed > max {
        return Parse::Bad(BadReason::TooLarge);
    }
    if consumed > buf.len() {
        return Parse::Incomplete; // the body is still arriving (and fits)
    }
    let method = if method == b"HEAD" { Method::Head } else { Method::Get };
    let keep_alive = if http11 { !close } else { keep_alive_token && !close };
    Parse::Complete { consumed, method, keep_alive }
}

/// Complete lines (without their CRLF or LF) from `pos`; stops at an unterminated line.
struct Lines<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Lines<'a> {
    fn next(&mut self) -> Option<&'a [u8]> {
        let rest = &self.buf[self.pos..];
        let nl = rest.iter().position(|&b| b == b'\n')?;
        self.pos += nl + 1;
        let line = &rest[..nl];
        Some(line.strip_suffix(b"\r").unwrap_or(line))
    }
}

/// Which fixed response a request gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseKind {
    /// `200 OK` with the document.
    Ok,
    /// `200 OK` headers only (a `HEAD` request).
    OkHead,
    /// `400 Bad Request`; always closes the connection.
    BadRequest,
}

struct Responses {
    ok_close: Vec<u8>,
    ok_keep: Vec<u8>,
    head_close: Vec<u8>,
    head_keep: Vec<u8>,
    bad: Vec<u8>,
    document: Vec<u8>,
}

fn make_document() -> Vec<u8> {
    let head = b"<html><head><title>lab-echo</title></head><body><h1>lab-echo/0.1</h1><p>";
    let tail = b"</p></body></html>\n";
    let filler = b"A reactor-pattern echo server for the handoff lab. ";
    let mut doc = head.to_vec();
    let mut i = 0;
    while doc.len() < DOCUMENT_LENGTH - tail.len() {
        doc.push(filler[i % filler.len()]);
        i += 1;
    }
    doc.extend_from_slice(tail);
    debug_assert_eq!(doc.len(), DOCUMENT_LENGTH);
    doc
}

fn head(status: &str, len: usize, keep_alive: bool) -> Vec<u8> {
    let conn = if keep_alive { "keep-alive" } else { "close" };
    format!(
        "HTTP/1.0 {status}\r\nServer: {SERVER_SOFTWARE}\r\nContent-Length: {len}\r\n\
         Content-Type: text/html\r\nConnection: {conn}\r\n\r\n"
    )
    .into_bytes()
}

fn responses() -> &'static Responses {
    static R: OnceLock<Responses> = OnceLock::new();
    R.get_or_init(|| {
        let document = make_document();
        let with_body = |ka| {
            let mut v = head("200 OK", DOCUMENT_LENGTH, ka);
            v.extend_from_slice(&document);
            v
        };
        let bad_body = b"<html><body><h1>400 Bad Request</h1></body></html>\n";
        let mut bad = head("400 Bad Request", bad_body.len(), false);
        bad.extend_from_slice(bad_body);
        Responses {
            ok_close: with_body(false),
            ok_keep: with_body(true),
            head_close: head("200 OK", DOCUMENT_LENGTH, false),
            head_keep: head("200 OK", DOCUMENT_LENGTH, true),
            bad,
            document,
        }
    })
}

/// The 1028-byte HTML document.
pub fn document() -> &'static [u8] {
    &responses().document
}

/// The complete bytes of a response (status line, headers, body).
pub fn response_bytes(kind: ResponseKind, keep_alive: bool) -> &'static [u8] {
    let r = responses();
    match (kind, keep_alive) {
        (ResponseKind::Ok, false) => &r.ok_close,
        (ResponseKind::Ok, true) => &r.ok_keep,
        (ResponseKind::OkHead, false) => &r.head_close,
        (ResponseKind::OkHead, true) => &r.head_keep,
        (ResponseKind::BadRequest, _) => &r.bad,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn complete(s: &str) -> (usize, Method, bool) {
        match parse_request(s.as_bytes(), 8192) {
            Parse::Complete { consumed, method, keep_alive } => (consumed, method, keep_alive),
            other => panic!("{s:?}: {other:?}"),
        }
    }

    #[test]
    fn parses_ab_requests_and_keep_alive_rules() {
        let ab = "GET / HTTP/1.0\r\nHost: 127.0.0.1:8080\r\nUser-Agent: ApacheBench/2.3\r\n\
                  Accept: */*\r\n\r\n";
        assert_eq!(complete(ab), (ab.len(), Method::Get, false));
        let abk = "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\nHost: x\r\n\r\n";
        assert!(complete(abk).2);
        assert!(complete("GET / HTTP/1.1\r\nHost: x\r\n\r\n").2);
        assert!(!complete("GET / HTTP/1.1\r\nConnection: foo, close\r\n\r\n").2);
        assert_eq!(complete("HEAD /x HTTP/1.1\n\n").1, Method::Head);
        assert_eq!(complete("\r\nGET / HTTP/1.0\r\n\r\n").0, 20);
        let post = "POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET";
        assert_eq!(complete(post).0, post.len() - 3);
    }

    #[test]
    fn incomplete_and_bad() {
        for s in ["", "GET", "GET / HTTP/1.0\r\n", "GET / HTTP/1.0\r\nHost: x\r\n\r"] {
            assert_eq!(parse_request(s.as_bytes(), 8192), Parse::Incomplete, "{s:?}");
        }
        let post = "POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc";
        assert_eq!(parse_request(post.as_bytes(), 8192), Parse::Incomplete);
        let cases = [
            ("GARBAGE\r\n\r\n", BadReason::RequestLine),
            ("GET /  HTTP/1.0\r\n\r\n", BadReason::RequestLine),
            ("G(T / HTTP/1.0\r\n\r\n", BadReason::RequestLine),
            ("GET / HTTP/2.0\r\n\r\n", BadReason::Version),
            ("GET / HTTP/1.0\r\nNoColon\r\n\r\n", BadReason::Header),
            ("GET / HTTP/1.0\r\n folded\r\n\r\n", BadReason::Header),
            ("GET / HTTP/1.0\r\nContent-Length: -1\r\n\r\n", BadReason::ContentLength),
            ("GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", BadReason::TransferEncoding),
            ("POST / HTTP/1.1\r\nContent-Length: 9000\r\n\r\n", BadReason::TooLarge),
        ];
        for (s, why) in cases {
            assert_eq!(parse_request(s.as_bytes(), 8192), Parse::Bad(why), "{s:?}");
        }
        let big = format!("GET / HTTP/1.0\r\nX: {}", "a".repeat(9000));
        assert_eq!(parse_request(&big.as_bytes()[..8192], 8192), Parse::Bad(BadReason::TooLarge));
    }

    #[test]
    fn responses_have_the_seed_length() {
        assert_eq!(document().len(), DOCUMENT_LENGTH);
        let ok = String::from_utf8(response_bytes(ResponseKind::Ok, false).to_vec()).unwrap();
        assert!(ok.starts_with("HTTP/1.0 200 OK\r\n"));
        assert!(ok.contains("\r\nServer: lab-echo/0.1\r\n"));
        assert!(ok.contains("\r\nContent-Length: 1028\r\n"));
        assert!(ok.contains("\r\nContent-Type: text/html\r\n"));
        let body = &ok[ok.find("\r\n\r\n").unwrap() + 4..];
        assert_eq!(body.len(), 1028);
        assert!(response_bytes(ResponseKind::BadRequest, true).starts_with(b"HTTP/1.0 400 "));
    }
}
