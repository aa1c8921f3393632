//! A decision's commit in one round trip.
//!
//! A side effect's outcome is three writes that land together or not at all
//! (the intent's finish, the task's new state, the decision record), and
//! none of them reads before it writes. In a transaction that is up to five
//! round trips (`BEGIN`, the writes, `COMMIT`) for one commit: trips over
//! the socket to PostgreSQL, hops to the thread that holds an SQLite
//! connection. The same writes, with the same conditions, go as one:
//!
//! - **PostgreSQL** runs data-modifying common table expressions as one
//!   statement, atomic on its own. Each write is gated on the one before it
//!   (`EXISTS (SELECT 1 FROM …)`), and when the last gated write wrote
//!   nothing, because the intent's lease was lost or the task was changed by
//!   another worker, the statement raises SQLSTATE `GT001` through
//!   `gate_not_applied()` (schema migration 4). The error rolls the whole
//!   statement back.
//! - **SQLite** runs several statements sent as one batch on one
//!   connection: `BEGIN IMMEDIATE`, the writes (each gated on `changes() =
//!   1` of the one before), a check that fails the batch (`json()` of text
//!   that is not JSON) when the last gated write wrote nothing, the decision
//!   record, `COMMIT`. A batch that stops is rolled back on its connection.
//!
//! Either every write lands or none does. When none did, the caller runs the
//! transaction, which tells which condition failed (or recognises its own
//! earlier write), as before.

/// The function a one-statement commit raises through (migration 4,
/// PostgreSQL only): SQLSTATE `GT001`, a condition did not hold and nothing
/// was written.
pub(crate) const NOT_APPLIED_FUNCTION: &str = "CREATE OR REPLACE FUNCTION gate_not_applied() RETURNS BIGINT \
LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'a condition of the commit did not hold; nothing was written' \
USING ERRCODE = 'GT001'; END $$";

/// Which store's form a statement takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Form {
    /// One statement of gated data-modifying CTEs.
    Postgres,
    /// A batch in its own transaction, each write gated on `changes()`.
    Sqlite,
}

/// How a commit writes the task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TaskWrite {
    /// The commit does not write the task.
    Untouched,
    /// The task was never stored: inserted unless another worker did first.
    Insert,
    /// Updated if it is still at the revision read.
    Update,
}

/// Which writes a commit makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    /// It finishes an intent.
    pub intent: bool,
    /// How it writes the task.
    pub task: TaskWrite,
    /// It appends a decision record.
    pub decision: bool,
}

impl Shape {
    const TASK_WRITES: [TaskWrite; 3] = [TaskWrite::Untouched, TaskWrite::Insert, TaskWrite::Update];

    fn index(self) -> usize {
        let task = Self::TASK_WRITES.iter().position(|t| *t == self.task).unwrap_or(0);
        usize::from(self.intent) * 6 + task * 2 + usize::from(self.decision)
    }

    fn all() -> impl Iterator<Item = Shape> {
        [false, true].into_iter().flat_map(|intent| {
            Self::TASK_WRITES
                .into_iter()
                .flat_map(move |task| [false, true].map(|decision| Shape { intent, task, decision }))
        })
    }
}

/// The statement of every shape worth one: two writes or more, one of them
/// conditional (a decision record alone is one statement already).
#[derive(Debug)]
pub(crate) struct AtOnceStatements {
    by_shape: Vec<Option<String>>,
    form: Form,
}

impl AtOnceStatements {
    /// Renders the statements in `form` from the ledger's own writes:
    /// `finish_update` (the finish, `$1`–`$11`, without `RETURNING`),
    /// `update_task` (`$1`–`$13`, the revision read last), and the task and
    /// decision columns in bind order. Placeholders are PostgreSQL's `$N`,
    /// numbered across the whole statement; SQLite reads `?N` as the N-th
    /// value of a batch's one list, so its form differs from this one only
    /// in their spelling ([`map`](Self::map)).
    pub(crate) fn new(form: Form, writes: &Writes<'_>) -> Self {
        let mut by_shape = vec![None; 12];
        for shape in Shape::all() {
            by_shape[shape.index()] = match form {
                Form::Postgres => render_postgres(shape, writes),
                Form::Sqlite => render_sqlite(shape, writes),
            };
        }
        AtOnceStatements { by_shape, form }
    }

    /// The same statements, each rewritten by `f`.
    pub(crate) fn map(self, f: impl Fn(&str) -> String) -> Self {
        AtOnceStatements {
            by_shape: self.by_shape.into_iter().map(|s| s.map(|s| f(&s))).collect(),
            form: self.form,
        }
    }

    /// Whether a statement opens a transaction of its own, which a batch that
    /// stopped leaves open on its connection.
    pub(crate) fn opens_transaction(&self) -> bool {
        self.form == Form::Sqlite
    }

    /// The statement for `shape`, if it has one.
    pub(crate) fn get(&self, shape: Shape) -> Option<&str> {
        self.by_shape[shape.index()].as_deref()
    }
}

/// How many parameters `sql` numbers (`$1` to `$N`).
fn parameters(sql: &str) -> usize {
    let mut max = 0;
    let mut rest = sql;
    while let Some(at) = rest.find('$') {
        rest = &rest[at + 1..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if let Ok(n) = rest[..digits].parse::<usize>() {
            max = max.max(n);
        }
        rest = &rest[digits..];
    }
    max
}

/// `sql` with every `$N` renumbered `$(N + offset)`, so that statements
/// written on their own can share one parameter list.
fn shift(sql: &str, offset: usize) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut rest = sql;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..=at]);
        rest = &rest[at + 1..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        match rest[..digits].parse::<usize>() {
            Ok(n) => out.push_str(&(n + offset).to_string()),
            Err(_) => out.push_str(&rest[..digits]),
        }
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out
}

/// `$first, …` for `count` parameters.
fn placeholders(first: usize, count: usize) -> String {
    (first..first + count)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The ledger's writes a statement is made of (see [`AtOnceStatements::new`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Writes<'a> {
    /// The finish of an intent, `$1`–`$11`, without `RETURNING`.
    pub finish_update: &'a str,
    /// The compare-and-set task update, `$1`–`$13`.
    pub update_task: &'a str,
    /// The task columns in bind order.
    pub task_cols: &'a str,
    /// The decision columns in bind order.
    pub decision_cols: &'a str,
}

fn render_postgres(shape: Shape, writes: &Writes<'_>) -> Option<String> {
    let Writes {
        finish_update,
        update_task,
        task_cols,
        decision_cols,
    } = *writes;
    if !shape.intent && shape.task == TaskWrite::Untouched {
        return None;
    }
    let mut parts = Vec::new();
    let mut used = 0;
    // The write before, whose rows gate the next one.
    let mut gate: Option<&str> = None;
    if shape.intent {
        parts.push(format!("finished AS ({finish_update} RETURNING 1)"));
        used += parameters(finish_update);
        gate = Some("finished");
    }
    let exists = |gate: Option<&str>| gate.map(|g| format!("EXISTS (SELECT 1 FROM {g})"));
    match shape.task {
        TaskWrite::Untouched => {}
        TaskWrite::Update => {
            let condition = exists(gate).map(|e| format!(" AND {e}")).unwrap_or_default();
            parts.push(format!("task AS ({}{condition} RETURNING 1)", shift(update_task, used)));
            used += parameters(update_task);
            gate = Some("task");
        }
        TaskWrite::Insert => {
            let count = task_cols.split(',').count();
            let condition = exists(gate).map(|e| format!(" WHERE {e}")).unwrap_or_default();
            parts.push(format!(
                "task AS (INSERT INTO gate_tasks ({task_cols}) SELECT {}{condition} \
                 ON CONFLICT (user_id, task_id) DO NOTHING RETURNING 1)",
                placeholders(used + 1, count)
            ));
            used += count;
            gate = Some("task");
        }
    }
    let last = gate?;
    if shape.decision {
        let count = decision_cols.split(',').count();
        parts.push(format!(
            "decision AS (INSERT INTO gate_decisions ({decision_cols}) SELECT {} WHERE EXISTS (SELECT 1 FROM {last}) \
             ON CONFLICT (decision_id) DO NOTHING)",
            placeholders(used + 1, count)
        ));
    }
    Some(format!(
        "WITH {} SELECT CASE WHEN EXISTS (SELECT 1 FROM {last}) THEN 1 ELSE gate_not_applied() END",
        parts.join(", ")
    ))
}

/// What the SQLite batch's check evaluates when the write before it wrote
/// nothing: text that is not JSON, so `json()` fails the batch. It depends
/// on `changes()`, so SQLite cannot evaluate it ahead as a constant.
const SQLITE_NOT_APPLIED: &str = "json('gate: a condition of the commit did not hold, ' || changes())";

fn render_sqlite(shape: Shape, writes: &Writes<'_>) -> Option<String> {
    if !shape.intent && shape.task == TaskWrite::Untouched {
        return None;
    }
    let mut batch = vec!["BEGIN IMMEDIATE".to_owned()];
    let mut used = 0;
    if shape.intent {
        batch.push(writes.finish_update.to_owned());
        used += parameters(writes.finish_update);
    }
    match shape.task {
        TaskWrite::Untouched => {}
        TaskWrite::Update => {
            let condition = if shape.intent { " AND changes() = 1" } else { "" };
            batch.push(format!("{}{condition}", shift(writes.update_task, used)));
            used += parameters(writes.update_task);
        }
        TaskWrite::Insert => {
            let count = writes.task_cols.split(',').count();
            // An upsert after a SELECT needs a WHERE clause to parse.
            let condition = if shape.intent { "changes() = 1" } else { "1" };
            batch.push(format!(
                "INSERT INTO gate_tasks ({}) SELECT {} WHERE {condition} ON CONFLICT (user_id, task_id) DO NOTHING",
                writes.task_cols,
                placeholders(used + 1, count)
            ));
            used += count;
        }
    }
    batch.push(format!(
        "SELECT CASE WHEN changes() = 1 THEN 1 ELSE {SQLITE_NOT_APPLIED} END"
    ));
    if shape.decision {
        let count = writes.decision_cols.split(',').count();
        batch.push(format!(
            "INSERT INTO gate_decisions ({}) VALUES ({}) ON CONFLICT (decision_id) DO NOTHING",
            writes.decision_cols,
            placeholders(used + 1, count)
        ));
    }
    batch.push("COMMIT".to_owned());
    Some(batch.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    const WRITES: Writes<'static> = Writes {
        finish_update: "UPDATE gate_intents SET a = $5 WHERE k = $1 AND o = $11",
        update_task: "UPDATE gate_tasks SET r = $3 WHERE k = $1 AND revision = $13",
        task_cols: "user_id, task_id",
        decision_cols: "decision_id, at, task_id",
    };

    #[test]
    fn parameters_are_renumbered_to_follow_the_ones_before() {
        assert_eq!(
            shift("a = $1 AND b = $12 AND c = $1", 11),
            "a = $12 AND b = $23 AND c = $12"
        );
        assert_eq!(shift("no parameters", 5), "no parameters");
        assert_eq!(parameters("x = $3 AND y = $11 AND z = $5"), 11);
    }

    #[test]
    fn every_write_is_gated_on_the_one_before_and_the_last_decides() {
        let statements = AtOnceStatements::new(Form::Postgres, &WRITES);
        let all = Shape {
            intent: true,
            task: TaskWrite::Update,
            decision: true,
        };
        assert_eq!(
            statements.get(all).unwrap(),
            "WITH finished AS (UPDATE gate_intents SET a = $5 WHERE k = $1 AND o = $11 RETURNING 1), \
             task AS (UPDATE gate_tasks SET r = $14 WHERE k = $12 AND revision = $24 AND EXISTS (SELECT 1 FROM finished) RETURNING 1), \
             decision AS (INSERT INTO gate_decisions (decision_id, at, task_id) SELECT $25, $26, $27 \
             WHERE EXISTS (SELECT 1 FROM task) ON CONFLICT (decision_id) DO NOTHING) \
             SELECT CASE WHEN EXISTS (SELECT 1 FROM task) THEN 1 ELSE gate_not_applied() END"
        );
        let new_task = Shape {
            intent: false,
            task: TaskWrite::Insert,
            decision: true,
        };
        assert_eq!(
            statements.get(new_task).unwrap(),
            "WITH task AS (INSERT INTO gate_tasks (user_id, task_id) SELECT $1, $2 \
             ON CONFLICT (user_id, task_id) DO NOTHING RETURNING 1), \
             decision AS (INSERT INTO gate_decisions (decision_id, at, task_id) SELECT $3, $4, $5 \
             WHERE EXISTS (SELECT 1 FROM task) ON CONFLICT (decision_id) DO NOTHING) \
             SELECT CASE WHEN EXISTS (SELECT 1 FROM task) THEN 1 ELSE gate_not_applied() END"
        );
        let record_alone = Shape {
            intent: false,
            task: TaskWrite::Untouched,
            decision: true,
        };
        assert_eq!(statements.get(record_alone), None);
    }

    #[test]
    fn the_sqlite_batch_gates_on_changes_and_checks_before_the_record() {
        let statements = AtOnceStatements::new(Form::Sqlite, &WRITES);
        let all = Shape {
            intent: true,
            task: TaskWrite::Update,
            decision: true,
        };
        assert_eq!(
            statements.get(all).unwrap(),
            "BEGIN IMMEDIATE; UPDATE gate_intents SET a = $5 WHERE k = $1 AND o = $11; \
             UPDATE gate_tasks SET r = $14 WHERE k = $12 AND revision = $24 AND changes() = 1; \
             SELECT CASE WHEN changes() = 1 THEN 1 ELSE json('gate: a condition of the commit did not hold, ' || changes()) END; \
             INSERT INTO gate_decisions (decision_id, at, task_id) VALUES ($25, $26, $27) ON CONFLICT (decision_id) DO NOTHING; \
             COMMIT"
        );
        let new_task = Shape {
            intent: false,
            task: TaskWrite::Insert,
            decision: false,
        };
        assert_eq!(
            statements.get(new_task).unwrap(),
            "BEGIN IMMEDIATE; INSERT INTO gate_tasks (user_id, task_id) SELECT $1, $2 WHERE 1 \
             ON CONFLICT (user_id, task_id) DO NOTHING; \
             SELECT CASE WHEN changes() = 1 THEN 1 ELSE json('gate: a condition of the commit did not hold, ' || changes()) END; \
             COMMIT"
        );
        assert!(statements.opens_transaction());
        assert!(!AtOnceStatements::new(Form::Postgres, &WRITES).opens_transaction());
    }
}
