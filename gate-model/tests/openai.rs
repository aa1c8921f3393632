//! The Chat Completions client against a mock server on 127.0.0.1 that speaks
//! the tool-calling format: request mapping, response parsing, and every error
//! class the agent loop branches on.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use toolgate_model::{ChatModel, Message, OpenAiCompatible, ToolCallRequest, Usage};

const KEY: &str = "sk-test-0123456789abcdef";
const MAX_HEAD: usize = 64 * 1024;
const MAX_BODY: usize = 4 * 1024 * 1024;
/// Safety net so a broken client cannot hang the suite; never asserted on.
const ACCEPT_LIMIT: Duration = Duration::from_secs(30);

/// A request as the mock server saw it.
#[derive(Debug)]
struct Seen {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// What the mock server answers.
struct Reply {
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: String,
}

impl Reply {
    fn json(status: u16, body: Value) -> Self {
        Reply {
            status,
            headers: Vec::new(),
            body: body.to_string(),
        }
    }

    fn raw(status: u16, body: &str) -> Self {
        Reply {
            status,
            headers: Vec::new(),
            body: body.to_owned(),
        }
    }

    fn header(mut self, name: &'static str, value: &str) -> Self {
        self.headers.push((name, value.to_owned()));
        self
    }
}

/// A Chat Completions response with one choice holding `message`.
fn completion(message: Value, usage: Option<(u64, u64)>) -> Value {
    let mut body = json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "mock-model",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
    });
    if let (Some((p, c)), Some(obj)) = (usage, body.as_object_mut()) {
        obj.insert(
            "usage".into(),
            json!({"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}),
        );
    }
    body
}

fn tool_call_message(id: &str, name: &str, arguments: &str) -> Value {
    json!({
        "role": "assistant",
        "content": null,
        "tool_calls": [{"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}],
    })
}

/// Serves exactly `connections` HTTP/1.1 requests on 127.0.0.1 with
/// `respond`, one request per connection, then returns what it saw.
async fn mock_server<F>(connections: usize, respond: F) -> (String, JoinHandle<Vec<Seen>>)
where
    F: Fn(&Seen) -> Reply + Send + Sync + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("local addr");
    let respond = Arc::new(respond);
    let handle = tokio::spawn(async move {
        let mut seen = Vec::new();
        for _ in 0..connections {
            let Ok(Ok((mut stream, _))) = tokio::time::timeout(ACCEPT_LIMIT, listener.accept()).await else {
                break;
            };
            let Some(request) = read_request(&mut stream).await else {
                continue;
            };
            let reply = respond(&request);
            write_reply(&mut stream, &reply).await;
            seen.push(request);
        }
        seen
    });
    (format!("http://{addr}/v1"), handle)
}

async fn read_request(stream: &mut TcpStream) -> Option<Seen> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        if buf.len() > MAX_HEAD {
            return None;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?.to_owned();
    let path = request_line.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0)
        .min(MAX_BODY);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    body.truncate(length);
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    Some(Seen {
        method,
        path,
        headers,
        body,
    })
}

async fn write_reply(stream: &mut TcpStream, reply: &Reply) {
    let mut out = format!(
        "HTTP/1.1 {} Mock\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        reply.status,
        reply.body.len()
    );
    for (name, value) in &reply.headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    out.push_str(&reply.body);
    let _ = stream.write_all(out.as_bytes()).await;
    let _ = stream.shutdown().await;
}

fn tools() -> Value {
    json!([{
        "type": "function",
        "function": {
            "name": "lookup_customer",
            "description": "Look up a customer by email address.",
            "parameters": {"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"]},
        },
    }])
}

fn client(base: &str) -> OpenAiCompatible {
    OpenAiCompatible::new(base, "mock-model", Some(KEY.to_owned())).expect("client")
}

#[tokio::test]
async fn tool_call_turn_with_usage() {
    let (base, server) = mock_server(1, |_| {
        Reply::json(
            200,
            completion(
                tool_call_message("call_1", "lookup_customer", r#"{"email":"a@b.c"}"#),
                Some((4000, 50)),
            ),
        )
    })
    .await;
    let messages = [
        Message::System("You are a billing agent.".into()),
        Message::User("Find a@b.c".into()),
    ];
    let turn = client(&base).next_turn(&messages, &tools()).await.expect("turn");
    assert_eq!(
        turn.tool_calls,
        vec![ToolCallRequest::new(
            "call_1",
            "lookup_customer",
            r#"{"email":"a@b.c"}"#
        )]
    );
    assert_eq!(turn.text, None);
    assert_eq!(
        turn.usage,
        Some(Usage {
            input_tokens: 4000,
            output_tokens: 50
        })
    );

    let seen = server.await.expect("server");
    let req = &seen[0];
    assert_eq!(req.method, "POST");
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(req.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    assert_eq!(req.header("content-type"), Some("application/json"));
    assert_eq!(
        req.body,
        json!({
            "model": "mock-model",
            "messages": [
                {"role": "system", "content": "You are a billing agent."},
                {"role": "user", "content": "Find a@b.c"},
            ],
            "tools": tools(),
        })
    );
}

#[tokio::test]
async fn history_maps_to_openai_messages_and_final_text_ends_the_turns() {
    // Answers like a model would: a tool call first, final text once it has
    // seen a tool result.
    let (base, server) = mock_server(2, |seen| {
        let last_role = seen.body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .and_then(|m| m["role"].as_str())
            .unwrap_or("")
            .to_owned();
        if last_role == "tool" {
            Reply::json(
                200,
                completion(json!({"role": "assistant", "content": "All done."}), None),
            )
        } else {
            Reply::json(
                200,
                completion(
                    tool_call_message("call_9", "lookup_customer", "{\"email\":"),
                    Some((10, 5)),
                ),
            )
        }
    })
    .await;
    let model = client(&base);
    let mut messages = vec![Message::User("Find a@b.c".into())];
    let first = model.next_turn(&messages, &tools()).await.expect("first turn");
    assert!(!first.is_final());
    messages.push(Message::from_turn(&first));
    messages.push(Message::ToolResult {
        call_id: first.tool_calls[0].id.clone(),
        content: "arguments are not valid JSON: expected a value at `email`".into(),
        is_error: true,
    });
    let second = model.next_turn(&messages, &tools()).await.expect("second turn");
    assert!(second.is_final());
    assert_eq!(second.text.as_deref(), Some("All done."));
    assert_eq!(second.usage, None);

    let seen = server.await.expect("server");
    assert_eq!(
        seen[1].body["messages"],
        json!([
            {"role": "user", "content": "Find a@b.c"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_9", "type": "function", "function": {"name": "lookup_customer", "arguments": "{\"email\":"}}
            ]},
            {"role": "tool", "tool_call_id": "call_9",
             "content": "Error: arguments are not valid JSON: expected a value at `email`"},
        ])
    );
}

#[tokio::test]
async fn error_prefix_is_not_doubled_and_ok_results_are_untouched() {
    let model = client("http://127.0.0.1:9/v1");
    let body = model.request_body(
        &[
            Message::ToolResult {
                call_id: "a".into(),
                content: "error: card declined".into(),
                is_error: true,
            },
            Message::ToolResult {
                call_id: "b".into(),
                content: "{\"id\":\"c1\"}".into(),
                is_error: false,
            },
            Message::Assistant {
                text: None,
                tool_calls: vec![],
            },
        ],
        &json!([]),
    );
    assert_eq!(body["messages"][0]["content"], "error: card declined");
    assert_eq!(body["messages"][1]["content"], "{\"id\":\"c1\"}");
    assert_eq!(body["messages"][2], json!({"role": "assistant", "content": ""}));
    assert!(body.get("tools").is_none(), "empty tools are omitted: {body}");
}

#[test]
fn extra_body_fields_are_sent_but_cannot_replace_the_core_ones() {
    let model = OpenAiCompatible::new("http://127.0.0.1:9/v1", "mock-model", None)
        .expect("client")
        .with_body_field("temperature", json!(0))
        .with_body_field("parallel_tool_calls", json!(false))
        .with_body_field("model", json!("other"))
        .with_body_field("tools", json!([{"type": "function", "function": {"name": "injected"}}]));
    let body = model.request_body(&[Message::User("hi".into())], &json!([]));
    assert_eq!(body["temperature"], 0);
    assert_eq!(body["parallel_tool_calls"], false);
    assert_eq!(body["model"], "mock-model");
    assert!(body.get("tools").is_none(), "{body}");
    assert_eq!(body["messages"], json!([{"role": "user", "content": "hi"}]));
}

#[tokio::test]
async fn invalid_json_arguments_pass_through_verbatim() {
    let raw = "{\"email\": \"a@b.c\", \"note\": \"unterminated";
    let (base, server) = mock_server(2, move |seen| {
        if seen.body["messages"].as_array().map(Vec::len) == Some(1) {
            Reply::json(
                200,
                completion(tool_call_message("call_1", "lookup_customer", raw), None),
            )
        } else {
            // Some compatible servers send arguments as an object, or not at all.
            Reply::json(
                200,
                completion(
                    json!({"role": "assistant", "content": "", "tool_calls": [
                        {"id": "c2", "type": "function", "function": {"name": "x", "arguments": {"b": 1, "a": [true]}}},
                        {"id": "c3", "function": {"name": "y"}},
                    ]}),
                    None,
                ),
            )
        }
    })
    .await;
    let model = client(&base);
    let turn = model
        .next_turn(&[Message::User("go".into())], &tools())
        .await
        .expect("turn");
    assert_eq!(turn.tool_calls[0].arguments, raw);
    let turn = model
        .next_turn(&[Message::User("go".into()), Message::User("again".into())], &tools())
        .await
        .expect("turn");
    assert_eq!(turn.text, None);
    assert_eq!(turn.tool_calls[0].arguments, r#"{"b":1,"a":[true]}"#);
    assert_eq!(turn.tool_calls[1].arguments, "{}");
    server.await.expect("server");
}

#[tokio::test]
async fn malformed_responses_are_malformed_errors() {
    let replies = [
        Reply::raw(200, "<html><body>502 Bad Gateway</body></html>"),
        Reply::json(200, json!({"object": "chat.completion", "model": "m"})),
        Reply::json(200, json!({"error": {"message": "model overloaded"}})),
        Reply::json(200, json!({"choices": []})),
        Reply::json(200, json!({"choices": [{"index": 0}]})),
        Reply::json(200, json!({"choices": [{"message": {"content": 42}}]})),
        Reply::json(
            200,
            json!({"choices": [{"message": {"tool_calls": [{"id": "c", "type": "function", "function": {}}]}}]}),
        ),
        Reply::json(200, json!({"choices": [{"message": {"tool_calls": {"id": "c"}}}]})),
        Reply::json(
            200,
            json!({"choices": [{"message": {"tool_calls": [{"id": "c", "type": "custom", "custom": {"name": "x"}}]}}]}),
        ),
        Reply::raw(200, ""),
    ];
    let expected = [
        "not JSON",
        "no `choices`",
        "model overloaded",
        "`choices` is empty",
        "`choices[0].message` is missing",
        "content",
        "function.name",
        "tool_calls` is not an array",
        "only function tool calls",
        "not JSON",
    ];
    let n = replies.len();
    let replies = std::sync::Mutex::new(replies.into_iter().map(Some).collect::<Vec<_>>());
    let counter = std::sync::atomic::AtomicUsize::new(0);
    let (base, server) = mock_server(n, move |_| {
        let i = counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        replies
            .lock()
            .ok()
            .and_then(|mut r| r.get_mut(i).and_then(Option::take))
            .unwrap_or_else(|| Reply::raw(500, "mock ran out of replies"))
    })
    .await;
    let model = client(&base);
    for needle in expected {
        let err = model
            .next_turn(&[Message::User("hi".into())], &tools())
            .await
            .expect_err(needle);
        assert!(err.is_malformed_response(), "{needle}: {err}");
        assert!(!err.is_retryable());
        assert!(err.to_string().contains(needle), "{needle}: {err}");
    }
    assert_eq!(server.await.expect("server").len(), n);
}

#[tokio::test]
async fn rate_limit_carries_retry_after() {
    let replies = [
        ("7", Some(Duration::from_secs(7))),
        ("Wed, 21 Oct 2015 07:28:00 GMT", Some(Duration::ZERO)),
        ("whenever", None),
    ];
    for (header, expected) in replies {
        let (base, server) = mock_server(1, move |_| {
            Reply::json(
                429,
                json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}),
            )
            .header("Retry-After", header)
        })
        .await;
        let err = client(&base)
            .next_turn(&[Message::User("hi".into())], &tools())
            .await
            .expect_err("429");
        assert!(err.is_rate_limited(), "{err}");
        assert!(!err.is_http_status() && !err.is_transport() && !err.is_malformed_response());
        assert_eq!(err.status(), Some(429));
        assert_eq!(err.retry_after(), expected, "Retry-After: {header}");
        assert!(err.to_string().contains("Rate limit reached"), "{err}");
        server.await.expect("server");
    }

    let (base, server) = mock_server(1, |_| {
        Reply::json(429, json!({}))
            .header("retry-after-ms", "1250")
            .header("Retry-After", "2")
    })
    .await;
    let err = client(&base).next_turn(&[], &Value::Null).await.expect_err("429");
    assert_eq!(err.retry_after(), Some(Duration::from_millis(1250)));
    server.await.expect("server");
}

#[tokio::test]
async fn server_error_is_a_status_error_with_a_sanitized_excerpt() {
    let body = format!(
        "Internal error\n\tat handler (server.js:10)\nAuthorization: Bearer {KEY}\n{}",
        "x".repeat(5000)
    );
    let (base, server) = mock_server(2, move |seen| {
        if seen.body["messages"].as_array().map(Vec::len) == Some(0) {
            Reply::raw(
                401,
                &format!("{{\"error\":{{\"message\":\"Incorrect API key provided: {KEY}\"}}}}"),
            )
        } else {
            Reply::raw(500, &body)
        }
    })
    .await;
    let model = client(&base);
    let err = model
        .next_turn(&[Message::User("hi".into())], &tools())
        .await
        .expect_err("500");
    assert!(err.is_http_status() && !err.is_rate_limited(), "{err}");
    assert_eq!(err.status(), Some(500));
    assert!(err.is_retryable());
    let shown = err.to_string();
    assert!(
        shown.starts_with("HTTP error status: HTTP 500: Internal error at handler"),
        "{shown}"
    );
    assert!(!shown.contains(KEY) && !shown.contains('\n'), "{shown}");
    assert!(shown.chars().count() < 300, "excerpt is short: {}", shown.len());

    let err = model.next_turn(&[], &tools()).await.expect_err("401");
    assert_eq!(err.status(), Some(401));
    assert!(!err.is_retryable());
    assert!(!err.to_string().contains(KEY), "{err}");
    server.await.expect("server");
}

#[tokio::test]
async fn connection_refused_is_a_transport_error() {
    // Bind then drop to get a port on which nothing listens.
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        l.local_addr().expect("addr").port()
    };
    let err = client(&format!("http://127.0.0.1:{port}/v1"))
        .next_turn(&[Message::User("hi".into())], &tools())
        .await
        .expect_err("nothing listens");
    assert!(err.is_transport() && !err.is_timeout(), "{err}");
    assert!(err.is_retryable());
    assert!(
        std::error::Error::source(&err).is_some(),
        "the reqwest error stays reachable"
    );
}

#[tokio::test]
async fn a_server_that_never_answers_is_a_timeout() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    // Accepts and holds the connection without answering.
    let holder = tokio::spawn(async move {
        let accepted = tokio::time::timeout(ACCEPT_LIMIT, listener.accept()).await;
        tokio::time::sleep(Duration::from_secs(5)).await;
        drop(accepted);
    });
    let err = client(&format!("http://{addr}/v1"))
        .with_timeout(Duration::from_millis(300))
        .next_turn(&[Message::User("hi".into())], &tools())
        .await
        .expect_err("no answer");
    assert!(err.is_transport() && err.is_timeout(), "{err}");
    holder.abort();
}

#[tokio::test]
async fn tools_that_are_not_an_array_are_refused_before_sending() {
    let err = client("http://127.0.0.1:9/v1")
        .next_turn(&[], &json!({"type": "function"}))
        .await
        .expect_err("object");
    assert!(err.is_config(), "{err}");
}

#[tokio::test]
async fn https_to_a_server_that_does_not_speak_tls_is_a_transport_error() {
    // Exercises the real TLS stack (rustls + ring, handed to reqwest) up to the
    // handshake: a garbage answer must be an error, never a panic.
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let server = tokio::spawn(async move {
        if let Ok(Ok((mut stream, _))) = tokio::time::timeout(ACCEPT_LIMIT, listener.accept()).await {
            let mut hello = [0u8; 512];
            let _ = stream.read(&mut hello).await;
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
                .await;
            let _ = stream.shutdown().await;
        }
    });
    let err = client(&format!("https://{addr}/v1"))
        .next_turn(&[Message::User("hi".into())], &tools())
        .await
        .expect_err("not TLS");
    assert!(err.is_transport(), "{err}");
    server.await.expect("server");
}
