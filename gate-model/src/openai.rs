//! A client for the OpenAI Chat Completions API and the many servers that copy
//! it (vLLM, llama.cpp, Ollama, LiteLLM, OpenRouter …), because that one wire
//! format reaches most models the agent loop will be pointed at.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue, RETRY_AFTER};
use serde_json::{Map, Value, json};

use crate::{BoxFuture, ChatModel, Message, ModelError, Provider, ToolCallRequest, Turn, Usage, marked_as_error};

/// Default time allowed for one whole request, connection to last byte.
/// Generous because long completions are slow; use
/// [`OpenAiCompatible::with_timeout`] to change it.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// Largest response body accepted; anything longer is a malformed response,
/// so a broken or hostile server cannot make the loop allocate without bound.
pub const MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;

/// Bytes of an error response's body kept for its excerpt.
const ERROR_BODY_BYTES: usize = 64 * 1024;
/// Characters of a body shown in an error message.
const EXCERPT_CHARS: usize = 200;

/// An OpenAI-compatible Chat Completions client (`POST {base_url}/chat/completions`).
///
/// One instance holds one connection pool; clone it or share it behind an
/// `Arc` rather than building one per request.
///
/// Mapping of [`Message`]s (OpenAI request format, `openapi.json` 2.3.0):
///
/// | gate | Chat Completions |
/// |---|---|
/// | `System(s)` | `{"role":"system","content":s}` |
/// | `User(s)` | `{"role":"user","content":s}` |
/// | `Assistant{text,tool_calls}` | `{"role":"assistant","content":text or null,"tool_calls":[{"id","type":"function","function":{"name","arguments"}}]}`; `tool_calls` omitted when empty, `content` is `""` when there is neither |
/// | `ToolResult{call_id,content,is_error}` | `{"role":"tool","tool_call_id":call_id,"content":…}` |
///
/// OpenAI's tool message has no error flag, so an error result's content is
/// prefixed with [`TOOL_ERROR_PREFIX`](crate::TOOL_ERROR_PREFIX) (`"Error: "`) unless it already starts
/// with "error" (any case): models read the prefix reliably, and it keeps the
/// one bit gate knows from being lost. Arguments go back verbatim, invalid JSON
/// included, because that is what the model actually said.
///
/// Responses: `choices[0].message.content` (a string, `null`, or an array of
/// text parts, joined; `refusal` is used when there is no content),
/// `choices[0].message.tool_calls[].{id, function.name, function.arguments}`
/// and `usage.{prompt_tokens, completion_tokens}` (optional). Arguments are kept
/// as the exact string the server sent; a server that sends an object instead
/// (some compatible servers do) gets it serialized, and absent arguments become
/// `"{}"`.
#[derive(Clone)]
pub struct OpenAiCompatible {
    client: reqwest::Client,
    endpoint: reqwest::Url,
    model: String,
    auth: Option<HeaderValue>,
    api_key: Option<Arc<str>>,
    timeout: Duration,
    extra: Map<String, Value>,
}

impl fmt::Debug for OpenAiCompatible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiCompatible")
            .field("endpoint", &self.endpoint.as_str())
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("timeout", &self.timeout)
            .field("extra", &self.extra)
            .finish()
    }
}

impl OpenAiCompatible {
    /// A client for `base_url` (e.g. `https://api.openai.com/v1`; a trailing
    /// `/` is ignored) and `model`. With `api_key` the requests carry
    /// `Authorization: Bearer …`; local servers usually need none.
    ///
    /// Errors ([`ModelError::is_config`]): a base URL that is not `http(s)`,
    /// a key that cannot be a header value, or TLS that cannot be set up.
    pub fn new(base_url: &str, model: impl Into<String>, api_key: Option<String>) -> Result<Self, ModelError> {
        let endpoint = endpoint_for(base_url)?;
        let api_key = api_key.filter(|k| !k.is_empty());
        let auth = match &api_key {
            Some(key) => {
                let mut value = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
                    ModelError::config("the API key contains characters that cannot go in an HTTP header")
                })?;
                value.set_sensitive(true);
                Some(value)
            }
            None => None,
        };
        let mut builder = reqwest::Client::builder()
            .tls_backend_preconfigured(tls_config()?)
            .connect_timeout(Duration::from_secs(30));
        // A model server on this machine is never reached through a proxy, even
        // when HTTP(S)_PROXY is set for the outside world.
        if is_loopback(&endpoint) {
            builder = builder.no_proxy();
        }
        let client = builder
            .build()
            .map_err(|e| ModelError::config("cannot build the HTTP client").with_cause(e))?;
        Ok(OpenAiCompatible {
            client,
            endpoint,
            model: model.into(),
            auth,
            api_key: api_key.map(Arc::from),
            timeout: DEFAULT_TIMEOUT,
            extra: Map::new(),
        })
    }

    /// Like [`new`](Self::new), with the key read from `OPENAI_API_KEY`. An
    /// unset or empty variable means no `Authorization` header (what local
    /// servers want; OpenAI itself then answers 401, a status error).
    pub fn from_env(base_url: &str, model: impl Into<String>) -> Result<Self, ModelError> {
        Self::new(base_url, model, std::env::var("OPENAI_API_KEY").ok())
    }

    /// Sets the time allowed for one whole request (default [`DEFAULT_TIMEOUT`]).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Adds a field to every request body, e.g. `temperature: 0`,
    /// `max_completion_tokens`, `tool_choice` or `parallel_tool_calls: false`.
    /// `model`, `messages` and `tools` are always the client's own and cannot
    /// be replaced this way.
    pub fn with_body_field(mut self, key: impl Into<String>, value: Value) -> Self {
        self.extra.insert(key.into(), value);
        self
    }

    /// The URL requests are POSTed to.
    pub fn endpoint(&self) -> &str {
        self.endpoint.as_str()
    }

    /// The model name sent with every request.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The JSON body that [`next_turn`](ChatModel::next_turn) sends, for logging
    /// and dry runs. `tools` is included when it is a non-empty array.
    pub fn request_body(&self, messages: &[Message], tools: &Value) -> Value {
        let mut body = self.extra.clone();
        body.remove("tools");
        body.insert("model".into(), Value::String(self.model.clone()));
        body.insert(
            "messages".into(),
            Value::Array(messages.iter().map(message_to_openai).collect()),
        );
        if tools.as_array().is_some_and(|t| !t.is_empty()) {
            body.insert("tools".into(), tools.clone());
        }
        Value::Object(body)
    }

    async fn call(&self, messages: &[Message], tools: &Value) -> Result<Turn, ModelError> {
        if !(tools.is_array() || tools.is_null()) {
            return Err(ModelError::config(
                "`tools` must be a JSON array of Chat Completions tool definitions",
            ));
        }
        let body = serde_json::to_vec(&self.request_body(messages, tools))
            .map_err(|e| ModelError::config("cannot encode the request").with_cause(e))?;
        let mut request = self
            .client
            .post(self.endpoint.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json")
            .timeout(self.timeout)
            .body(body);
        if let Some(auth) = &self.auth {
            request = request.header(AUTHORIZATION, auth.clone());
        }
        let mut response = request.send().await.map_err(transport_error)?;
        let status = response.status();
        let retry_after = retry_after(response.headers(), SystemTime::now());
        let limit = if status.is_success() {
            MAX_RESPONSE_BYTES
        } else {
            ERROR_BODY_BYTES
        };
        let (body, truncated) = read_limited(&mut response, limit).await?;
        let key = self.api_key.as_deref();
        if status.as_u16() == 429 {
            return Err(ModelError::rate_limited(
                Some(429),
                retry_after,
                format!("HTTP 429: {}", excerpt(&body, key)),
            ));
        }
        if !status.is_success() {
            return Err(ModelError::http_status(
                status.as_u16(),
                retry_after,
                format!("HTTP {}: {}", status.as_u16(), excerpt(&body, key)),
            ));
        }
        if truncated {
            return Err(ModelError::malformed(format!(
                "response body is larger than {MAX_RESPONSE_BYTES} bytes"
            )));
        }
        parse_response(&body, key)
    }
}

impl ChatModel for OpenAiCompatible {
    fn next_turn<'a>(&'a self, messages: &'a [Message], tools: &'a Value) -> BoxFuture<'a, Result<Turn, ModelError>> {
        Box::pin(self.call(messages, tools))
    }

    fn provider(&self) -> Option<Provider> {
        Some(Provider::OpenAiChat)
    }
}

fn endpoint_for(base_url: &str) -> Result<reqwest::Url, ModelError> {
    let trimmed = base_url.trim().trim_end_matches('/');
    let url = reqwest::Url::parse(&format!("{trimmed}/chat/completions"))
        .map_err(|e| ModelError::config(format!("invalid base URL: {e}")).with_cause(e))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ModelError::config(format!(
            "base URL scheme must be http or https, not `{}`",
            url.scheme()
        )));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(ModelError::config("base URL must not have a query or fragment"));
    }
    Ok(url)
}

fn is_loopback(url: &reqwest::Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// rustls with the `ring` provider and the OS trust store, built here and
/// handed to reqwest so nothing process-wide (a default crypto provider) is
/// installed behind the application's back.
fn tls_config() -> Result<rustls::ClientConfig, ModelError> {
    use rustls_platform_verifier::BuilderVerifierExt;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ModelError::config("TLS setup failed").with_cause(e))?
        .with_platform_verifier()
        .map_err(|e| ModelError::config("cannot load the system's TLS roots").with_cause(e))?
        .with_no_client_auth();
    Ok(config)
}

fn transport_error(e: reqwest::Error) -> ModelError {
    let timeout = e.is_timeout();
    let what = if timeout {
        "the request timed out"
    } else if e.is_connect() {
        "cannot connect to the server"
    } else if e.is_body() || e.is_decode() {
        "the response body could not be read"
    } else {
        "the request failed"
    };
    ModelError::transport(timeout, what).with_cause(e)
}

/// Reads at most `limit` bytes of the body; the flag says whether more came.
async fn read_limited(response: &mut reqwest::Response, limit: usize) -> Result<(Vec<u8>, bool), ModelError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(transport_error)? {
        let room = limit.saturating_sub(body.len());
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, false))
}

/// The wait the server asked for: `retry-after-ms` (OpenAI, Azure) first, then
/// the standard `Retry-After`.
fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let ms = headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
        .and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok());
    ms.or_else(|| {
        headers
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| parse_retry_after(v, now))
    })
}

/// `Retry-After` per RFC 9110 §10.2.3: delay-seconds or an HTTP-date (a date
/// in the past means "now"). Anything else, including an overflowing number,
/// is `None` rather than a guess.
pub(crate) fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        return value.parse::<u64>().ok().map(Duration::from_secs);
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

fn message_to_openai(message: &Message) -> Value {
    match message {
        Message::System(text) => json!({"role": "system", "content": text}),
        Message::User(text) => json!({"role": "user", "content": text}),
        Message::Assistant { text, tool_calls } => {
            let mut m = Map::new();
            m.insert("role".into(), "assistant".into());
            let content = match text {
                Some(t) => Value::String(t.clone()),
                None if tool_calls.is_empty() => Value::String(String::new()),
                None => Value::Null,
            };
            m.insert("content".into(), content);
            if !tool_calls.is_empty() {
                let calls = tool_calls
                    .iter()
                    .map(|c| {
                        json!({
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.name, "arguments": c.arguments},
                        })
                    })
                    .collect();
                m.insert("tool_calls".into(), Value::Array(calls));
            }
            Value::Object(m)
        }
        Message::ToolResult {
            call_id,
            content,
            is_error,
        } => {
            let content = if *is_error {
                marked_as_error(content)
            } else {
                std::borrow::Cow::Borrowed(content.as_str())
            };
            json!({"role": "tool", "tool_call_id": call_id, "content": content})
        }
    }
}

/// Parses a 2xx Chat Completions body into a [`Turn`].
pub(crate) fn parse_response(body: &[u8], api_key: Option<&str>) -> Result<Turn, ModelError> {
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        ModelError::malformed(format!("response is not JSON; it starts: {}", excerpt(body, api_key))).with_cause(e)
    })?;
    let Some(choices) = value.get("choices") else {
        let server_said = value
            .get("error")
            .map(|e| e.get("message").unwrap_or(e))
            .map(|e| match e {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .map(|msg| format!(" (server error: {})", excerpt(msg.as_bytes(), api_key)))
            .unwrap_or_default();
        return Err(ModelError::malformed(format!("response has no `choices`{server_said}")));
    };
    let choice = choices
        .as_array()
        .ok_or_else(|| ModelError::malformed("`choices` is not an array"))?
        .first()
        .ok_or_else(|| ModelError::malformed("`choices` is empty"))?;
    let message = choice
        .get("message")
        .and_then(Value::as_object)
        .ok_or_else(|| ModelError::malformed("`choices[0].message` is missing or not an object"))?;

    let mut text = match message.get("content") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Array(parts)) => {
            let joined: String = parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            Some(joined)
        }
        Some(_) => {
            return Err(ModelError::malformed(
                "`choices[0].message.content` is neither a string, null nor an array of parts",
            ));
        }
    };
    if text.is_none()
        && let Some(refusal) = message.get("refusal").and_then(Value::as_str)
    {
        text = Some(refusal.to_owned());
    }
    let text = text.filter(|t| !t.is_empty());

    let tool_calls = match message.get("tool_calls") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(calls)) => calls
            .iter()
            .enumerate()
            .map(|(i, c)| parse_tool_call(i, c))
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(ModelError::malformed("`choices[0].message.tool_calls` is not an array"));
        }
    };

    let usage = value.get("usage").and_then(|u| {
        Some(Usage {
            input_tokens: u.get("prompt_tokens")?.as_u64()?,
            output_tokens: u.get("completion_tokens")?.as_u64()?,
        })
    });
    Ok(Turn {
        text,
        tool_calls,
        usage,
    })
}

fn parse_tool_call(i: usize, call: &Value) -> Result<ToolCallRequest, ModelError> {
    let at = |what: &str| ModelError::malformed(format!("`choices[0].message.tool_calls[{i}]`{what}"));
    let call = call.as_object().ok_or_else(|| at(" is not an object"))?;
    match call.get("type") {
        None | Some(Value::Null) => {}
        Some(Value::String(t)) if t == "function" => {}
        Some(other) => {
            let shown: String = other.to_string().chars().take(40).collect();
            return Err(at(&format!(".type is {shown}; only function tool calls are supported")));
        }
    }
    let id = call
        .get("id")
        .and_then(Value::as_str)
        .ok_or_else(|| at(".id is missing or not a string"))?;
    let function = call
        .get("function")
        .and_then(Value::as_object)
        .ok_or_else(|| at(".function is missing or not an object"))?;
    let name = function
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| at(".function.name is missing or not a string"))?;
    let arguments = match function.get("arguments") {
        None | Some(Value::Null) => "{}".to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    Ok(ToolCallRequest {
        id: id.to_owned(),
        name: name.to_owned(),
        arguments,
    })
}

/// A short, single-line, operator-safe excerpt of a body: control characters
/// become spaces, runs of whitespace collapse, the API key and `sk-…`-style
/// tokens are redacted, and the result is cut to [`EXCERPT_CHARS`].
pub(crate) fn excerpt(body: &[u8], api_key: Option<&str>) -> String {
    let head = &body[..body.len().min(4 * EXCERPT_CHARS + 64)];
    let mut text = String::from_utf8_lossy(head).into_owned();
    if let Some(key) = api_key.filter(|k| k.len() >= 4) {
        text = text.replace(key, "[redacted]");
    }
    let text = redact_key_like(&text);
    let mut out = String::new();
    let mut last_space = true;
    let mut count = 0;
    for c in text.chars() {
        let c = if c.is_control() || c.is_whitespace() { ' ' } else { c };
        if c == ' ' && last_space {
            continue;
        }
        last_space = c == ' ';
        if count == EXCERPT_CHARS {
            out.push('…');
            return out.trim_end().to_owned();
        }
        out.push(c);
        count += 1;
    }
    if body.len() > head.len() {
        out.push('…');
    }
    if out.trim().is_empty() {
        return "(empty body)".to_owned();
    }
    out.trim_end().to_owned()
}

/// Replaces `sk-` and `Bearer ` followed by 8+ token characters, the shapes in
/// which keys come back in provider error bodies.
fn redact_key_like(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let next = ["sk-", "Bearer "]
            .iter()
            .filter_map(|p| rest.find(p).map(|at| (at, p.len())))
            .min();
        let Some((at, plen)) = next else {
            out.push_str(rest);
            return out;
        };
        let start = at + plen;
        let token_len = rest[start..]
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'-' || *b == b'_' || *b == b'.')
            .count();
        out.push_str(&rest[..start]);
        if token_len >= 8 {
            out.push_str("[redacted]");
        } else {
            out.push_str(&rest[start..start + token_len]);
        }
        rest = &rest[start + token_len..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_seconds_and_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_480); // Wed, 21 Oct 2015 07:28:00 GMT
        assert_eq!(parse_retry_after("120", now), Some(Duration::from_secs(120)));
        assert_eq!(parse_retry_after(" 0 ", now), Some(Duration::ZERO));
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:30 GMT", now),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        for bad in ["", "soon", "-5", "1.5", "99999999999999999999999", "Wed, 99 Oct 2015"] {
            assert_eq!(parse_retry_after(bad, now), None, "{bad:?}");
        }
    }

    #[test]
    fn retry_after_ms_header_wins() {
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, HeaderValue::from_static("7"));
        assert_eq!(retry_after(&headers, SystemTime::now()), Some(Duration::from_secs(7)));
        headers.insert("retry-after-ms", HeaderValue::from_static("1500"));
        assert_eq!(
            retry_after(&headers, SystemTime::now()),
            Some(Duration::from_millis(1500))
        );
        headers.insert("retry-after-ms", HeaderValue::from_static("NaN"));
        assert_eq!(retry_after(&headers, SystemTime::now()), Some(Duration::from_secs(7)));
    }

    #[test]
    fn excerpt_is_short_single_line_and_redacted() {
        let body = b"{\"error\":\n\t{\"message\": \"Incorrect API key provided: sk-proj-abcdefghijklmnop. Use Bearer abcdefgh12345678\"}}";
        let e = excerpt(body, None);
        assert!(!e.contains("abcdefghijklmnop"), "{e}");
        assert!(!e.contains("abcdefgh12345678"), "{e}");
        assert!(!e.contains('\n') && !e.contains('\t'), "{e}");
        let long = "x".repeat(10_000);
        let e = excerpt(long.as_bytes(), None);
        assert_eq!(e.chars().count(), EXCERPT_CHARS + 1);
        assert!(e.ends_with('…'));
        assert_eq!(
            excerpt(b"the key is hunter22", Some("hunter22")),
            "the key is [redacted]"
        );
        assert_eq!(excerpt(b"", None), "(empty body)");
        // Invalid UTF-8 and a multi-byte char at the cut never panic.
        let _ = excerpt(&[0xff, 0xfe, b'a'], None);
        let _ = excerpt("é".repeat(1000).as_bytes(), None);
    }

    #[test]
    fn invalid_base_urls_are_config_errors() {
        for bad in ["", "not a url", "ftp://example.com/v1", "http://h/v1?x=1"] {
            let e = OpenAiCompatible::new(bad, "m", None).expect_err(bad);
            assert!(e.is_config(), "{bad}: {e}");
        }
        let ok = OpenAiCompatible::new("http://127.0.0.1:9/v1/", "m", None).expect("valid");
        assert_eq!(ok.endpoint(), "http://127.0.0.1:9/v1/chat/completions");
    }

    #[test]
    fn loopback_hosts_are_recognised() {
        for (url, expected) in [
            ("http://127.0.0.1:8080/v1", true),
            ("http://localhost/v1", true),
            ("http://[::1]:11434/v1", true),
            ("https://api.openai.com/v1", false),
            ("http://10.0.0.1/v1", false),
        ] {
            let parsed = reqwest::Url::parse(url).expect("url");
            assert_eq!(is_loopback(&parsed), expected, "{url}");
        }
    }

    #[test]
    fn key_never_appears_in_debug() {
        let c = OpenAiCompatible::new("https://api.example.com/v1", "m", Some("sk-secret-1234567890".into()))
            .expect("valid");
        assert!(!format!("{c:?}").contains("secret"));
        let e = OpenAiCompatible::new("https://x/v1", "m", Some("bad\nkey".into())).expect_err("newline");
        assert!(e.is_config());
    }

    proptest::proptest! {
        #[test]
        fn parsing_arbitrary_bytes_never_panics(body in proptest::collection::vec(proptest::num::u8::ANY, 0..512)) {
            let _ = parse_response(&body, Some("key1"));
            let _ = excerpt(&body, Some("key1"));
        }

        #[test]
        fn arguments_strings_survive_byte_for_byte(args in ".*", id in ".*", name in ".*") {
            let body = json!({"choices": [{"message": {"tool_calls": [
                {"id": id, "type": "function", "function": {"name": name, "arguments": args}}
            ]}}]});
            let turn = parse_response(body.to_string().as_bytes(), None).map_err(|e| proptest::test_runner::TestCaseError::fail(e.to_string()))?;
            proptest::prop_assert_eq!(&turn.tool_calls[0].arguments, &args);
            proptest::prop_assert_eq!(&turn.tool_calls[0].name, &name);
        }
    }
}
