//! The console's pages as HTML text, from what the store holds.
//!
//! Every string from the store (a tool's arguments, an error a tool
//! returned, a reason a person typed) passes through [`esc`]: the pages hold
//! no markup but gate's own, and no script at all, so nothing a model or a
//! tool wrote can act in the operator's browser. Each function takes what
//! it draws as arguments and returns the page; the server
//! ([`super`]) reads the store and sends it.

use toolgate::ledger::{ApprovalRecord, LedgerRecord, TaskRecord, Timestamp};

use crate::html_report::esc;

/// What the console page shows, as read from the store.
pub(super) struct Console<'a> {
    /// The console's own path prefix (`/TOKEN`), for the forms.
    pub base: &'a str,
    /// The store, as named on the command line.
    pub store: &'a str,
    /// Who the forms decide as, unless changed in the form (empty: the
    /// form asks).
    pub by: &'a str,
    /// The time the page was drawn, in the store's clock.
    pub now: Timestamp,
    /// The pending approval requests, oldest first.
    pub pending: &'a [ApprovalRecord],
    /// The intents whose outcome is unknown.
    pub unresolved: &'a [LedgerRecord],
    /// The failed tasks.
    pub failed: &'a [TaskRecord],
    /// The decision report, as `gate report` prints it.
    pub report: &'a str,
}

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:1.5rem;color:#1b1b1b}\
h1{font-size:1.3rem}h2{font-size:1.1rem;margin-top:2rem}\
table{border-collapse:collapse;width:100%}td,th{border-top:1px solid #ddd;padding:.4rem;vertical-align:top;text-align:left}\
pre{margin:0;white-space:pre-wrap;word-break:break-all;background:#f6f6f6;padding:.3rem}\
form{margin:.2rem 0}input[type=text]{width:12rem}.muted{color:#666}.empty{color:#666;font-style:italic}";

/// The page around `body`, titled `title`.
fn document(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"referrer\" content=\"no-referrer\"><title>{}</title><style>{STYLE}</style></head>\
         <body>{body}</body></html>\n",
        esc(title)
    )
}

/// `3 min ago`, `2 h 5 min ago`: how long ago `then` was at `now`.
fn age(then: Timestamp, now: Timestamp) -> String {
    let secs = (now.as_millis() - then.as_millis()).max(0) / 1000;
    match secs {
        s if s < 60 => format!("{s} s ago"),
        s if s < 3600 => format!("{} min ago", s / 60),
        s if s < 86_400 => format!("{} h {} min ago", s / 3600, s % 3600 / 60),
        s => format!("{} d {} h ago", s / 86_400, s % 86_400 / 3600),
    }
}

/// A hidden form field.
fn hidden(name: &str, value: &str) -> String {
    format!("<input type=\"hidden\" name=\"{name}\" value=\"{}\">", esc(value))
}

fn by_field(by: &str) -> String {
    format!(
        "<label>by <input type=\"text\" name=\"by\" value=\"{}\" required></label>",
        esc(by)
    )
}

fn approvals(c: &Console<'_>) -> String {
    if c.pending.is_empty() {
        return "<p class=\"empty\">No call waits for approval.</p>".to_owned();
    }
    let mut rows = String::new();
    for r in c.pending {
        let id = esc(&r.id);
        rows += &format!(
            "<tr id=\"approval-{id}\"><td><code>{}</code></td><td><pre class=\"arguments\">{}</pre></td>\
             <td class=\"reason\">{}</td><td>user <b>{}</b><br>task <code>{}</code><br>\
             <span class=\"muted\">{} · requested {}, expires {}</span></td><td>\
             <form method=\"post\" action=\"{base}/approvals/approve\" data-action=\"approve\">{}{}\
             <label>note <input type=\"text\" name=\"note\"></label> <button>Approve</button></form>\
             <form method=\"post\" action=\"{base}/approvals/deny\" data-action=\"deny\">{}{}\
             <label>reason <input type=\"text\" name=\"reason\" required></label> <button>Deny</button></form>\
             </td></tr>",
            esc(&r.tool),
            esc(&r.arguments_pretty()),
            esc(&r.reason),
            esc(&r.user),
            esc(&r.task_id),
            id,
            age(r.requested_at, c.now),
            esc(&r.expires_at.utc()),
            hidden("id", &r.id),
            by_field(c.by),
            hidden("id", &r.id),
            by_field(c.by),
            base = c.base,
        );
    }
    format!(
        "<table><thead><tr><th>tool</th><th>arguments, as they will run</th><th>why a person is asked</th>\
         <th>for</th><th>decide</th></tr></thead><tbody>{rows}</tbody></table>"
    )
}

fn unresolved(c: &Console<'_>) -> String {
    if c.unresolved.is_empty() {
        return "<p class=\"empty\">No intent's outcome is unknown.</p>".to_owned();
    }
    let mut rows = String::new();
    for r in c.unresolved {
        rows += &format!(
            "<tr id=\"intent-{}\"><td><code>{}</code></td><td><code>{}</code></td><td>user <b>{}</b><br>task <code>{}</code></td>\
             <td><pre>{}</pre></td><td>\
             <form method=\"post\" action=\"{base}/intents/resolve\" data-action=\"resolve\">{}{}\
             <label>outcome <select name=\"outcome\"><option value=\"succeeded\">it happened (succeeded)</option>\
             <option value=\"failed\">it failed</option><option value=\"not-executed\">it never happened</option></select></label>\
             <label>note <input type=\"text\" name=\"note\" required></label> <button>Resolve</button></form></td></tr>",
            esc(&r.key),
            esc(&r.key),
            esc(&r.tool),
            esc(&r.user),
            esc(&r.task_id),
            esc(r.error.as_deref().unwrap_or("")),
            hidden("key", &r.key),
            hidden("user", &r.user),
            base = c.base,
        );
    }
    format!(
        "<table><thead><tr><th>intent key</th><th>tool</th><th>for</th><th>what the tool said</th><th>resolve</th>\
         </tr></thead><tbody>{rows}</tbody></table>"
    )
}

fn failed(c: &Console<'_>) -> String {
    if c.failed.is_empty() {
        return "<p class=\"empty\">No task has failed.</p>".to_owned();
    }
    let mut rows = String::new();
    for t in c.failed {
        let (reason, tool, at) = match &t.failure {
            Some(f) => (f.reason.to_string(), f.tool.clone(), age(f.at, c.now)),
            None => ("—".to_owned(), "—".to_owned(), age(t.updated_at, c.now)),
        };
        rows += &format!(
            "<tr id=\"task-{}\"><td><code>{}</code></td><td><b>{}</b></td><td>{}</td><td><code>{}</code></td><td>{at}</td><td>\
             <form method=\"post\" action=\"{base}/tasks/reopen\" data-action=\"reopen\">{}{}<button>Reopen</button></form>\
             </td></tr>",
            esc(&t.task_id),
            esc(&t.task_id),
            esc(&t.user),
            esc(&reason),
            esc(&tool),
            hidden("task", &t.task_id),
            hidden("user", &t.user),
            base = c.base,
        );
    }
    format!(
        "<table><thead><tr><th>task</th><th>user</th><th>reason</th><th>tool</th><th>failed</th><th></th></tr></thead>\
         <tbody>{rows}</tbody></table>\
         <p class=\"muted\">A task that failed waiting for an unknown outcome reopens when its intent is resolved; \
         reopen one by hand when it should run again without that.</p>"
    )
}

/// The console: pending approvals, the reconciliation queue, the report.
pub(super) fn console(c: &Console<'_>) -> String {
    let body = format!(
        "<h1>gate console</h1><p class=\"muted\">store <code>{}</code> · deciding as <b>{}</b> · {}</p>\
         <h2 id=\"approvals\">Waiting for approval ({})</h2>{}\
         <h2 id=\"unresolved\">Outcome unknown ({})</h2>{}\
         <h2 id=\"failed\">Failed tasks ({})</h2>{}\
         <h2 id=\"report\">Decisions</h2><pre>{}</pre><p><a href=\"{}/report\">The decision report with charts</a></p>",
        esc(c.store),
        if c.by.is_empty() {
            "whoever each form names".to_owned()
        } else {
            esc(c.by)
        },
        esc(&c.now.utc()),
        c.pending.len(),
        approvals(c),
        c.unresolved.len(),
        unresolved(c),
        c.failed.len(),
        failed(c),
        esc(c.report),
        c.base,
    );
    document("gate console", &body)
}

/// The page after an action: what happened, and the way back.
pub(super) fn outcome(base: &str, title: &str, message: &str) -> String {
    let body = format!(
        "<h1>{}</h1><p id=\"outcome\">{}</p><p><a href=\"{base}/\">Back to the console</a></p>",
        esc(title),
        esc(message)
    );
    document(title, &body)
}

#[cfg(test)]
mod tests {
    use toolgate::ledger::ApprovalStatus;

    use super::*;

    fn request(arguments: &str) -> ApprovalRecord {
        ApprovalRecord {
            id: "apr-1".into(),
            user: "u1".into(),
            task_id: "t1".into(),
            call_id: "c1".into(),
            tool: "send_email".into(),
            arguments: arguments.into(),
            arguments_sha256: "00".into(),
            intent_key: "k".into(),
            reason: "every call".into(),
            requested_at: Timestamp::from_millis(0),
            expires_at: Timestamp::from_millis(86_400_000),
            status: ApprovalStatus::Pending,
            decided_by: None,
            decided_at: None,
            denial_reason: None,
            note: None,
        }
    }

    #[test]
    fn arguments_a_model_wrote_are_shown_as_text_never_as_markup() {
        let hostile = request(r#"{"body":"<script>alert(1)</script><img src=x onerror=alert(2)>"}"#);
        let page = console(&Console {
            base: "/t",
            store: "sqlite:gate.db",
            by: "alice\"><b>",
            now: Timestamp::from_millis(125_000),
            pending: &[hostile],
            unresolved: &[],
            failed: &[],
            report: "0 decisions",
        });
        assert!(!page.contains("<script"), "{page}");
        assert!(!page.contains("<img"), "{page}");
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{page}");
        assert!(page.contains("value=\"alice&quot;&gt;&lt;b&gt;\""), "{page}");
        assert!(page.contains("requested 2 min ago"), "{page}");
    }

    #[test]
    fn ages_read_as_a_person_says_them() {
        let at = |s: i64| Timestamp::from_millis(s * 1000);
        let table = [
            (0, "0 s ago"),
            (59, "59 s ago"),
            (60, "1 min ago"),
            (3599, "59 min ago"),
            (3600, "1 h 0 min ago"),
            (7500, "2 h 5 min ago"),
            (90_000, "1 d 1 h ago"),
        ];
        for (secs, expected) in table {
            assert_eq!(age(at(0), at(secs)), expected, "{secs} s");
        }
        assert_eq!(age(at(10), at(0)), "0 s ago", "a clock that went back");
    }
}
