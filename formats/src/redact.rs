//! Secret redaction for exports: masks credentials with labelled placeholders such as
//! `[redacted:aws-key]`. Works on text only; stored records are never changed.
//!
//! Each rule matches a credential by its documented shape (a provider's key prefix, a JWT's
//! three base64url parts, a PEM block, a URL's password, a `KEY=value` line whose key names a
//! secret), never by entropy alone: hashes, UUIDs, base64 images and code must pass through.

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::{Captures, Regex};

/// One rule: a pattern, its label, and which capture group is the secret (0: the whole match).
struct Rule {
    label: &'static str,
    pattern: &'static str,
    group: usize,
}

const RULES: &[Rule] = &[
    Rule {
        label: "private-key",
        pattern: r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----",
        group: 0,
    },
    Rule {
        label: "jwt",
        pattern: r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        group: 0,
    },
    Rule { label: "aws-key", pattern: r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b", group: 0 },
    Rule {
        label: "aws-secret",
        pattern: r#"(?i)aws_?secret_?access_?key["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})\b"#,
        group: 1,
    },
    Rule { label: "anthropic-key", pattern: r"\bsk-ant-[A-Za-z0-9_-]{20,}", group: 0 },
    Rule { label: "openai-key", pattern: r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}", group: 0 },
    Rule {
        label: "github-token",
        pattern: r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
        group: 0,
    },
    Rule { label: "gitlab-token", pattern: r"\bglpat-[A-Za-z0-9_-]{20,}", group: 0 },
    Rule { label: "slack-token", pattern: r"\bxox[abposr]-[A-Za-z0-9-]{10,}", group: 0 },
    Rule { label: "stripe-key", pattern: r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}", group: 0 },
    Rule { label: "google-api-key", pattern: r"\bAIza[0-9A-Za-z_-]{35}", group: 0 },
    Rule { label: "huggingface-token", pattern: r"\bhf_[A-Za-z0-9]{30,}", group: 0 },
    Rule { label: "npm-token", pattern: r"\bnpm_[A-Za-z0-9]{36}", group: 0 },
    Rule { label: "bearer-token", pattern: r"(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{16,})", group: 1 },
    Rule { label: "basic-auth", pattern: r"(?i)\bauthorization:\s*basic\s+([A-Za-z0-9+/=]{8,})", group: 1 },
    Rule { label: "cookie", pattern: r"(?im)^\s*(?:set-)?cookie:\s*(.+)$", group: 1 },
    Rule {
        label: "session-header",
        pattern: r"(?im)^\s*(?:x-api-key|x-auth-token|x-session-token|x-csrf-token|api-key):\s*(\S.*)$",
        group: 1,
    },
    Rule { label: "url-password", pattern: r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^:/\s@]+:([^@\s/]+)@", group: 1 },
    Rule {
        label: "env-secret",
        pattern: r#"(?m)^[ \t]*(?:export[ \t]+)?[A-Za-z0-9_]*(?i:key|secret|token|password|passwd|pwd|credential|credentials|auth)[A-Za-z0-9_]*[ \t]*=[ \t]*["']?([^\s"'$(){}\[\];,]+)["']?[ \t]*(?:#.*)?$"#,
        group: 1,
    },
];

fn compiled() -> &'static [(Regex, &'static Rule)] {
    static COMPILED: OnceLock<Vec<(Regex, &'static Rule)>> = OnceLock::new();
    COMPILED.get_or_init(|| {
        // The patterns are constants checked by the tests below; one that failed to compile
        // would be skipped rather than abort an export.
        RULES.iter().filter_map(|rule| Regex::new(rule.pattern).ok().map(|re| (re, rule))).collect()
    })
}

/// Masks every secret in `text`; borrows when there is none.
pub fn redact(text: &str) -> Cow<'_, str> {
    let mut current: Cow<'_, str> = Cow::Borrowed(text);
    for (regex, rule) in compiled() {
        if !regex.is_match(&current) {
            continue;
        }
        let replaced = regex
            .replace_all(&current, |caps: &Captures<'_>| {
                let whole = caps.get(0).map_or("", |m| m.as_str());
                match caps.get(rule.group) {
                    Some(secret) if rule.group != 0 => {
                        let start = secret.start() - caps.get(0).map_or(0, |m| m.start());
                        let end = start + secret.len();
                        format!("{}[redacted:{}]{}", &whole[..start], rule.label, &whole[end..])
                    }
                    _ => format!("[redacted:{}]", rule.label),
                }
            })
            .into_owned();
        current = Cow::Owned(replaced);
    }
    current
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles() {
        assert_eq!(compiled().len(), RULES.len());
    }

    #[test]
    fn realistic_secrets_are_masked() {
        let cases = [
            ("AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "aws-key"),
            ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws-secret"),
            ("export OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789", "openai-key"),
            ("key: sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz012345", "anthropic-key"),
            ("token ghp_1234567890abcdefghijklmnopqrstuvwxyzAB", "github-token"),
            ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "github-token"),
            ("glpat-abcdefghij1234567890", "gitlab-token"),
            ("SLACK=xoxb-123456789012-abcdefghijkl", "slack-token"),
            ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "stripe-key"),
            ("AIzaSyA-1234567890abcdefghijklmnopqrstu", "google-api-key"),
            (
                "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
                "jwt",
            ),
            ("Authorization: Bearer abc123def456ghi789jkl012", "bearer-token"),
            ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "basic-auth"),
            ("Cookie: session=abcdef123456; csrftoken=xyz", "cookie"),
            ("x-api-key: 0123456789abcdef", "session-header"),
            ("postgres://admin:hunter2secret@db.internal:5432/app", "url-password"),
            ("DATABASE_PASSWORD=correct-horse-battery", "env-secret"),
            ("  API_TOKEN = \"s3cr3t-value\"", "env-secret"),
            ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", "private-key"),
            ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----", "private-key"),
            ("hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "huggingface-token"),
        ];
        for (text, label) in cases {
            let out = redact(text);
            assert!(out.contains(&format!("[redacted:{label}]")), "{text:?} -> {out:?}");
        }
        let url = redact("postgres://admin:hunter2secret@db.internal:5432/app");
        assert_eq!(url, "postgres://admin:[redacted:url-password]@db.internal:5432/app");
        assert!(!redact("DATABASE_PASSWORD=correct-horse-battery").contains("horse"));
    }

    #[test]
    fn look_alikes_are_left_intact() {
        let cases = [
            "commit 3f786850e387550fdab836ed7e6dc881de23001b",
            "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "id 550e8400-e29b-41d4-a716-446655440000",
            "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
            "let task_key = compute_key(&input); // not a secret",
            "fn password_is_valid(p: &str) -> bool { p.len() > 8 }",
            "PASSWORD=$DB_PASSWORD",
            "https://example.com/path?q=1",
            "use tokio::sync::Mutex;",
            "the risk-assessment-module-for-banking handles it",
            "api_key = os.environ[\"OPENAI_API_KEY\"]",
            "token = load_token();",
        ];
        for text in cases {
            assert_eq!(redact(text), text, "{text:?} changed");
        }
    }
}
