//! gate's own secret rules, as data, beside the vendored sets.
//!
//! gitleaks', Nosey Parker's and Kingfisher's rules (see `vendored`) cover
//! the vendor token families; this table keeps what gate does better or they lack:
//! passwords in URLs and connection strings, JWTs validated by decoding,
//! `Authorization:` and API-key headers, AWS secret keys and session
//! tokens, cloud connection strings, the generic `password=`/`secret=`/
//! `token=`/`key=` assignments tuned for error text, token shapes gitleaks
//! only accepts next to an identifier or at one exact length (a bare
//! Mailchimp key, a legacy OpenAI key), password hashes, webhook URLs and
//! command-line credentials. Where a rule here shares its kind with a
//! vendored rule, both run and either one's finding is that kind.
//!
//! Each rule is a literal *anchor* (found by one Aho-Corasick pass over the
//! whole text) plus a regex that is run **anchored** at that position and
//! only there. Keeping the rules as a table rather than code makes it cheap
//! to add a kind, lets the benchmark build the naive "one regex after
//! another" baseline from exactly the same patterns, and lets the tests
//! check that every kind has a true-positive and a false-positive case.

/// Characters that may end a token made of `[A-Za-z0-9_-]`; written out
/// because `\b` treats `-` as a boundary and would cut such tokens short.
macro_rules! end_dash {
    () => {
        r"(?:[^A-Za-z0-9_\-]|$)"
    };
}

/// Characters that may end a base64 (`+/=`) token.
macro_rules! end_b64 {
    () => {
        r"(?:[^A-Za-z0-9+/=]|$)"
    };
}

/// How the start of a match is found from the anchor's position.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Back {
    /// The match starts at the anchor.
    None,
    /// The match starts `min..=max` bytes before the anchor, over bytes
    /// of the given class; a longer run means the token is part of a
    /// bigger word and is not this kind.
    Class(fn(u8) -> bool, usize, usize),
}

/// Extra validation of the captured secret beyond the regex.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Check {
    /// The regex is specific enough.
    None,
    /// A generic `key=` value: long, mixed letters and digits, high entropy.
    Entropy,
    /// A password value: anything that is not an obvious placeholder.
    Password,
    /// Both JWT segments must decode to JSON objects.
    Jwt,
    /// Not one of our own placeholders (keeps the rule idempotent), a
    /// reference (`$password`) or a mask (`*****`).
    NotPlaceholder,
}

/// One built-in secret rule.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SecretRule {
    /// The `KIND` in `[redacted:KIND]`.
    pub kind: &'static str,
    /// Literals (matched ASCII case-insensitively) that trigger the rule.
    pub anchors: &'static [&'static str],
    /// Where the match starts relative to an anchor.
    pub back: Back,
    /// The byte before the match start must not be `[A-Za-z0-9_]`.
    pub left_boundary: bool,
    /// Regex run anchored at the match start; the first participating
    /// capture group (or the whole match) is the secret.
    pub pattern: &'static str,
    /// Post-regex validation of the secret.
    pub check: Check,
}

fn is_hex(b: u8) -> bool {
    b.is_ascii_hexdigit()
}
fn is_b64url(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}
fn is_digit(b: u8) -> bool {
    b.is_ascii_digit()
}
fn is_lower_alnum(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}
fn is_azure_prefix(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'~' | b'.')
}

const fn r(kind: &'static str, anchors: &'static [&'static str], pattern: &'static str) -> SecretRule {
    SecretRule {
        kind,
        anchors,
        back: Back::None,
        left_boundary: true,
        pattern,
        check: Check::None,
    }
}

const fn checked(rule: SecretRule, check: Check) -> SecretRule {
    SecretRule { check, ..rule }
}

const fn inner(rule: SecretRule) -> SecretRule {
    SecretRule {
        left_boundary: false,
        ..rule
    }
}

const fn back(rule: SecretRule, back: Back) -> SecretRule {
    SecretRule { back, ..rule }
}

/// Every built-in secret rule. Kinds are unique (a test checks it).
pub(crate) static SECRET_RULES: &[SecretRule] = &[
    // --- cloud providers -------------------------------------------------
    r(
        "aws-access-key-id",
        &[
            "AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AIPA", "ANPA", "ANVA", "APKA", "AROA", "ASCA", "A3T",
        ],
        r"((?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA|ASCA|A3T[A-Z0-9])[A-Z2-7]{16})\b",
    ),
    inner(r(
        "aws-secret-access-key",
        &["secret_access_key", "secretaccesskey", "secret-access-key"],
        concat!(
            r#"(?i:secret[_-]?access[_-]?key)["']?\s*[:=]\s*["']?([A-Za-z0-9/+]{40})"#,
            end_b64!()
        ),
    )),
    inner(r(
        "aws-session-token",
        &["session_token", "sessiontoken", "session-token"],
        concat!(
            r#"(?i:session[_-]?token)["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{100,})"#,
            end_b64!()
        ),
    )),
    r(
        "aws-mws-key",
        &["amzn.mws."],
        r"(amzn\.mws\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b",
    ),
    r(
        "gcp-api-key",
        &["AIza"],
        concat!(r"(AIza[0-9A-Za-z_\-]{35})", end_dash!()),
    ),
    r(
        "gcp-oauth-client-secret",
        &["GOCSPX-"],
        concat!(r"(GOCSPX-[0-9A-Za-z_\-]{28})", end_dash!()),
    ),
    r(
        "google-oauth-access-token",
        &["ya29."],
        concat!(r"(ya29\.[0-9A-Za-z_\-]{20,2048})", end_dash!()),
    ),
    r(
        "google-oauth-refresh-token",
        &["1//0"],
        concat!(r"(1//0[0-9A-Za-z_\-]{40,512})", end_dash!()),
    ),
    inner(r(
        "gcp-service-account-key-id",
        &["private_key_id"],
        r#"private_key_id"\s*:\s*"([0-9a-f]{40})""#,
    )),
    inner(r(
        "azure-storage-account-key",
        &["accountkey="],
        concat!(r"(?i:accountkey)=([A-Za-z0-9+/]{86}==)", end_b64!()),
    )),
    inner(r(
        "azure-shared-access-key",
        &["sharedaccesskey="],
        concat!(r"(?i:sharedaccesskey)=([A-Za-z0-9+/]{43}=)", end_b64!()),
    )),
    inner(r(
        "azure-sas-signature",
        &["sig="],
        r"sig=((?:[A-Za-z0-9+/]|%2[bBfF]){40,128}(?:=|%3[dD]){0,2})(?:[^A-Za-z0-9+/=%]|$)",
    )),
    back(
        r(
            "azure-ad-client-secret",
            &["Q~"],
            r"([a-zA-Z0-9_~.]{3}[0-9]Q~[a-zA-Z0-9_~.\-]{31,34})(?:[^a-zA-Z0-9_~.\-]|$)",
        ),
        Back::Class(is_azure_prefix, 4, 4),
    ),
    // --- version control and package registries --------------------------
    r("github-pat", &["ghp_"], r"(ghp_[A-Za-z0-9]{36})\b"),
    r("github-oauth-token", &["gho_"], r"(gho_[A-Za-z0-9]{36})\b"),
    r(
        "github-app-token",
        &["ghu_", "ghs_"],
        r"((?:ghu|ghs)_[A-Za-z0-9]{36})\b",
    ),
    r("github-refresh-token", &["ghr_"], r"(ghr_[A-Za-z0-9]{36})\b"),
    r(
        "github-fine-grained-pat",
        &["github_pat_"],
        r"(github_pat_[A-Za-z0-9_]{82})\b",
    ),
    r(
        "gitlab-pat",
        &["glpat-"],
        concat!(r"(glpat-[A-Za-z0-9_\-]{20,64})", end_dash!()),
    ),
    r("gitlab-pipeline-trigger-token", &["glptt-"], r"(glptt-[0-9a-f]{40})\b"),
    r(
        "gitlab-runner-token",
        &["glrt-"],
        concat!(r"(glrt-[A-Za-z0-9_\-]{20,64})", end_dash!()),
    ),
    r(
        "gitlab-deploy-token",
        &["gldt-"],
        concat!(r"(gldt-[A-Za-z0-9_\-]{20,64})", end_dash!()),
    ),
    r(
        "gitlab-feed-token",
        &["glft-"],
        concat!(r"(glft-[A-Za-z0-9_\-]{20,64})", end_dash!()),
    ),
    r(
        "bitbucket-app-password",
        &["ATBB"],
        r"(ATBB[A-Za-z0-9_=.\-]{32,64})(?:[^A-Za-z0-9_=.\-]|$)",
    ),
    r("npm-token", &["npm_"], r"(npm_[A-Za-z0-9]{36})\b"),
    r(
        "pypi-token",
        &["pypi-AgEIcHlwaS5vcmc", "pypi-AgENdGVzdC5weXBpLm9yZw"],
        concat!(
            r"(pypi-(?:AgEIcHlwaS5vcmc|AgENdGVzdC5weXBpLm9yZw)[A-Za-z0-9_\-]{50,1024})",
            end_dash!()
        ),
    ),
    r("rubygems-api-key", &["rubygems_"], r"(rubygems_[a-f0-9]{48})\b"),
    r(
        "docker-hub-pat",
        &["dckr_pat_"],
        concat!(r"(dckr_pat_[A-Za-z0-9_\-]{27})", end_dash!()),
    ),
    // --- payment and SaaS -------------------------------------------------
    r(
        "stripe-secret-key",
        &["sk_live_", "sk_test_"],
        r"(sk_(?:live|test)_[0-9a-zA-Z]{24,99})\b",
    ),
    r(
        "stripe-restricted-key",
        &["rk_live_", "rk_test_"],
        r"(rk_(?:live|test)_[0-9a-zA-Z]{24,99})\b",
    ),
    r("stripe-webhook-secret", &["whsec_"], r"(whsec_[0-9a-zA-Z]{32,64})\b"),
    r(
        "slack-bot-token",
        &["xoxb-"],
        r"(xoxb-[0-9]{10,13}-[0-9]{10,13}-[A-Za-z0-9]{24,34})\b",
    ),
    r(
        "slack-user-token",
        &["xoxp-", "xoxe-"],
        concat!(r"(xox[pe](?:-[0-9]{10,13}){3}-[a-zA-Z0-9\-]{28,34})", end_dash!()),
    ),
    r(
        "slack-app-token",
        &["xapp-"],
        r"(xapp-[0-9]-[A-Z0-9]{9,12}-[0-9]{10,14}-[a-f0-9]{64})\b",
    ),
    inner(r(
        "slack-webhook-url",
        &["hooks.slack.com/"],
        r"hooks\.slack\.com/(?:services|workflows|triggers)/((?:[A-Za-z0-9]{8,12}/){1,2}[A-Za-z0-9]{20,48})\b",
    )),
    r("twilio-api-key", &["SK"], r"(SK[0-9a-f]{32})\b"),
    // detect-secrets' Twilio shapes: an account SID or API key SID with any
    // lower-case letters (placeholders such as `SKxxxx…` included).
    r("twilio-sid", &["AC", "SK"], r"((?:AC|SK)[a-z0-9]{32})\b"),
    // Artifactory API keys (`AKC…`) and passwords (`AP[0-9A-F]…`), in
    // detect-secrets' shapes; gitleaks only knows the 73-character form.
    r(
        "artifactory-token",
        &["AKC", "AP"],
        r"((?:AKC[a-zA-Z0-9]{10,}|AP[0-9A-F][a-zA-Z0-9]{8,}))(?:[^A-Za-z0-9]|$)",
    ),
    // Discord bot tokens: the user id in base64, a timestamp, an HMAC.
    back(
        r(
            "discord-bot-token",
            &["."],
            concat!(
                r"([A-Za-z0-9_\-]{24,26}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38})",
                end_dash!()
            ),
        ),
        Back::Class(is_b64url, 24, 26),
    ),
    // Any GitLab token by its documented prefix (gitleaks has exact shapes
    // for some).
    r(
        "gitlab-token",
        &[
            "glpat-", "gloas-", "gldt-", "glrt-", "glrtr-", "glcbt-", "glptt-", "glft-", "glimt-", "glagent-",
            "glsoat-", "glffct-",
        ],
        concat!(
            r"(gl(?:pat|oas|dt|rt|rtr|cbt|ptt|ft|imt|agent|soat|ffct)-[A-Za-z0-9_\-]{20,50})",
            end_dash!()
        ),
    ),
    // An `.npmrc` auth token.
    checked(
        inner(r(
            "npm-auth-token",
            &["_authtoken="],
            r#"(?i:_authtoken)=["']?([^\s"']{8,})"#,
        )),
        Check::Password,
    ),
    r(
        "sendgrid-api-key",
        &["SG."],
        concat!(r"(SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})", end_dash!()),
    ),
    r("mailgun-api-key", &["key-"], r"(key-[0-9a-f]{32})\b"),
    back(
        r("mailchimp-api-key", &["-us"], r"([0-9a-f]{32}-us[0-9]{1,2})\b"),
        Back::Class(is_hex, 32, 32),
    ),
    r(
        "openai-api-key",
        &["sk-"],
        concat!(
            r"(sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,300}|[A-Za-z0-9_\-]{10,64}T3BlbkFJ[A-Za-z0-9_\-]{10,64}|[A-Za-z0-9]{48}))",
            end_dash!()
        ),
    ),
    r("huggingface-token", &["hf_"], r"(hf_[A-Za-z]{34})\b"),
    r(
        "shopify-token",
        &["shpat_", "shpca_", "shppa_", "shpss_"],
        r"(shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32})\b",
    ),
    r(
        "square-access-token",
        &["sq0atp-", "EAAA"],
        concat!(r"((?:sq0atp-[0-9A-Za-z_\-]{22}|EAAA[A-Za-z0-9_\-]{60}))", end_dash!()),
    ),
    r(
        "square-oauth-secret",
        &["sq0csp-"],
        concat!(r"(sq0csp-[0-9A-Za-z_\-]{43})", end_dash!()),
    ),
    r(
        "braintree-access-token",
        &["access_token$production$", "access_token$sandbox$"],
        r"(access_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32})\b",
    ),
    r(
        "digitalocean-token",
        &["dop_v1_", "doo_v1_", "dor_v1_"],
        r"(do[por]_v1_[a-f0-9]{64})\b",
    ),
    r("linear-api-key", &["lin_api_"], r"(lin_api_[a-zA-Z0-9]{40})\b"),
    // The prefixed formats both vendors introduced in 2025, which name
    // the token's type (personal, integration, app access, app refresh,
    // AI gateway key; user token, account token, API key) and none of the
    // vendored sets has yet. Cloudflare's end in an 8-hex-digit checksum.
    r(
        "vercel-prefixed-token",
        &["vcp_", "vci_", "vca_", "vcr_", "vck_"],
        r"(vc[piark]_[A-Za-z0-9]{24,64})\b",
    ),
    r(
        "cloudflare-prefixed-token",
        &["cfut_", "cfat_", "cfk_"],
        r"(cf(?:ut|at|k)_[A-Za-z0-9]{40}[a-f0-9]{8})\b",
    ),
    inner(r(
        "discord-webhook-url",
        &["/api/webhooks/"],
        concat!(r"/api/webhooks/[0-9]{16,20}/([A-Za-z0-9_\-]{60,68})", end_dash!()),
    )),
    back(
        r(
            "telegram-bot-token",
            &[":AA"],
            concat!(r"([0-9]{8,10}:AA[A-Za-z0-9_\-]{33})", end_dash!()),
        ),
        Back::Class(is_digit, 8, 10),
    ),
    r(
        "newrelic-api-key",
        &["NRAK-", "NRJS-", "NRII-"],
        r"(NR(?:AK|JS|II)-[A-Z0-9]{27})\b",
    ),
    r(
        "grafana-cloud-token",
        &["glc_"],
        concat!(r"(glc_[A-Za-z0-9+/]{32,400}={0,2})", end_b64!()),
    ),
    r(
        "grafana-service-account-token",
        &["glsa_"],
        r"(glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})\b",
    ),
    r(
        "vault-token",
        &["hvs.", "hvb."],
        concat!(r"(hv[sb]\.[A-Za-z0-9_\-]{24,256})", end_dash!()),
    ),
    back(
        r(
            "terraform-cloud-token",
            &[".atlasv1."],
            concat!(r"([a-z0-9]{14}\.atlasv1\.[a-z0-9\-_=]{60,70})", r"(?:[^a-z0-9\-_=]|$)"),
        ),
        Back::Class(is_lower_alnum, 14, 14),
    ),
    r(
        "doppler-token",
        &["dp.pt.", "dp.st.", "dp.sa."],
        r"(dp\.(?:pt|st|sa)\.[a-zA-Z0-9]{40,44})\b",
    ),
    r("pulumi-token", &["pul-"], r"(pul-[a-f0-9]{40})\b"),
    r("postman-api-key", &["PMAK-"], r"(PMAK-[a-f0-9]{24}-[a-f0-9]{34})\b"),
    r(
        "age-secret-key",
        &["AGE-SECRET-KEY-1"],
        r"(AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})\b",
    ),
    r("databricks-token", &["dapi"], r"(dapi[a-f0-9]{32}(?:-[0-9]+)?)\b"),
    r(
        "brevo-api-key",
        &["xkeysib-"],
        r"(xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16})\b",
    ),
    r("supabase-token", &["sbp_"], r"(sbp_[a-f0-9]{40})\b"),
    r(
        "planetscale-token",
        &["pscale_tkn_", "pscale_pw_"],
        concat!(r"(pscale_(?:tkn|pw)_[A-Za-z0-9_\-]{32,64})", end_dash!()),
    ),
    r(
        "flyio-token",
        &["fo1_"],
        concat!(r"(fo1_[A-Za-z0-9_\-]{43})", end_dash!()),
    ),
    // --- structured tokens and transport credentials ----------------------
    checked(
        r(
            "jwt",
            &["eyJ"],
            concat!(
                r"(eyJ[A-Za-z0-9_\-]{4,4096}={0,2}\.(?:\r?\n)?eyJ[A-Za-z0-9_\-]{2,8192}={0,2}(?:\.(?:\r?\n)?[A-Za-z0-9_\-]{0,4096}={0,2})?)",
                end_dash!()
            ),
        ),
        Check::Jwt,
    ),
    checked(
        inner(r(
            "url-password",
            &["://"],
            r"://[^\s:/@\[\]]{0,256}:([^\s/]{1,256})@[A-Za-z0-9\[]",
        )),
        Check::NotPlaceholder,
    ),
    checked(
        r(
            "authorization-header",
            &["authorization"],
            r#"(?i:authorization)["']?\s*[:=]\s*["']?(?:(?i:bearer|basic|token|apikey|api-key|bot)\s+([A-Za-z0-9\-._~+/=]{6,})|((?i:digest|aws4-hmac-sha256|negotiate|ntlm|hmac|signature)\s+[^\r\n"']{6,}))"#,
        ),
        Check::NotPlaceholder,
    ),
    checked(
        inner(r(
            "api-key-header",
            &[
                "x-api-key",
                "x-auth-token",
                "api-key:",
                "x-goog-api-key",
                "ocp-apim-subscription-key",
                "x-jfrog-art-api",
            ],
            r#"(?i:x-api-key|x-auth-token|api-key|x-goog-api-key|ocp-apim-subscription-key|x-jfrog-art-api)["']?\s*:\s*["']?([A-Za-z0-9\-._~+/=]{8,})"#,
        )),
        Check::NotPlaceholder,
    ),
    // --- password hashes, which crack offline --------------------------
    // crypt(3)'s MD5, bcrypt, SHA-256 and SHA-512 forms and Kerberos
    // etype-23 AS-REP hashes come from Nosey Parker's rules; these are the
    // rest of the families a password file or a directory dump holds.
    r(
        "password-hash",
        &["$7$"],
        r"(\$7\$[./A-Za-z0-9]{11,}\$[./A-Za-z0-9]{43})(?:[^./A-Za-z0-9]|$)",
    ),
    r(
        "password-hash",
        &["$y$", "$gy$"],
        r"(\$g?y\$[./A-Za-z0-9]+\$[./A-Za-z0-9]{0,86}\$[./A-Za-z0-9]{43})(?:[^./A-Za-z0-9]|$)",
    ),
    r(
        "password-hash",
        &["$argon2"],
        concat!(
            r"(\$argon2(?:id|i|d)\$(?:v=\d+\$)?m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]+={0,2}\$[A-Za-z0-9+/]+={0,2})",
            end_b64!()
        ),
    ),
    r(
        "password-hash",
        &["$pbkdf2", "$scrypt$", "$sha1$", "$apr1$", "$md5"],
        r"(\$(?:pbkdf2(?:-sha1|-sha256|-sha512)?|scrypt|sha1|apr1|md5(?:,rounds=\d+)?)\$[^\s$]{1,64}\$[./A-Za-z0-9+=,$]{16,})(?:[^./A-Za-z0-9+=,$]|$)",
    ),
    r(
        "password-hash",
        &["pbkdf2_sha", "argon2$", "bcrypt_sha256$", "scrypt$"],
        r"((?:pbkdf2_sha(?:1|256)|argon2|bcrypt_sha256|scrypt)\$[^\s$]{1,64}\$[./A-Za-z0-9+=$,]{16,})(?:[^./A-Za-z0-9+=$,]|$)",
    ),
    r(
        "password-hash",
        &["$krb5tgs$", "$krb5asrep$", "$krb5pa$"],
        r"(\$krb5(?:tgs|asrep|pa)\$\d+\$[A-Za-z0-9$*:/.+=_\-]{16,})(?:[^A-Za-z0-9$*:/.+=_\-]|$)",
    ),
    inner(r(
        "password-hash",
        &["{ssha", "{sha", "{smd5", "{pbkdf2", "{crypt}"],
        r"(?i:\{(?:ssha(?:256|512)?|sha(?:256|512)?|smd5|pbkdf2(?:-sha\d+)?|crypt)\})([A-Za-z0-9+/.$=]{20,})",
    )),
    // --- URLs that are themselves credentials --------------------------
    // Slack, Microsoft Teams and Discord webhooks are gitleaks' and Nosey
    // Parker's.
    inner(r(
        "zapier-webhook-url",
        &["hooks.zapier.com/hooks/catch/"],
        r"hooks\.zapier\.com/hooks/catch/(\d+/[A-Za-z0-9]+)",
    )),
    inner(r(
        "ifttt-webhook-key",
        &["maker.ifttt.com/"],
        concat!(
            r"maker\.ifttt\.com/(?:trigger/[^/\s]+/(?:json/)?)?with/key/([A-Za-z0-9_\-]{16,})",
            end_dash!()
        ),
    )),
    inner(r(
        "webhook-url",
        &["/hooks/"],
        concat!(r"/hooks/([a-z0-9]{26})", end_dash!()),
    )),
    inner(r(
        "url-signature",
        &["signature=", "x-amz-signature=", "x-goog-signature="],
        r"(?i:x-amz-signature|x-goog-signature|signature)=([A-Za-z0-9%+/_\-]{16,}={0,2})",
    )),
    // --- credentials on a command line ---------------------------------
    // `--password …` and `-Password …` are values by their key (`keyed`);
    // `-p` counts after a `-u` and not as a port (`-p 3306`).
    inner(r(
        "cli-password",
        &["-u "],
        r#"-u\s*['"]?[^\s'"-][^\s'"]*['"]?(?:\s+-h\s*\S+)?\s+-p\s*['"]?(\d*[^\d\s'"%$<{-][^\s'"]*)"#,
    )),
    inner(r(
        "cli-password",
        &["-u ", "--user ", "--user="],
        r#"(?:-u|--user)[\s=]+['"]?[^\s:'"@/]+:([^\s'"@%$<{][^\s'"@]*)"#,
    )),
    inner(r(
        "cli-password",
        &["sshpass"],
        r#"sshpass\s+-p\s*['"]?([^\s'"%$<{][^\s'"]*)"#,
    )),
    checked(
        inner(r(
            "generic-password",
            &["password", "passwd", "pwd", "passphrase"],
            r#"(?i:password|passwd|pwd|passphrase)["']?\s*[:=]\s*["']?([^\s"',;&<>\[\]{}()]{3,})"#,
        )),
        Check::Password,
    ),
    checked(
        inner(r(
            "generic-secret",
            &["secret"],
            r#"(?i:secret)["']?\s*[:=]\s*["']?([A-Za-z0-9+/_\-.~]{12,}={0,2})"#,
        )),
        Check::Entropy,
    ),
    checked(
        inner(r(
            "generic-token",
            &["token"],
            r#"(?i:token)["']?\s*[:=]\s*["']?([A-Za-z0-9+/_\-.~]{12,}={0,2})"#,
        )),
        Check::Entropy,
    ),
    checked(
        inner(r(
            "generic-key",
            &["key"],
            r#"(?i:key)["']?\s*[:=]\s*["']?([A-Za-z0-9+/_\-.~]{12,}={0,2})"#,
        )),
        Check::Entropy,
    ),
];
