//! `gate console`: a page for the person on call, served from the store.
//!
//! It shows what waits for a person (calls waiting for approval, intents
//! whose outcome is unknown, failed tasks) with the buttons that decide
//! them, and the decision report. Every decision is what the commands do
//! (`gate approvals approve|deny`, `gate reconcile resolve|reopen`): a
//! compare-and-set in the store, so two people clicking at once, or a
//! click beside a command, decide once.
//!
//! Who may click: the server listens on loopback by default and every URL
//! starts with a token drawn at start (128 random bits, printed with the
//! URL); a request without it is answered 404. On loopback the `Host`
//! header must name loopback too, so a web page that rebinds its own name
//! to 127.0.0.1 cannot reach it. Decisions are POSTs only; the pages carry
//! no script (`Content-Security-Policy` forbids any), tell the browser not
//! to send the URL on (`no-referrer`) or cache them, and everything a
//! model or a tool wrote is escaped text.
//!
//! The HTTP stack is hyper's, already in the tree under the MCP server's
//! streamable HTTP.

mod page;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use toolgate::ledger::{
    ApprovalDecision, ApprovalQuery, ApprovalReport, ApprovalStatus, DecisionQuery, DecisionReport, Resolution,
    ResolveRequest, Storage, Verdict,
};

use crate::UsageError;

/// How many rows of each list the page shows at most.
const LIST_LIMIT: u32 = 500;

/// The largest form body read: a note or a reason is at most 4 KiB.
const MAX_FORM_BYTES: usize = 64 * 1024;

/// The console page's policy: no script, no plugin, no frame, forms only to
/// itself.
const CONSOLE_CSP: &str =
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The report page carries its own inline script and style (its charts),
/// and nothing else.
const REPORT_CSP: &str = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
                          img-src data:; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

/// `gate console`.
#[derive(clap::Args)]
#[command(after_help = "Examples:
  gate console --store sqlite:gate.db --listen 127.0.0.1:0
  gate console --store sqlite:gate.db --listen 127.0.0.1:0 --by alice

It prints the page's URL, token included; open it in a browser on this machine. Ctrl-C stops it.")]
pub(crate) struct Args {
    /// The ledger store (default: sqlite:gate.db).
    #[arg(long)]
    store: Option<String>,
    /// The address to serve on. Port 0 picks a free one. An address other
    /// than loopback makes the page reachable from the network, guarded by
    /// the token alone over plain HTTP.
    #[arg(long, default_value = "127.0.0.1:7777")]
    listen: SocketAddr,
    /// Who the page's forms decide as unless changed in the form; default:
    /// $USER, else each form asks.
    #[arg(long)]
    by: Option<String>,
}

/// What every request is served from.
struct Console {
    ledger: Arc<dyn Storage>,
    store: String,
    /// The path prefix every URL starts with: `/` and the token.
    base: String,
    /// Who the forms decide as by default; empty: each form asks.
    by: String,
    /// The `Host` values accepted, or none to accept any (a non-loopback
    /// address).
    hosts: Option<Vec<String>>,
}

/// Runs `gate console`.
pub(crate) fn run(args: Args) -> Result<ExitCode, UsageError> {
    let by = args
        .by
        .or_else(|| std::env::var("USER").ok())
        .map(|b| b.trim().to_owned())
        .unwrap_or_default();
    crate::runtime()?.block_on(async {
        let ledger = crate::store::open(args.store.as_deref(), "gate console").await?;
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .map_err(|e| UsageError(format!("cannot listen on {}: {e}", args.listen)))?;
        let bound = listener.local_addr()?;
        let token = toolgate::ledger::new_owner_token();
        let hosts = bound.ip().is_loopback().then(|| loopback_hosts(bound.port()));
        if hosts.is_none() {
            eprintln!(
                "gate console: {bound} is not a loopback address: anyone who can reach it and has the URL can decide, over plain HTTP"
            );
        }
        let console = Arc::new(Console {
            ledger,
            store: args.store.unwrap_or_else(|| toolgate::runtime::DEFAULT_STORE.to_owned()),
            base: format!("/{token}"),
            by,
            hosts,
        });
        outln!("gate console: http://{bound}/{token}/");
        serve(listener, console).await;
        Ok(ExitCode::SUCCESS)
    })
}

/// The `Host` values that name this server on loopback.
fn loopback_hosts(port: u16) -> Vec<String> {
    ["127.0.0.1", "localhost", "[::1]"]
        .iter()
        .map(|h| format!("{h}:{port}"))
        .collect()
}

/// Serves connections until Ctrl-C.
async fn serve(listener: tokio::net::TcpListener, console: Arc<Console>) {
    let stop = tokio::signal::ctrl_c();
    tokio::pin!(stop);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = &mut stop => return,
        };
        let Ok((stream, _)) = accepted else { continue };
        let console = console.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let console = console.clone();
                async move { Ok::<_, Infallible>(console.respond(request).await) }
            });
            // A client that goes away mid-request is no concern of the page's.
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// Where a request goes, from its method and path alone.
#[derive(Debug, PartialEq, Eq)]
enum Route {
    Console,
    Report,
    Approve,
    Deny,
    Resolve,
    Reopen,
    /// A known path with the wrong method.
    MethodNotAllowed,
    /// No token, the wrong token, or a path the console does not serve.
    NotFound,
}

/// The route of `method` and `path` for a console whose token is `token`.
fn route(method: &Method, path: &str, token: &str) -> Route {
    let Some(rest) = path.strip_prefix('/').and_then(|p| p.split_once('/').or(Some((p, "")))) else {
        return Route::NotFound;
    };
    let (given, rest) = rest;
    if !same_token(given, token) {
        return Route::NotFound;
    }
    let (get, post) = match rest {
        "" => (Some(Route::Console), None),
        "report" => (Some(Route::Report), None),
        "approvals/approve" => (None, Some(Route::Approve)),
        "approvals/deny" => (None, Some(Route::Deny)),
        "intents/resolve" => (None, Some(Route::Resolve)),
        "tasks/reopen" => (None, Some(Route::Reopen)),
        _ => return Route::NotFound,
    };
    match (*method == Method::GET, *method == Method::POST, get, post) {
        (true, _, Some(route), _) | (_, true, _, Some(route)) => route,
        _ => Route::MethodNotAllowed,
    }
}

/// Compares the token in time independent of where the strings differ.
fn same_token(given: &str, token: &str) -> bool {
    given.len() == token.len() && given.bytes().zip(token.bytes()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

/// A response with the console's headers.
fn respond(status: StatusCode, csp: &str, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    if let Ok(csp) = HeaderValue::from_str(csp) {
        headers.insert(header::CONTENT_SECURITY_POLICY, csp);
    }
    response
}

fn plain(status: StatusCode, text: &str) -> Response<Full<Bytes>> {
    let mut response = respond(status, CONSOLE_CSP, text.to_owned());
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// The fields of a form, the last value of each name winning.
struct Form(Vec<(String, String)>);

impl Form {
    fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.trim())
            .filter(|v| !v.is_empty())
    }

    fn required(&self, name: &str) -> Result<&str, String> {
        self.get(name).ok_or_else(|| format!("the form has no `{name}`"))
    }
}

/// What an action did: its title and message, or why it did not.
type Done = Result<(&'static str, String), (StatusCode, String)>;

impl Console {
    async fn respond(&self, request: Request<Incoming>) -> Response<Full<Bytes>> {
        if let Some(hosts) = &self.hosts {
            let host = request.headers().get(header::HOST).and_then(|h| h.to_str().ok());
            if !host.is_some_and(|h| hosts.iter().any(|ok| ok == h)) {
                return plain(StatusCode::FORBIDDEN, "this console answers on loopback names only");
            }
        }
        let token = &self.base[1..];
        let route = route(request.method(), request.uri().path(), token);
        match route {
            Route::NotFound => plain(StatusCode::NOT_FOUND, "not found"),
            Route::MethodNotAllowed => plain(
                StatusCode::METHOD_NOT_ALLOWED,
                "the page is read with GET; decisions are POSTs from its forms",
            ),
            Route::Console => match self.console_page().await {
                Ok(page) => respond(StatusCode::OK, CONSOLE_CSP, page),
                Err(e) => plain(
                    StatusCode::SERVICE_UNAVAILABLE,
                    &format!("the store cannot be read: {e}"),
                ),
            },
            Route::Report => match self.ledger.list_decisions(&DecisionQuery::default()).await {
                Ok(records) => {
                    let report = DecisionReport::from_records(&records);
                    respond(
                        StatusCode::OK,
                        REPORT_CSP,
                        crate::html_report::render(&records, &report),
                    )
                }
                Err(e) => plain(
                    StatusCode::SERVICE_UNAVAILABLE,
                    &format!("the store cannot be read: {e}"),
                ),
            },
            Route::Approve | Route::Deny | Route::Resolve | Route::Reopen => {
                let form = match read_form(request).await {
                    Ok(form) => form,
                    Err(e) => return plain(StatusCode::BAD_REQUEST, &e),
                };
                let done = match route {
                    Route::Approve => self.decide(&form, true).await,
                    Route::Deny => self.decide(&form, false).await,
                    Route::Resolve => self.resolve(&form).await,
                    _ => self.reopen(&form).await,
                };
                match done {
                    Ok((title, message)) => {
                        respond(StatusCode::OK, CONSOLE_CSP, page::outcome(&self.base, title, &message))
                    }
                    Err((status, message)) => respond(
                        status,
                        CONSOLE_CSP,
                        page::outcome(&self.base, "Nothing was changed", &message),
                    ),
                }
            }
        }
    }

    async fn console_page(&self) -> Result<String, toolgate::ledger::LedgerError> {
        let now = self.ledger.now();
        let pending = self
            .ledger
            .list_approvals(&ApprovalQuery {
                status: Some(ApprovalStatus::Pending),
                limit: Some(LIST_LIMIT),
                ..ApprovalQuery::default()
            })
            .await?;
        let unresolved = self.ledger.list_unresolved(LIST_LIMIT).await?;
        let failed = self.ledger.list_failed_tasks(LIST_LIMIT).await?;
        let records = self.ledger.list_decisions(&DecisionQuery::default()).await?;
        let requests = self.ledger.list_approvals(&ApprovalQuery::default()).await?;
        let report = crate::report::render_text(
            &DecisionReport::from_records(&records),
            &ApprovalReport::from_records(&requests, now),
        );
        Ok(page::console(&page::Console {
            base: &self.base,
            store: &self.store,
            by: &self.by,
            now,
            pending: &pending,
            unresolved: &unresolved,
            failed: &failed,
            report: &report,
        }))
    }

    /// Who decides: the form's `by`, else the console's.
    fn decider(&self, form: &Form) -> Result<String, String> {
        form.get("by")
            .or(Some(self.by.as_str()).filter(|b| !b.is_empty()))
            .map(str::to_owned)
            .ok_or_else(|| "say who decides: the form's `by`".to_owned())
    }

    async fn decide(&self, form: &Form, approve: bool) -> Done {
        let bad = |e: String| (StatusCode::BAD_REQUEST, e);
        let id = form.required("id").map_err(bad)?.to_owned();
        let by = self.decider(form).map_err(bad)?;
        let (verdict, note) = if approve {
            (Verdict::Approve, form.get("note").map(str::to_owned))
        } else {
            let reason = form
                .required("reason")
                .map_err(|_| bad("a denial needs a reason".into()))?;
            (
                Verdict::Deny {
                    reason: reason.to_owned(),
                },
                None,
            )
        };
        let decision = ApprovalDecision { id, by, verdict, note };
        match self.ledger.decide_approval(&decision).await {
            Ok(record) if approve => Ok((
                "Approved",
                format!(
                    "{} (`{}` for {}) is approved by {}: it runs once, the next time its task asks.",
                    record.id, record.tool, record.user, decision.by
                ),
            )),
            Ok(record) => Ok((
                "Denied",
                format!(
                    "{} (`{}` for {}) is denied by {}: it never runs; the agent is told why.",
                    record.id, record.tool, record.user, decision.by
                ),
            )),
            Err(e) if e.is_invalid_transition() => Err((StatusCode::CONFLICT, e.to_string())),
            Err(e) if e.is_not_found() => Err((StatusCode::NOT_FOUND, e.to_string())),
            Err(e) if e.is_invalid_input() => Err(bad(e.to_string())),
            Err(e) => Err((StatusCode::SERVICE_UNAVAILABLE, e.to_string())),
        }
    }

    async fn resolve(&self, form: &Form) -> Done {
        let bad = |e: String| (StatusCode::BAD_REQUEST, e);
        let resolution = match form.required("outcome").map_err(bad)? {
            "succeeded" => Resolution::Succeeded,
            "failed" => Resolution::FailedPermanent,
            "not-executed" => Resolution::NotExecuted,
            other => return Err(bad(format!("unknown outcome `{other}`"))),
        };
        let request = ResolveRequest {
            key: form.required("key").map_err(bad)?.to_owned(),
            user: form.get("user").map(str::to_owned),
            resolution,
            note: Some(format!(
                "{} (gate console, {})",
                form.required("note").map_err(bad)?,
                self.decider(form).map_err(bad)?
            )),
            value: None,
        };
        match self.ledger.resolve(&request).await {
            Ok(record) => Ok((
                "Resolved",
                format!(
                    "{} (`{}` for {}) is resolved: the tasks that failed waiting for it run again.",
                    record.key, record.tool, record.user
                ),
            )),
            Err(e) if e.is_not_found() => Err((StatusCode::NOT_FOUND, e.to_string())),
            Err(e) if e.is_reconcile_conflict() || e.is_ambiguous() || e.is_invalid_transition() => {
                Err((StatusCode::CONFLICT, e.to_string()))
            }
            Err(e) if e.is_invalid_input() => Err(bad(e.to_string())),
            Err(e) => Err((StatusCode::SERVICE_UNAVAILABLE, e.to_string())),
        }
    }

    async fn reopen(&self, form: &Form) -> Done {
        let bad = |e: String| (StatusCode::BAD_REQUEST, e);
        let task = form.required("task").map_err(bad)?;
        let user = form.required("user").map_err(bad)?;
        match self.ledger.reopen_task(user, task).await {
            Ok(record) => Ok((
                "Reopened",
                format!(
                    "task {} of {} is reopened: its next call runs.",
                    record.task_id, record.user
                ),
            )),
            Err(e) if e.is_not_found() => Err((StatusCode::NOT_FOUND, e.to_string())),
            Err(e) => Err((StatusCode::SERVICE_UNAVAILABLE, e.to_string())),
        }
    }
}

/// The form a POST carries, `application/x-www-form-urlencoded`, at most
/// [`MAX_FORM_BYTES`].
async fn read_form(request: Request<Incoming>) -> Result<Form, String> {
    let kind = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !kind.starts_with("application/x-www-form-urlencoded") {
        return Err("a decision is a form post (application/x-www-form-urlencoded)".into());
    }
    let body = Limited::new(request.into_body(), MAX_FORM_BYTES)
        .collect()
        .await
        .map_err(|e| format!("the form could not be read: {e}"))?
        .to_bytes();
    Ok(Form(form_urlencoded::parse(&body).into_owned().collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_route_needs_the_token_and_decisions_need_a_post() {
        let token = "0123456789abcdef0123456789abcdef";
        let other = "0123456789abcdef0123456789abcdee";
        let table = [
            (Method::GET, format!("/{token}/"), Route::Console),
            (Method::GET, format!("/{token}"), Route::Console),
            (Method::GET, format!("/{token}/report"), Route::Report),
            (Method::POST, format!("/{token}/approvals/approve"), Route::Approve),
            (Method::POST, format!("/{token}/approvals/deny"), Route::Deny),
            (Method::POST, format!("/{token}/intents/resolve"), Route::Resolve),
            (Method::POST, format!("/{token}/tasks/reopen"), Route::Reopen),
            (
                Method::GET,
                format!("/{token}/approvals/approve"),
                Route::MethodNotAllowed,
            ),
            (Method::POST, format!("/{token}/"), Route::MethodNotAllowed),
            (
                Method::DELETE,
                format!("/{token}/tasks/reopen"),
                Route::MethodNotAllowed,
            ),
            (Method::POST, "/approvals/approve".to_owned(), Route::NotFound),
            (Method::POST, format!("/{other}/approvals/approve"), Route::NotFound),
            (Method::GET, format!("/{other}/"), Route::NotFound),
            (Method::GET, "/".to_owned(), Route::NotFound),
            (Method::GET, format!("/{token}x/"), Route::NotFound),
            (Method::GET, format!("/{token}/elsewhere"), Route::NotFound),
        ];
        for (method, path, expected) in table {
            assert_eq!(route(&method, &path, token), expected, "{method} {path}");
        }
    }

    #[test]
    fn a_form_reads_the_last_value_and_takes_blank_for_missing() {
        let form = Form(
            form_urlencoded::parse(b"id=a&id=b&note=+&by=alice%20b")
                .into_owned()
                .collect(),
        );
        assert_eq!(form.get("id"), Some("b"));
        assert_eq!(form.get("note"), None);
        assert_eq!(form.get("by"), Some("alice b"));
        assert_eq!(form.required("reason").unwrap_err(), "the form has no `reason`");
    }
}
