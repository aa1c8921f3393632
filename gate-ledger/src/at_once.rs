//! A decision's commit as one statement, on PostgreSQL.
//!
//! A side effect's outcome is three writes that land together or not at all
//! (the intent's finish, the task's new state, the decision record), and
//! none of them reads before it writes. In a transaction that is five round
//! trips (`BEGIN`, the three writes, `COMMIT`) for one commit. PostgreSQL
//! runs data-modifying common table expressions as one statement, atomic on
//! its own, so the same writes, with the same conditions, are one round
//! trip. Each write is gated on the one before it (`EXISTS (SELECT 1 FROM
//! …)`), and when the last gated write wrote nothing, because the intent's
//! lease was lost or the task was changed by another worker, the statement
//! raises [`NOT_APPLIED`] through `gate_not_applied()` (schema migration 4):
//! an error rolls the whole statement back, so either every write lands or
//! none does. The caller then runs the transaction, which tells which
//! condition failed (or recognises its own earlier write), as before.
//!
//! SQLite has no data-modifying CTEs, and its commit is an fsync on this
//! process's connection thread, not round trips over a socket; it keeps the
//! transaction.

/// The SQLSTATE `gate_not_applied()` raises: a condition of a one-statement
/// commit did not hold, and nothing was written.
pub(crate) const NOT_APPLIED: &str = "GT001";

/// The function a one-statement commit raises through (migration 4,
/// PostgreSQL only).
pub(crate) const NOT_APPLIED_FUNCTION: &str = "CREATE OR REPLACE FUNCTION gate_not_applied() RETURNS BIGINT \
LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'a condition of the commit did not hold; nothing was written' \
USING ERRCODE = 'GT001'; END $$";

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
}

impl AtOnceStatements {
    /// Renders the statements from the ledger's own writes: `finish_update`
    /// (the finish, `$1`–`$11`, without `RETURNING`), `update_task` (`$1`–`$13`,
    /// the revision read last), and the task and decision columns in bind
    /// order.
    pub(crate) fn new(finish_update: &str, update_task: &str, task_cols: &str, decision_cols: &str) -> Self {
        let mut by_shape = vec![None; 12];
        for shape in Shape::all() {
            by_shape[shape.index()] = render(shape, finish_update, update_task, task_cols, decision_cols);
        }
        AtOnceStatements { by_shape }
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

fn render(
    shape: Shape,
    finish_update: &str,
    update_task: &str,
    task_cols: &str,
    decision_cols: &str,
) -> Option<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
        let statements = AtOnceStatements::new(
            "UPDATE gate_intents SET a = $5 WHERE k = $1 AND o = $11",
            "UPDATE gate_tasks SET r = $3 WHERE k = $1 AND revision = $13",
            "user_id, task_id",
            "decision_id, at, task_id",
        );
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
}
