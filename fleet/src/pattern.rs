//! Session name patterns (`--sessions`): `*` any text, `?` one character.

/// Whether `name` matches `pattern`: `*` any text (also none), `?` one character.
pub(crate) fn glob(pattern: &str, name: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    let (mut p, mut n, mut star, mut mark) = (0, 0, None, 0);
    while n < name.len() {
        if p < pattern.len() && (pattern[p] == '?' || pattern[p] == name[n]) {
            p += 1;
            n += 1;
        } else if p < pattern.len() && pattern[p] == '*' {
            star = Some(p);
            mark = n;
            p += 1;
        } else if let Some(s) = star {
            p = s + 1;
            mark += 1;
            n = mark;
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::glob;

    #[test]
    fn globs() {
        assert!(glob("claude:*", "claude:abc"));
        assert!(glob("*", ""));
        assert!(glob("a?c", "a日c"));
        assert!(!glob("a?c", "ac"));
        assert!(glob("*セッ*ン", "日本語のセッション"));
        assert!(!glob("codex:*", "claude:x"));
    }
}
