//! Format-specific cases from the reference list: URL and connection
//! string credentials (S3), PEM variants (S4) and JWT variants (S5).

use std::sync::OnceLock;
use toolgate_sanitize::Sanitizer;

fn san() -> &'static Sanitizer {
    static S: OnceLock<Sanitizer> = OnceLock::new();
    S.get_or_init(Sanitizer::default)
}

fn text(t: &str) -> String {
    san().sanitize(t).text
}

#[test]
fn url_credentials_keep_user_and_public_host() {
    assert_eq!(
        text("GET https://deploy:Zq9!x7Lw@registry.example.com/v2/ failed"),
        "GET https://deploy:[redacted:url-password]@registry.example.com/v2/ failed"
    );
    assert_eq!(
        text("mongodb+srv://svc:p@ss@w0rd@cluster0.example.net/db"),
        "mongodb+srv://svc:[redacted:url-password]@cluster0.example.net/db"
    );
    // No password, nothing to redact.
    assert_eq!(text("ssh://git@github.com/acme/x"), "ssh://git@github.com/acme/x");
}

#[test]
fn connection_string_passwords() {
    assert_eq!(
        text("Server=sql.example.com;Database=app;User Id=app;Password=Xk29!mPq;"),
        "Server=sql.example.com;Database=app;User Id=app;Password=[redacted:credentials-in-odbc-connection-string];"
    );
    assert_eq!(
        text("jdbc:mysql://sql.example.com:3306/app?user=app&password=Xk29mPq7"),
        "jdbc:mysql://sql.example.com:3306/app?user=app&password=[redacted:generic-password]"
    );
}

#[test]
fn pem_variants_are_redacted_whole() {
    let body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\nVJTUt9Us8cKjMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu\n";
    for label in [
        "RSA PRIVATE KEY",
        "EC PRIVATE KEY",
        "OPENSSH PRIVATE KEY",
        "PRIVATE KEY",
        "ENCRYPTED PRIVATE KEY",
        "PGP PRIVATE KEY BLOCK",
    ] {
        let t = format!("key:\n-----BEGIN {label}-----\n{body}-----END {label}-----\ndone");
        assert_eq!(text(&t), "key:\n[redacted:private-key]\ndone", "{label}");
    }
}

#[test]
fn pem_inside_json_with_escaped_newlines() {
    let t = r#"{"private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcw\nggSjAgEAAoIBAQC7VJTUt9Us8cKjMzEfYyji\n-----END PRIVATE KEY-----\n", "x": 1}"#;
    assert_eq!(text(t), r#"{"private_key": "[redacted:private-key]\n", "x": 1}"#);
}

#[test]
fn truncated_pem_without_end_is_still_redacted() {
    let t = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\nVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u\n\nthen the log goes on";
    assert_eq!(text(t), "[redacted:private-key]\n\nthen the log goes on");
}

#[test]
fn empty_pem_and_public_keys_are_not_secrets() {
    for t in [
        "-----BEGIN RSA PRIVATE KEY-----\n-----END RSA PRIVATE KEY-----",
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n-----END PUBLIC KEY-----",
        "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\n-----END CERTIFICATE-----",
    ] {
        assert_eq!(text(t), t);
    }
}

#[test]
fn jwt_variants() {
    for (t, expected) in [
        // Unsigned (alg none, empty signature).
        (
            "tok eyJhbGciOiJub25lIn0.eyJzdWIiOiIxMjMifQ. end",
            "tok [redacted:jwt] end",
        ),
        // Unicode claims.
        (
            "tok eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJuYW1lIjoiSm9zw6kgTcO8bGxlciIsImVtb2ppIjoi4pyTIn0.c2lnbmF0dXJlX2J5dGVz end",
            "tok [redacted:jwt] end",
        ),
        // Wrapped across lines after the dots.
        (
            "tok eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.\r\neyJzdWIiOiIxMjMifQ.\r\nc2lnbmF0dXJlX2J5dGVz end",
            "tok [redacted:jwt] end",
        ),
    ] {
        assert_eq!(text(t), expected);
    }
}

#[test]
fn jwt_look_alikes_are_kept() {
    for t in [
        "eyJAAAA.eyJBBB",
        "tok eyJAAAAAAAA.eyJBBBBBBBB.CCCC end",
        r#"decoded {"alg":"HS256"}.{"sub":"1"} end"#,
    ] {
        assert_eq!(text(t), t);
    }
}
