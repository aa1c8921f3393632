//! The credential classes no vendor rule names, one case per format an
//! error body carries them in: a password by the name of its key, a
//! credential on a command line, a password hash, a URL that is itself a
//! credential. Each case is written out by hand with the secret it holds;
//! the secret must be gone and the rest of the line kept. The negatives are
//! references and placeholders, which must pass unchanged.

use toolgate_sanitize::{Category, Sanitizer};

fn sanitizer() -> Sanitizer {
    Sanitizer::builder()
        .max_len(usize::MAX)
        .build()
        .expect("default builds")
}

/// (text, the secret in it)
const POSITIVES: &[(&str, &str)] = &[
    // YAML, INI, TOML, .env, Java properties
    ("database:\n  password: Tr0ub4dor&3\n", "Tr0ub4dor&3"),
    ("[smtp]\npassword = hunter2hunter2\n", "hunter2hunter2"),
    ("db_password = \"c0rrect-horse\"\n", "c0rrect-horse"),
    ("DB_PASSWORD=Xk29mPq7zz\n", "Xk29mPq7zz"),
    ("spring.datasource.password=S3cr3tValue!\n", "S3cr3tValue!"),
    // JSON, escaped JSON
    (r#"{"user":"svc","password":"p@ssW0rd-2024"}"#, "p@ssW0rd-2024"),
    (
        r#"{"detail":"{\"client_secret\":\"9f8e7d6c5b4a39281706\"}"}"#,
        "9f8e7d6c5b4a39281706",
    ),
    // XML attributes and elements
    (r#"<add key="Password" value="Winter2024!"/>"#, "Winter2024!"),
    ("<password>Sup3rS3cret</password>", "Sup3rS3cret"),
    // code
    (r#"$password = "L3tMeIn!";"#, "L3tMeIn!"),
    (":password => 'rubyP4ss'", "rubyP4ss"),
    ("password='py7h0nPass'", "py7h0nPass"),
    (r#"my_password := "g0langPass""#, "g0langPass"),
    (r#"const apiKey = "sk9f8e7d6c5b4a3928";"#, "sk9f8e7d6c5b4a3928"),
    (r#"if creds.Secret != "notSoS3cret99" {"#, "notSoS3cret99"),
    (r#"conn.setPassword("j4vaPassw0rd");"#, "j4vaPassw0rd"),
    (r#"var cfg = new Config { Password = "cSharpP4ss" };"#, "cSharpP4ss"),
    // build DSLs
    (
        "credentials {\n  username 'deploy'\n  password 'gr4dleP4ss'\n}",
        "gr4dleP4ss",
    ),
    // connection strings
    ("Server=db;Database=app;User Id=app;Password=Xk29!mPq;", "Xk29!mPq"),
    ("Driver={ODBC};Uid=app;Pwd=0dbcP4ss;", "0dbcP4ss"),
    ("jdbc:postgresql://db:5432/app?user=app&password=Jdbc2024x", "Jdbc2024x"),
    // command lines
    ("mysql -u root -pS3cretPass42 orders", "S3cretPass42"),
    ("deploy --password Hunter2Hunter2 --host prod", "Hunter2Hunter2"),
    ("Connect-Thing -Password Pwsh2024x -Force", "Pwsh2024x"),
    ("sshpass -p 'ssh9Pass' ssh admin@host", "ssh9Pass"),
    // keys by vendor name, as Kingfisher's examples write them
    (
        "CROWDIN_SECRET=ABCDEFGHIJKLMNOPQRSTUVWX1234",
        "ABCDEFGHIJKLMNOPQRSTUVWX1234",
    ),
    (
        "AXONAUT_API_KEY=12345678901234567890123456789012",
        "12345678901234567890123456789012",
    ),
    // password hashes
    (
        "root:$y$j9T$F5Jx5fExrKuPp53xLKQ..1$X3DX6M94c7o.9agCG9G317fhZg9SqC.5i5rd.RhAtQ7:19000:0:99999:7:::",
        "X3DX6M94c7o.9agCG9G317fhZg9SqC.5i5rd.RhAtQ7",
    ),
    (
        "hash $argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG",
        "RdescudvJCsgt3ub+b+dWRWJTmaaJObG",
    ),
    (
        "pbkdf2_sha256$260000$Hk1Zp4lS9JZyZ0eY2n0V2c$2b7yQxO3rJ4v8sB1hF5dK9mN3pL6tR0wE8uI2oA4s=",
        "2b7yQxO3rJ4v8sB1hF5dK9mN3pL6tR0wE8uI2oA4s=",
    ),
    (
        "$pbkdf2-sha256$29000$N2bsPSfkfK/1XmuNUSqF0A$wk3fpbXMGs0RVt4.1vbhy1lQJSdvtQA2lwqcA/1wqZ0",
        "wk3fpbXMGs0RVt4.1vbhy1lQJSdvtQA2lwqcA/1wqZ0",
    ),
    (
        "$krb5tgs$23$*sqlsvc$CORP.LOCAL$MSSQLSvc/sql01*$3a7f2c9d0e1b4a5f$8c2d9e3f7a1b6c0d4e5f",
        "3a7f2c9d0e1b4a5f$8c2d9e3f7a1b6c0d4e5f",
    ),
    (
        "userPassword: {SSHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=",
        "W6ph5Mm5Pz8GgiULbPgzG37mj9g=",
    ),
    // URLs that are credentials
    (
        "POST https://hooks.zapier.com/hooks/catch/1234567/abcdefg/ failed",
        "1234567/abcdefg",
    ),
    (
        "GET https://api.example.com/v1/export?format=csv&access_token=9f8e7d6c5b4a39281706f5e4 401",
        "9f8e7d6c5b4a39281706f5e4",
    ),
    (
        "GET https://files.example.com/a.pdf?X-Amz-Signature=4f2b9c0d8e7a6b5c4d3e2f1a0b9c8d7e 403",
        "4f2b9c0d8e7a6b5c4d3e2f1a0b9c8d7e",
    ),
];

/// Texts with a secret's name but no secret: references, templates,
/// placeholders, prose.
const NEGATIVES: &[&str] = &[
    "password: ${DB_PASS}",
    "password=$PASSWORD",
    "set PASSWORD=%PASS%",
    "password: {{ .Values.db.password }}",
    "\"password\": \"<your password>\"",
    "DB_PASSWORD=changeme",
    "api_key = \"YOUR_API_KEY\"",
    "password = os.environ[\"DB_PASSWORD\"]",
    "token = config.auth.token",
    "password: ********",
    "password: required",
    "password_hint = 'first pet'",
    "error: password must be at least 12 characters",
    "Permission denied (publickey,password).",
    "the token has expired; sign in again",
    "max_tokens = 4096",
    "psql -h db -U app -p 5432 orders",
    "bypass = true",
    "password = \"\"",
];

#[test]
fn every_class_loses_its_secret_and_keeps_the_rest() {
    let s = sanitizer();
    let mut failures = Vec::new();
    for &(text, secret) in POSITIVES {
        let out = s.sanitize(text);
        let found = out.findings.iter().any(|f| f.category == Category::Secret);
        if !found || out.text.contains(secret) {
            failures.push(format!("{text:?} -> {:?}", out.text));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {}:\n{}",
        failures.len(),
        POSITIVES.len(),
        failures.join("\n")
    );
}

#[test]
fn references_and_placeholders_pass_unchanged() {
    let s = sanitizer();
    let changed: Vec<String> = NEGATIVES
        .iter()
        .filter_map(|&text| {
            let out = s.sanitize(text).text;
            (out != text).then(|| format!("{text:?} -> {out:?}"))
        })
        .collect();
    assert!(
        changed.is_empty(),
        "{} of {}:\n{}",
        changed.len(),
        NEGATIVES.len(),
        changed.join("\n")
    );
}

#[test]
fn a_dotted_token_is_no_field_reference() {
    // Three short-looking segments are a field path; a JWT's are long.
    let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5NXgL0n3I9PlFUP0THsR8U";
    let out = sanitizer().sanitize(&format!("Authorization: Bearer {jwt}"));
    assert!(!out.text.contains("dozjgNryP4J3jVmNHl0w5N"), "{}", out.text);
}
