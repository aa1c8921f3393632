//! Nosey Parker's own examples, rule by rule: every example a Nosey Parker
//! rule lists must be found under that rule's kind, with every secret its
//! pattern captures gone from the text, and every negative example must not
//! be reported as that kind. The expected columns are Nosey Parker's
//! (`data/noseyparker/rules.json`, converted from the pinned commit by
//! `data/noseyparker/vendor.py`), not this crate's; how each rule is
//! checked is in `support/rule_examples.rs`.

#[path = "support/one_kind.rs"]
mod one_kind;
#[path = "support/rule_examples.rs"]
mod rule_examples;

/// Examples on which gate deliberately disagrees with Nosey Parker (see
/// [`rule_examples::RuleSet::differences`]).
const DIFFERENCES: &[(&str, &str, &str)] = &[
    (
        "np.aws.2",
        "aws_secret_access_key:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "one character forty times is a placeholder (gitleaks' global allowlist)",
    ),
    (
        "np.aws.2",
        "aws_secret_access_key => aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "one character forty times is a placeholder (gitleaks' global allowlist)",
    ),
    (
        "np.psexec.1",
        ":: satmodel2\n%RUNTIMEDIR%\\PsExec.exe \\\\satmodel2 -u SATMODEL2\\MTCPB -p %nothing% -i 2 -c -f %TEMP%\\psexec_helper.bat %RUNTIMEDIR% .\\JavaOnly_runNode2.cmd\n%RUNTIMEDIR%\\pslist.exe \\\\satmodel2 java\nif %ERRORLEVEL% NEQ 0 goto done\n",
        "`%nothing%` is a variable reference, not the password it will hold",
    ),
    (
        "np.generic.5",
        "password = super$ecret\n",
        "gate's own generic-password rule takes bare and single-quoted values too; Nosey Parker's takes double quotes only",
    ),
    (
        "np.generic.5",
        "password = 'super$ecret'\n",
        "gate's own generic-password rule takes bare and single-quoted values too; Nosey Parker's takes double quotes only",
    ),
    (
        "np.generic.10",
        "<add key=\"ConnectionString_B2B\" value=\"Server=awsbman-t,1433;Database=B2B;User ID=b2buser;Password=#gets0m3;Trusted_Connection=False\" />\n",
        "gitleaks' global allowlist `(?i)^true|false|null$` allows any value holding `false`, and every \
         vendored rule passes it; the password inside is still removed, by the ODBC rule",
    ),
    (
        "np.slack.2",
        "export SLACK_TOKEN=\"xoxb-0000000000-0000000000000-xxxxxxxxxxxxxxxxxxxxxxxx\"",
        "zeros and x's are the documentation's placeholder (gitleaks' rule of the same kind allows it)",
    ),
];

/// The groups of a rule that are not secrets, as `build.rs` keeps them
/// (see [`rule_examples::RuleSet::public_groups`]).
const PUBLIC_GROUPS: &[(&str, &[usize])] = &[
    ("np.auth0.1", &[1, 2]),
    ("np.aws.6", &[1]),
    ("np.azure.1", &[1]),
    ("np.azure.2", &[1, 2]),
    ("np.blynk.8", &[1]),
    ("np.blynk.9", &[1]),
    ("np.generic.3", &[1]),
    ("np.generic.4", &[1]),
    ("np.generic.7", &[1]),
    ("np.generic.8", &[1, 2]),
    ("np.generic.9", &[1]),
    ("np.generic.10", &[1]),
    ("np.generic.13", &[1]),
    ("np.generic.14", &[1]),
    ("np.gitalk.1", &[1]),
    ("np.google.6", &[1]),
    ("np.kubernetes.2", &[1]),
    ("np.mongodb.1", &[1, 3]),
    ("np.netrc.1", &[1, 2]),
    ("np.odbc.1", &[1]),
    ("np.phpmailer.1", &[1, 2]),
    ("np.postgres.1", &[1, 3]),
    ("np.psexec.1", &[1]),
    ("np.vmware.1", &[1]),
];

#[test]
fn every_noseyparker_rule_finds_its_examples_and_not_its_negative_ones() {
    rule_examples::check(&rule_examples::RuleSet {
        name: "Nosey Parker",
        rules: include_str!("../data/noseyparker/rules.json"),
        public_groups: PUBLIC_GROUPS,
        differences: DIFFERENCES,
        stopwords: &[],
        min_rules: 150,
    });
}
