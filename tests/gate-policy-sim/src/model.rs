//! The simulated model: the calls it plans for a task, how each call is
//! written (right, wrong arguments or a wrong tool name) and how it reacts to
//! an error text, as coin flips with the probabilities of [`super::Params`].
//! Only this is simulated on gate's side; everything else runs for real.

use toolgate::budget::estimate_tokens;

use super::params::{Mix, Params};
use super::rng::{STREAM_FAULTS, SplitMix64};
use super::world::{Fault, StepKind, WRONG_CHARGE_NAMES, WRONG_LOOKUP_NAMES};

/// The call the model makes next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Next {
    /// The step's tool with well-formed arguments (`variant` changes the lookup's email).
    Valid(u32),
    /// The step's tool with a wrong argument type (the `n`th such mistake).
    WrongType(u32),
    /// A tool name that does not exist (the `n`th such mistake).
    WrongName(u32),
    /// The discovery tool, after gate's correction named it.
    Discover,
    /// The widened search, after gate's correction named it.
    Widen,
}

/// One call as the model writes it.
pub(super) struct Call {
    pub(super) name: String,
    pub(super) args: String,
}

impl Call {
    pub(super) fn tokens(&self) -> u64 {
        estimate_tokens(&self.name) + estimate_tokens(&self.args)
    }
}

pub(super) fn render(task: u64, step: u32, kind: StepKind, next: Next) -> Call {
    let (name, args) = match (kind, next) {
        (_, Next::Discover) => ("list_customers".to_owned(), "{}".to_owned()),
        (_, Next::Widen) => ("search_customers".to_owned(), r#"{"domain":"acme.com"}"#.to_owned()),
        (StepKind::Lookup, Next::Valid(v)) => (
            "lookup_customer".to_owned(),
            format!(r#"{{"email":"c{task}.s{step}.v{v}@acme.io"}}"#),
        ),
        (StepKind::Lookup, Next::WrongType(n)) => (
            "lookup_customer".to_owned(),
            format!(r#"{{"email":{}}}"#, 40_001 + 100 * step + n),
        ),
        (StepKind::Lookup, Next::WrongName(n)) => (
            WRONG_LOOKUP_NAMES[n as usize % WRONG_LOOKUP_NAMES.len()].to_owned(),
            format!(r#"{{"email":"c{task}.s{step}@acme.io"}}"#),
        ),
        (StepKind::Charge, Next::Valid(_)) => (
            "charge".to_owned(),
            format!(
                r#"{{"customer_id":"cus_{task:06}","amount_cents":{}}}"#,
                1_000 + task % 9_000
            ),
        ),
        (StepKind::Charge, Next::WrongType(n)) => (
            "charge".to_owned(),
            format!(r#"{{"customer_id":"cus_{task:06}","amount_cents":"{}.50"}}"#, 10 + n),
        ),
        (StepKind::Charge, Next::WrongName(n)) => (
            WRONG_CHARGE_NAMES[n as usize % WRONG_CHARGE_NAMES.len()].to_owned(),
            format!(
                r#"{{"customer_id":"cus_{task:06}","amount_cents":{}}}"#,
                1_000 + task % 9_000
            ),
        ),
    };
    Call { name, args }
}

/// The model's next call after a structural error: fixed with probability
/// `p`, otherwise the same kind of mistake with a different value.
pub(super) fn react_structural(rng: &mut SplitMix64, next: Next, variant: u32, p: f64) -> Next {
    match next {
        Next::WrongType(n) if !rng.chance(p) => Next::WrongType(n + 1),
        Next::WrongName(n) if !rng.chance(p) => Next::WrongName(n + 1),
        Next::WrongType(_) | Next::WrongName(_) => Next::Valid(variant),
        other => other,
    }
}

/// One step of a task's plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Planned {
    pub(super) kind: StepKind,
    pub(super) fault: Fault,
    /// Which wrong tool name the model reaches for first, if it hallucinates
    /// one: drawn per step, so a task may repeat an earlier hallucination.
    pub(super) slip: u32,
}

/// The step plan of one task: `steps - 1` lookups, then the charge, each
/// with its fault.
pub(super) fn plan(params: &Params, mix: Mix, task: u64) -> Vec<Planned> {
    let mut rng = SplitMix64::stream(params.seed, mix, task, STREAM_FAULTS);
    let r = mix.rates();
    (0..params.steps)
        .map(|i| {
            let kind = if i + 1 == params.steps {
                StepKind::Charge
            } else {
                StepKind::Lookup
            };
            let u = rng.unit();
            let side = rng.unit();
            let slip = (rng.next_u64() % WRONG_LOOKUP_NAMES.len() as u64) as u32;
            let (effect_fault, effect_rate) = match kind {
                StepKind::Lookup => (
                    if side < 0.5 { Fault::Forbidden } else { Fault::Empty },
                    r.ambiguous_read,
                ),
                StepKind::Charge => (Fault::Timeout, r.write_timeout),
            };
            let fault = if u < r.invalid_args {
                Fault::InvalidArgs
            } else if u < r.invalid_args + r.unknown_tool {
                Fault::UnknownTool
            } else if u < r.invalid_args + r.unknown_tool + effect_rate {
                effect_fault
            } else {
                Fault::None
            };
            Planned { kind, fault, slip }
        })
        .collect()
}

pub(super) fn first_call(step: Planned) -> Next {
    match step.fault {
        Fault::InvalidArgs => Next::WrongType(0),
        Fault::UnknownTool => Next::WrongName(step.slip),
        _ => Next::Valid(0),
    }
}
