//! gate's budgets: retries per task, added latency, and repair tokens per user over a rolling window, plus the cost model of context replay.
#![forbid(unsafe_code)]
