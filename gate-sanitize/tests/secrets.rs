//! One true positive and one close false positive per built-in secret kind.
//!
//! Each case plants a secret in a line of ordinary text: the true positive
//! must come out as `[redacted:KIND]` with no trace of the secret, and the
//! near miss (one character short, wrong prefix, a placeholder value...)
//! must not be reported as that kind. gitleaks' rules are covered by their
//! own examples in `tests/gitleaks.rs`; a kind both share is tested in both.

use std::sync::OnceLock;
use toolgate_sanitize::{Category, Sanitizer};

fn san() -> &'static Sanitizer {
    static S: OnceLock<Sanitizer> = OnceLock::new();
    S.get_or_init(Sanitizer::default)
}

const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const DASH: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
const HEX: &str = "0123456789abcdef";
const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const UPPER_NUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const LOWER_NUM: &str = "abcdefghijklmnopqrstuvwxyz0123456789";
const LETTERS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const DIGITS: &str = "0123456789";

/// A deterministic pseudo-random string of `n` bytes from `set`.
fn rnd(set: &str, n: usize, seed: u64) -> String {
    let set = set.as_bytes();
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            set[((x >> 33) % set.len() as u64) as usize] as char
        })
        .collect()
}

/// Asserts the true positive is redacted as `kind` and the false positive
/// is left alone.
fn check(kind: &str, tp_line: &str, secret: &str, fp_line: &str) {
    let s = san();
    let out = s.sanitize(tp_line);
    assert!(
        out.text.contains(&format!("[redacted:{kind}]")),
        "{kind}: true positive not redacted as {kind}: {tp_line:?} -> {:?}",
        out.text
    );
    assert!(
        out.findings
            .iter()
            .any(|f| f.kind == kind && f.category == Category::Secret),
        "{kind}: no finding of this kind: {:?}",
        out.findings
    );
    let probe = &secret[secret.len() / 2 - 4..secret.len() / 2 + 4];
    assert!(
        !out.text.contains(probe),
        "{kind}: part of the secret survived: {:?}",
        out.text
    );
    // The near miss is not this kind; another rule may still find it (a
    // 42-character random `SharedAccessKey=` value one short of Azure's
    // shape is still a secret to gitleaks' generic rule).
    let out = s.sanitize(fp_line);
    assert!(
        !out.findings.iter().any(|f| f.kind == kind),
        "{kind}: near miss reported as {kind}: {fp_line:?} -> {:?}",
        out.text
    );
}

/// A case whose text is `prefix + secret + " end"` for both the true and
/// the false positive.
fn plain(kind: &str, secret: &str, near_miss: &str) {
    check(
        kind,
        &format!("error: credential {secret} rejected"),
        secret,
        &format!("error: credential {near_miss} rejected"),
    );
}

macro_rules! cases {
    ($($name:ident => $body:expr;)*) => {
        $( #[test] fn $name() { $body } )*

        /// Every kind with a case here, to compare with the built-in list.
        const COVERED: &[&str] = &[$(stringify!($name)),*];
    };
}

cases! {
    aws_access_key_id => plain("aws-access-key-id", "AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPL");
    aws_secret_access_key => {
        let s = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
        check("aws-secret-access-key", &format!("aws_secret_access_key = {s}"), s,
              &format!("aws_secret_access_key = {}", rnd(LETTERS, 41, 2)));
    };
    aws_session_token => {
        let s = rnd(B64, 120, 3);
        check("aws-session-token", &format!("AWS_SESSION_TOKEN={s}"), &s,
              &format!("AWS_SESSION_TOKEN={}", rnd(LETTERS, 80, 3)));
    };
    aws_mws_key => plain("aws-mws-key", "amzn.mws.4ea38b7b-f563-7709-4bae-87aea1f1e2d3", "amzn.mws.4ea38b7b-f563-7709-4bae-87aea1f1e2");
    gcp_api_key => plain("gcp-api-key", &format!("AIza{}", rnd(DASH, 35, 5)), &format!("AIza{}", rnd(DASH, 34, 5)));
    gcp_oauth_client_secret => plain("gcp-oauth-client-secret", &format!("GOCSPX-{}", rnd(DASH, 28, 6)), &format!("GOCSPX-{}", rnd(DASH, 27, 6)));
    google_oauth_access_token => plain("google-oauth-access-token", &format!("ya29.{}", rnd(DASH, 60, 7)), &format!("ya29.{}", rnd(DASH, 12, 7)));
    google_oauth_refresh_token => plain("google-oauth-refresh-token", &format!("1//0{}", rnd(DASH, 60, 8)), &format!("1//0{}", rnd(DASH, 30, 8)));
    gcp_service_account_key_id => {
        let s = rnd(HEX, 40, 9);
        check("gcp-service-account-key-id", &format!(r#"{{"type": "service_account", "private_key_id": "{s}"}}"#), &s,
              &format!(r#"{{"type": "service_account", "private_key_id": "{}"}}"#, rnd(HEX, 39, 9)));
    };
    azure_storage_account_key => {
        let s = format!("{}==", rnd(B64, 86, 10));
        check("azure-storage-account-key",
              &format!("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={s};EndpointSuffix=core.windows.net"), &s,
              &format!("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={}==;EndpointSuffix=core.windows.net", rnd(LETTERS, 85, 10)));
    };
    azure_shared_access_key => {
        let s = format!("{}=", rnd(B64, 43, 11));
        check("azure-shared-access-key",
              &format!("Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={s}"), &s,
              &format!("Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={}=", rnd(LETTERS, 42, 11)));
    };
    azure_sas_signature => {
        let s = format!("{}%3D", rnd(ALNUM, 43, 12));
        check("azure-sas-signature",
              &format!("GET https://acct.blob.core.windows.net/c/b?sv=2021-06-08&sr=b&sig={s} failed"), &s,
              &format!("GET https://acct.blob.core.windows.net/c/b?sv=2021-06-08&sr=b&sig={} failed", rnd(ALNUM, 20, 12)));
    };
    azure_ad_client_secret => {
        let s = format!("abc8Q~{}", rnd(ALNUM, 34, 13));
        check("azure-ad-client-secret", &format!("client secret {s} expired"), &s,
              &format!("client secret x{s} expired"));
    };
    github_pat => plain("github-pat", &format!("ghp_{}", rnd(ALNUM, 36, 14)), &format!("ghp_{}", rnd(ALNUM, 35, 14)));
    github_oauth_token => plain("github-oauth-token", &format!("gho_{}", rnd(ALNUM, 36, 15)), &format!("gho_{}", rnd(ALNUM, 35, 15)));
    github_app_token => plain("github-app-token", &format!("ghs_{}", rnd(ALNUM, 36, 16)), &format!("ghs_{}", rnd(ALNUM, 35, 16)));
    github_refresh_token => plain("github-refresh-token", &format!("ghr_{}", rnd(ALNUM, 36, 17)), &format!("ghr_{}", rnd(ALNUM, 35, 17)));
    github_fine_grained_pat => plain("github-fine-grained-pat", &format!("github_pat_{}", rnd(ALNUM, 82, 18)), &format!("github_pat_{}", rnd(ALNUM, 81, 18)));
    gitlab_pat => plain("gitlab-pat", &format!("glpat-{}", rnd(ALNUM, 20, 19)), &format!("glpat-{}", rnd(ALNUM, 19, 19)));
    gitlab_pipeline_trigger_token => plain("gitlab-pipeline-trigger-token", &format!("glptt-{}", rnd(HEX, 40, 20)), &format!("glptt-{}", rnd(HEX, 39, 20)));
    gitlab_runner_token => plain("gitlab-runner-token", &format!("glrt-{}", rnd(ALNUM, 20, 21)), &format!("glrt-{}", rnd(ALNUM, 19, 21)));
    gitlab_deploy_token => plain("gitlab-deploy-token", &format!("gldt-{}", rnd(ALNUM, 20, 22)), &format!("gldt-{}", rnd(ALNUM, 19, 22)));
    gitlab_feed_token => plain("gitlab-feed-token", &format!("glft-{}", rnd(ALNUM, 20, 23)), &format!("glft-{}", rnd(ALNUM, 19, 23)));
    bitbucket_app_password => plain("bitbucket-app-password", &format!("ATBB{}", rnd(ALNUM, 32, 24)), &format!("ATBB{}", rnd(ALNUM, 31, 24)));
    npm_token => plain("npm-token", &format!("npm_{}", rnd(ALNUM, 36, 25)), &format!("npm_{}", rnd(ALNUM, 35, 25)));
    pypi_token => plain("pypi-token", &format!("pypi-AgEIcHlwaS5vcmc{}", rnd(DASH, 60, 26)), &format!("pypi-AgEIcHlwaS5vcmc{}", rnd(DASH, 40, 26)));
    rubygems_api_key => plain("rubygems-api-key", &format!("rubygems_{}", rnd(HEX, 48, 27)), &format!("rubygems_{}", rnd(HEX, 47, 27)));
    docker_hub_pat => plain("docker-hub-pat", &format!("dckr_pat_{}", rnd(ALNUM, 27, 28)), &format!("dckr_pat_{}", rnd(ALNUM, 26, 28)));
    stripe_secret_key => plain("stripe-secret-key", &format!("sk_live_{}", rnd(ALNUM, 24, 29)), &format!("sk_live_{}", rnd(ALNUM, 23, 29)));
    stripe_restricted_key => plain("stripe-restricted-key", &format!("rk_test_{}", rnd(ALNUM, 24, 30)), &format!("rk_test_{}", rnd(ALNUM, 23, 30)));
    stripe_webhook_secret => plain("stripe-webhook-secret", &format!("whsec_{}", rnd(ALNUM, 32, 31)), &format!("whsec_{}", rnd(ALNUM, 31, 31)));
    slack_bot_token => plain("slack-bot-token",
        &format!("xoxb-{}-{}-{}", rnd(DIGITS, 12, 32), rnd(DIGITS, 12, 33), rnd(ALNUM, 24, 34)),
        &format!("xoxb-{}-{}-{}", rnd(DIGITS, 9, 32), rnd(DIGITS, 12, 33), rnd(ALNUM, 24, 34)));
    slack_user_token => plain("slack-user-token",
        &format!("xoxp-{}-{}-{}-{}", rnd(DIGITS, 12, 35), rnd(DIGITS, 12, 36), rnd(DIGITS, 12, 37), rnd(HEX, 32, 38)),
        &format!("xoxp-{}-{}-{}", rnd(DIGITS, 12, 35), rnd(DIGITS, 12, 36), rnd(HEX, 32, 38)));
    slack_app_token => plain("slack-app-token",
        &format!("xapp-1-A{}-{}-{}", rnd(UPPER_NUM, 10, 39), rnd(DIGITS, 13, 40), rnd(HEX, 64, 41)),
        &format!("xapp-1-A{}-{}", rnd(UPPER_NUM, 10, 39), rnd(DIGITS, 13, 40)));
    slack_webhook_url => {
        let s = rnd(ALNUM, 24, 42);
        check("slack-webhook-url", &format!("POST https://hooks.slack.com/services/T01234567/B01234567/{s} -> 404"), &s,
              "POST https://hooks.slack.com/services/T0123/B0123/abc -> 404");
    };
    twilio_api_key => plain("twilio-api-key", &format!("SK{}", rnd(HEX, 32, 43)), &format!("SK{}", rnd(HEX, 31, 43)));
    sendgrid_api_key => plain("sendgrid-api-key",
        &format!("SG.{}.{}", rnd(ALNUM, 22, 44), rnd(ALNUM, 43, 45)),
        &format!("SG.{}.{}", rnd(ALNUM, 22, 44), rnd(ALNUM, 42, 45)));
    mailgun_api_key => plain("mailgun-api-key", &format!("key-{}", rnd(HEX, 32, 46)), &format!("key-{}", rnd(HEX, 31, 46)));
    mailchimp_api_key => plain("mailchimp-api-key", &format!("{}-us14", rnd(HEX, 32, 47)), &format!("{}-us14", rnd(HEX, 31, 47)));
    openai_api_key => plain("openai-api-key", &format!("sk-proj-{}", rnd(DASH, 64, 48)), &format!("sk-proj-{}", rnd(ALNUM, 30, 48)));
    anthropic_api_key => plain("anthropic-api-key", &format!("sk-ant-api03-{}AA", rnd(DASH, 93, 49)), &format!("sk-ant-api03-{}", rnd(ALNUM, 30, 49)));
    huggingface_token => plain("huggingface-token", &format!("hf_{}", rnd(LETTERS, 34, 50)), &format!("hf_{}", rnd(LETTERS, 33, 50)));
    shopify_token => plain("shopify-token", &format!("shpat_{}", rnd(HEX, 32, 51)), &format!("shpat_{}", rnd(HEX, 31, 51)));
    square_access_token => plain("square-access-token", &format!("sq0atp-{}", rnd(ALNUM, 22, 52)), &format!("sq0atp-{}", rnd(ALNUM, 21, 52)));
    square_oauth_secret => plain("square-oauth-secret", &format!("sq0csp-{}", rnd(ALNUM, 43, 53)), &format!("sq0csp-{}", rnd(ALNUM, 42, 53)));
    braintree_access_token => plain("braintree-access-token",
        &format!("access_token$production${}${}", rnd(LOWER_NUM, 16, 54), rnd(HEX, 32, 55)),
        &format!("access_token$production${}${}", rnd(LOWER_NUM, 16, 54), rnd(HEX, 31, 55)));
    digitalocean_token => plain("digitalocean-token", &format!("dop_v1_{}", rnd(HEX, 64, 56)), &format!("dop_v1_{}", rnd(HEX, 63, 56)));
    vercel_prefixed_token => plain("vercel-prefixed-token", &format!("vcp_{}", rnd(ALNUM, 56, 91)), &format!("vcp_{}", rnd(ALNUM, 23, 91)));
    cloudflare_prefixed_token => plain("cloudflare-prefixed-token", &format!("cfut_{}{}", rnd(ALNUM, 40, 92), rnd(HEX, 8, 93)),
        &format!("cfut_{}{}", rnd(ALNUM, 39, 92), rnd(HEX, 8, 93)));
    linear_api_key => plain("linear-api-key", &format!("lin_api_{}", rnd(ALNUM, 40, 57)), &format!("lin_api_{}", rnd(ALNUM, 39, 57)));
    discord_webhook_url => {
        let s = rnd(DASH, 68, 58);
        check("discord-webhook-url", &format!("POST https://discord.com/api/webhooks/123456789012345678/{s} failed"), &s,
              &format!("POST https://discord.com/api/webhooks/123456789012345678/{} failed", rnd(ALNUM, 40, 58)));
    };
    // Nosey Parker's rule takes a bot id of any length, so the near miss
    // is the wrong marker after the colon (`AB`, not `AA`).
    telegram_bot_token => plain("telegram-bot-token", &format!("123456789:AA{}", rnd(DASH, 33, 59)), &format!("123456789:AB{}", rnd(DASH, 33, 59)));
    newrelic_api_key => plain("newrelic-api-key", &format!("NRAK-{}", rnd(UPPER_NUM, 27, 60)), &format!("NRAK-{}", rnd(UPPER_NUM, 26, 60)));
    grafana_cloud_token => plain("grafana-cloud-token", &format!("glc_{}", rnd(ALNUM, 48, 61)), &format!("glc_{}", rnd(ALNUM, 20, 61)));
    grafana_service_account_token => plain("grafana-service-account-token",
        &format!("glsa_{}_{}", rnd(ALNUM, 32, 62), rnd(HEX, 8, 63)),
        &format!("glsa_{}_{}", rnd(ALNUM, 32, 62), rnd(HEX, 7, 63)));
    vault_token => plain("vault-token", &format!("hvs.{}", rnd(DASH, 90, 64)), &format!("hvs.{}", rnd(ALNUM, 10, 64)));
    terraform_cloud_token => plain("terraform-cloud-token",
        &format!("{}.atlasv1.{}", rnd(LOWER_NUM, 14, 65), rnd(LOWER_NUM, 64, 66)),
        &format!("{}.atlasv1.{}", rnd(LOWER_NUM, 13, 65), rnd(LOWER_NUM, 64, 66)));
    doppler_token => plain("doppler-token", &format!("dp.pt.{}", rnd(ALNUM, 43, 67)), &format!("dp.pt.{}", rnd(ALNUM, 30, 67)));
    pulumi_token => plain("pulumi-token", &format!("pul-{}", rnd(HEX, 40, 68)), &format!("pul-{}", rnd(HEX, 39, 68)));
    postman_api_key => plain("postman-api-key",
        &format!("PMAK-{}-{}", rnd(HEX, 24, 69), rnd(HEX, 34, 70)),
        &format!("PMAK-{}-{}", rnd(HEX, 24, 69), rnd(HEX, 33, 70)));
    age_secret_key => plain("age-secret-key",
        &format!("AGE-SECRET-KEY-1{}", rnd("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58, 71)),
        &format!("AGE-SECRET-KEY-1{}", rnd("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 57, 71)));
    databricks_token => plain("databricks-token", &format!("dapi{}", rnd(HEX, 32, 72)), &format!("dapi{}", rnd(HEX, 31, 72)));
    brevo_api_key => plain("brevo-api-key",
        &format!("xkeysib-{}-{}", rnd(HEX, 64, 73), rnd(ALNUM, 16, 74)),
        &format!("xkeysib-{}-{}", rnd(HEX, 64, 73), rnd(ALNUM, 15, 74)));
    supabase_token => plain("supabase-token", &format!("sbp_{}", rnd(HEX, 40, 75)), &format!("sbp_{}", rnd(HEX, 39, 75)));
    planetscale_token => plain("planetscale-token", &format!("pscale_tkn_{}", rnd(ALNUM, 43, 76)), &format!("pscale_tkn_{}", rnd(ALNUM, 20, 76)));
    flyio_token => plain("flyio-token", &format!("fo1_{}", rnd(ALNUM, 43, 77)), &format!("fo1_{}", rnd(ALNUM, 42, 77)));
    jwt => plain("jwt",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        "eyJAAAA.eyJBBB");
    url_password => check("url-password",
        "connect mongodb://admin:S3cr3tPass@mongo.example.com:27017/db failed", "S3cr3tPass",
        "connect mongodb://admin@mongo.example.com:27017/db failed");
    authorization_header => check("authorization-header",
        "request had Authorization: Bearer abcDEF123ghiJKL456mno", "abcDEF123ghiJKL456mno",
        "request had Authorization: required but missing");
    api_key_header => check("api-key-header",
        "X-API-Key: 9f8e7d6c5b4a39281706f5e4d3c2b1a0", "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
        "X-API-Key header missing");
    generic_password => check("generic-password",
        "login failed with password=hunter22!", "hunter22!",
        "login failed: password: required");
    generic_secret => check("generic-secret",
        "client_secret=Zx8vQ2mN7pL4kR9t rejected", "Zx8vQ2mN7pL4kR9t",
        "client_secret=aaaaaaaaaaaaaaaa rejected");
    generic_token => check("generic-token",
        "access_token: 7fG2kL9pQ4xZ1mN8vB3c expired", "7fG2kL9pQ4xZ1mN8vB3c",
        "access_token: your_token_here_please expired");
    generic_key => check("generic-key",
        "api_key=3kLm9PqR7sT2vWx5Yz8A invalid", "3kLm9PqR7sT2vWx5Yz8A",
        "api_key=your_api_key_here invalid");
    twilio_sid => plain("twilio-sid", &format!("AC{}", rnd(LOWER_NUM, 32, 60)), &format!("AC{}", rnd(LOWER_NUM, 31, 60)));
    artifactory_token => plain("artifactory-token", &format!("AKCp{}", rnd(ALNUM, 20, 61)), &format!("AKC{}", rnd(ALNUM, 8, 61)));
    discord_bot_token => plain("discord-bot-token",
        "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs",
        "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FM.ZnCjm1XVW7vRze4b7Cq4se7kKWs");
    gitlab_token => plain("gitlab-token", &format!("glcbt-{}", rnd(DASH, 24, 62)), &format!("glcbt-{}", rnd(DASH, 12, 62)));
    npm_auth_token => {
        let t = "743b294a-cd03-11ec-9d64-0242ac120002";
        check("npm-auth-token", &format!("//registry.npmjs.org/:_authToken={t}"), t,
              "//registry.npmjs.org/:_authToken=${NPM_TOKEN}");
    };
    password_hash => plain("password-hash",
        "$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG",
        "$argon2id$v=19$m=65536,t=3,p=4$");
    cli_password => check("cli-password", "exec: mysql -u root -pS3cretPass42 orders: exit 1", "S3cretPass42",
        "exec: mysql -u root -p 3306 orders: exit 1");
    zapier_webhook_url => check("zapier-webhook-url", "POST https://hooks.zapier.com/hooks/catch/1234567/abcdefg/ failed",
        "1234567/abcdefg", "POST https://hooks.zapier.com/hooks/ failed");
    ifttt_webhook_key => check("ifttt-webhook-key",
        "POST https://maker.ifttt.com/trigger/door_open/with/key/dQw4w9WgXcQabcdefghij12 failed", "dQw4w9WgXcQabcdefghij12",
        "POST https://maker.ifttt.com/trigger/door_open/with/key/dQw4w9 failed");
    webhook_url => check("webhook-url", "POST https://chat.example.com/hooks/xi8p3m1gqbyd7jn5fhz4t6kw2a failed",
        "xi8p3m1gqbyd7jn5fhz4t6kw2a", "POST https://chat.example.com/hooks/xi8p3m1gqbyd7jn5fhz4t6kw2 failed");
    url_signature => check("url-signature",
        "GET https://bucket.s3.amazonaws.com/x?X-Amz-Signature=4f2b9c0d8e7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c failed",
        "4f2b9c0d8e7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c",
        "GET https://bucket.s3.amazonaws.com/x?X-Amz-Signature=short failed");
    private_key => check("private-key",
        "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\nVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n-----END RSA PRIVATE KEY-----\nend",
        "u1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
        "key:\n-----BEGIN RSA PRIVATE KEY-----\n-----END RSA PRIVATE KEY-----\nend");
}

#[test]
fn every_secret_kind_has_a_case() {
    let mut covered: Vec<String> = COVERED.iter().map(|n| n.replace('_', "-")).collect();
    let gitleaks: serde_json::Value =
        serde_json::from_str(include_str!("../data/gitleaks/examples.json")).expect("examples parse");
    covered.extend(gitleaks["rules"].as_object().expect("rules").keys().cloned());
    // Nosey Parker's and Kingfisher's rules are checked on their own
    // examples (`noseyparker.rs`, `kingfisher.rs`).
    let mut with_examples: Vec<String> = Vec::new();
    for set in [
        include_str!("../data/noseyparker/rules.json"),
        include_str!("../data/kingfisher/rules.json"),
    ] {
        let rules: serde_json::Value = serde_json::from_str(set).expect("rules parse");
        with_examples.extend(
            rules["rules"]
                .as_array()
                .expect("rules")
                .iter()
                .filter(|r| r["examples"].as_array().is_some_and(|e| !e.is_empty()))
                .filter_map(|r| r["id"].as_str().map(str::to_owned)),
        );
    }
    covered.extend(
        toolgate_sanitize::baseline::vendored_rules()
            .into_iter()
            .filter(|(origin, _)| with_examples.iter().any(|w| w == origin))
            .map(|(_, kind)| kind.to_string()),
    );
    let mut secret_kinds = 0;
    for kind in Sanitizer::builtin_kinds() {
        if Sanitizer::builtin_category(kind) == Some(Category::Secret) {
            secret_kinds += 1;
            assert!(covered.iter().any(|c| c == kind), "no test case for secret kind {kind}");
        }
    }
    assert!(secret_kinds >= 60, "only {secret_kinds} secret kinds");
}

#[test]
fn builtin_kinds_are_unique() {
    let kinds = Sanitizer::builtin_kinds();
    let mut sorted = kinds.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), kinds.len());
}
