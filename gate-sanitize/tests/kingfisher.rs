//! Kingfisher's own examples, rule by rule: every example a Kingfisher rule
//! the sanitizer runs lists must be found under that rule's kind, with
//! every secret its pattern captures gone from the text, and every negative
//! example must not be reported as that kind. The expected columns are
//! Kingfisher's (`data/kingfisher/rules.json`, converted from the pinned
//! commit by `data/kingfisher/vendor.py`), not this crate's; how each rule
//! is checked is in `support/rule_examples.rs`. Which Kingfisher rules run
//! at all, and why the others do not, is in `build.rs`.

#[path = "support/one_kind.rs"]
mod one_kind;
#[path = "support/rule_examples.rs"]
mod rule_examples;

/// Examples on which gate deliberately disagrees with Kingfisher (see
/// [`rule_examples::RuleSet::differences`]).
const DIFFERENCES: &[(&str, &str, &str)] = &[
    (
        "kingfisher.psexec.1",
        ":: satmodel2\n%RUNTIMEDIR%\\PsExec.exe \\\\satmodel2 -u SATMODEL2\\MTCPB -p %nothing% -i 2 -c -f %TEMP%\\psexec_helper.bat %RUNTIMEDIR% .\\JavaOnly_runNode2.cmd\n%RUNTIMEDIR%\\pslist.exe \\\\satmodel2 java\nif %ERRORLEVEL% NEQ 0 goto done\n",
        "`%nothing%` is a variable reference, not the password it will hold",
    ),
    (
        "kingfisher.travisci.1",
        "travis_token splendid21RANDOMCONTENT_token",
        "the example's token has 23 characters where the pattern takes 22 between word boundaries",
    ),
];

/// The groups of a rule that are not secrets, as `build.rs` keeps them
/// (see [`rule_examples::RuleSet::public_groups`]).
const PUBLIC_GROUPS: &[(&str, &[usize])] = &[
    ("kingfisher.azure.1", &[1]),
    ("kingfisher.blynk.9", &[1, 3]),
    ("kingfisher.google.6", &[1]),
    ("kingfisher.odbc.1", &[1]),
    ("kingfisher.psexec.1", &[1]),
];

#[test]
fn every_kingfisher_rule_finds_its_examples_and_not_its_negative_ones() {
    rule_examples::check(&rule_examples::RuleSet {
        name: "Kingfisher",
        rules: include_str!("../data/kingfisher/rules.json"),
        public_groups: PUBLIC_GROUPS,
        differences: DIFFERENCES,
        stopwords: &["abcdefghijklmnopqrstuvwxyz"],
        min_rules: 400,
    });
}
