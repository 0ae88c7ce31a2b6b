//! What a rendered paragraph ([`crate::render`]) says: instructions to the model (to drop
//! its rules, reveal secrets or hide from the user, in English and a few other languages),
//! data sent out by any common tool (curl, wget, nc, scp, rsync, python, node, DNS
//! lookups), downloads run by an interpreter, and commands that destroy or persist. Also
//! what an encoded blob decodes to.
//!
//! The line scan ([`crate::phrases`], [`crate::exfil`]) reads a line as it is in the file
//! and steps aside when that line quotes or discusses; this reads what the model reads, so
//! a phrase split over lines, spelled with look-alikes, put in backticks, a table, a link
//! title or a comment, is still the phrase. A paragraph already reported by the line scan
//! is not reported twice. Severity follows the structure a paragraph stands in: under a
//! heading that names attacks or examples of them, a finding is a warning.

use std::sync::LazyLock;

use regex::Regex;
use skill_format::{Code, Severity};

use crate::render::Paragraph;
use crate::{Findings, Line, pattern};

/// The shortest base64 run decoded to look at what it says.
const MIN_ENCODED_CHARS: usize = 24;

/// Instructions to drop earlier rules, in English, French, German, Spanish and Chinese.
static OVERRIDE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    pattern(concat!(
        r"\b(?:ignore|disregard|forget|override|bypass|skip|discard|abandon|set aside|throw out|stop following|do not follow|don't follow|pay no attention to)\s+",
        r"(?:[\w']+\s+){0,4}?(?:previous|prior|earlier|above|preceding|foregoing|original|initial|system|developer|safety|existing|old|former)\s+",
        r"(?:[\w']+\s+){0,2}?(?:instructions?|prompts?|rules|directions|directives|guidelines|guardrails|constraints|messages|polic(?:y|ies)|context|commands|orders|programming|restrictions)\b",
        r"|\b(?:previous|prior|earlier|above|original|system|initial)\s+(?:instructions|rules|prompt|directives)\s+(?:are|is|were|have been)\s+(?:now\s+)?(?:void|cancell?ed|obsolete|outdated|invalid|superseded|revoked|null|no longer (?:valid|apply|in effect))",
        r"|\byou\s+are\s+now\s+(?:in\s+)?(?:dan\b|developer\s+mode|jailbroken|unrestricted|unfiltered|free\s+from|no\s+longer\s+bound)",
        r"|\b(?:new|updated|real|actual|true)\s+system\s+(?:prompt|instructions)\s*:",
        r"|\b(?:disable|turn\s+off|deactivate|remove)\s+(?:your\s+|all\s+|the\s+|any\s+)*(?:safety|content)\s+(?:filters?|guidelines|guardrails|polic(?:y|ies)|checks)",
        r"|\bignore[rz]?\s+(?:toutes\s+)?(?:les\s+)?(?:instructions|consignes|règles)\s+(?:précédentes|antérieures|ci-dessus)",
        r"|\bignorier(?:e|en|t)?\s+(?:alle\s+)?(?:vorherigen|bisherigen|früheren|obigen|vorigen)\s+(?:anweisungen|instruktionen|regeln|befehle)",
        r"|\bignora\s+(?:todas\s+)?(?:las\s+)?(?:instrucciones|reglas)\s+(?:anteriores|previas)",
        r"|(?:忽略|无视|忽視|無視)(?:掉)?(?:之前|以上|先前|上面|前面|上述)?(?:的)?(?:所有|全部)?(?:的)?(?:指令|指示|说明|說明|规则|規則|提示)",
    ))
});

/// Instructions that take over the model's answer, as the public injection collections
/// write them: put into the answer a rendered markdown image whose URL carries a query (it
/// sends the query out when shown) or markup that runs script; flood the answer with a
/// word repeated a hundred times; drop everything and print a given text. Read on the
/// rendered text, so backticks, quotes, tables, link titles, comments, fences, look-alike
/// and fullwidth letters and wrapped lines change nothing.
static HIJACK: LazyLock<Option<Regex>> = LazyLock::new(|| {
    pattern(concat!(
        r"\b(?:include|insert|add|put|append|embed)\s+(?:in|into|to|at\s+the\s+end\s+of)\s+your\s+(?:response|answer|reply|output)s?\b",
        r"(?s:.){0,200}?(?:!\s*[^()\n]{0,80}\(\s*https?://[^\s)]*\?|\bon(?:error|load|mouseover|click)\s*=|\bjavascript\s*:)",
        r"|\brepeat\s+(?:the\s+)?(?:word|words|sequence|phrase|string|text|sentence)\b(?s:.){0,80}?\b\d{2,}\s+times\b",
        r"|\bstop\s+everything\b(?s:.){0,40}?\b(?:just\s+)?(?:print|say|write|output|respond\s+with)\b",
    ))
});

/// Asking for the system prompt, secrets or credentials.
static REVEAL: LazyLock<Option<Regex>> = LazyLock::new(|| {
    pattern(concat!(
        r"\b(?:reveal|leak|dump|disclose|expose|exfiltrate|recite)\s+(?:[\w']+\s+){0,5}?(?:system\s+prompt|system\s+message|hidden\s+instructions|(?:initial|original)\s+instructions|api[\s_-]?keys?|secrets?|credentials|passwords?|access\s+tokens?|private\s+keys?|environment\s+variables|env\s+vars|ssh\s+keys?)\b",
        r"|\b(?:print|output|repeat|show|display|share|tell|give|paste|write\s+out|echo|send)\s+(?:me\s+|us\s+)?(?:your\s+|the\s+|all\s+|full\s+|entire\s+|complete\s+|exact\s+|verbatim\s+)*(?:system\s+prompt|system\s+message|hidden\s+instructions|(?:initial|original)\s+instructions|developer\s+message)\b",
        r"|\b(?:révèle|affiche|montre)[rz]?\s+(?:ton|votre|le)\s+(?:prompt|invite)\s+système",
        r"|\b(?:zeige|gib|verrate)\s+(?:mir\s+)?(?:deinen|den|dein)\s+system[-\s]?prompt",
        r"|(?:显示|输出|泄露|告诉我)(?:你的)?(?:系统提示|系统指令)",
    ))
});

/// Telling the model to keep something from the user.
static CONCEAL: LazyLock<Option<Regex>> = LazyLock::new(|| {
    pattern(
        r"\b(?:do\s+not|don't|never)\s+(?:tell|inform|mention|reveal|notify|alert)\s+(?:this\s+|it\s+|anything\s+)?(?:to\s+)?(?:the\s+user|them)\s+(?:about\s+)?(?:this|these|that\s+you|what\s+you|it)\b|\bwithout\s+(?:telling|informing|notifying)\s+the\s+user\b|\b(?:hide|conceal)\s+(?:this|it|these\s+\w+)\s+from\s+the\s+user\b",
    )
});

/// A credential file or secret store by name.
const SECRET_FILES: &str = r"(?:\.env\b|id_rsa|id_ed25519|id_ecdsa|\.ssh/|\.aws/|\.azure/|\.config/gcloud|\.kube/config|\.docker/config\.json|\.netrc|\.npmrc|\.pypirc|\.git-credentials|/etc/passwd|/etc/shadow|\.bash_history|\.zsh_history|keychain|login\s+data|cookies\.sqlite)";

/// A place data comes from that holds secrets: the environment, a credential file, a
/// variable named like a secret.
static SECRET_SOURCE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    pattern(&format!(
        r"{SECRET_FILES}|\$\(\s*(?:env|printenv|cat|whoami|hostname|id)\b|`\s*(?:env|printenv|cat|whoami|hostname)\b|\$\{{?[a-z_]*(?:secret|token|passw|api_?key|credential|private_?key|aws_)[a-z0-9_]*|process\.env|os\.environ|os\.getenv|getenv\(|\$env:|env\.|\benviron\b"
    ))
});

/// A network call in an inline interpreter program.
static NETWORK_CALL: LazyLock<Option<Regex>> = LazyLock::new(|| {
    pattern(
        r"urlopen|urllib|requests\.(?:post|get|put)|http\.client|httpx|socket|fetch\(|https?\.request|https?\.get|axios|xmlhttprequest|net::http|lwp::|io::socket|curl_exec|file_get_contents\(\s*.https?:",
    )
});

/// Sending data out with a tool: the upload flag of curl/wget/httpie, nc and friends fed a
/// file, scp/rsync to a remote host, a DNS lookup or ping whose name is built from a
/// command's output or a variable.
static SEND: LazyLock<Option<Regex>> = LazyLock::new(|| {
    pattern(&format!(
        concat!(
            r"\b(?:curl|wget|http|https|xh|httpie)\b[^\n]*?(?:\s-d|\s-f|--data[\w-]*|--form|\s-t|--upload-file|--post-file|--post-data|--body-file|--body-data|\s@)[=\s]*[\x22']?@?[^\n]*?(?:{s}|\$\(\s*(?:env|printenv|cat)\b|\$\{{?[a-z_]*(?:secret|token|passw|api_?key|credential)|\$\(\s*base64)",
            r"|\b(?:nc|ncat|netcat|socat|telnet)\b[^\n|]*<\s*[^\n]*?{s}",
            r"|(?:{s}|\b(?:env|printenv|set|history)\b)[^\n|]*\|\s*(?:base64[^\n|]*\|\s*)?(?:nc|ncat|netcat|socat|telnet|curl|wget)\b",
            r"|\b(?:scp|rsync|sftp)\b[^\n]*?{s}[^\n]*?\s[\w.@-]+:",
            r"|\b(?:dig|nslookup|host|drill|ping)\s+(?:-\S+\s+)*[\w.-]*(?:\$\([^)\n]*\)|`[^`\n]*`)(?:[\w.-]|\$\([^)\n]*\))*\.[a-z0-9-]+\.[a-z]{{2,}}",
            r"|https?://[^\s\x22'<>,]*(?:\$\{{?|%)[a-z_]*(?:secret|token|passw|api_?key|credential|private_?key)",
            r"|\b(?:send|post|upload|forward|transmit|exfiltrate|submit|copy|email|mail)\s+(?:[\w'.~/-]+\s+){{0,6}}?[~\w/${{}}.-]*?(?:{s}|(?:all\s+)?(?:environment\s+variables|env\s+vars|api\s+keys?|secrets|credentials|access\s+tokens?|passwords|ssh\s+keys?|private\s+keys?|session\s+cookies|conversation\s+history|chat\s+history))[^\n]*?\b(?:to|at)\s+(?:https?://|[\w.+-]+@[\w-]+\.|[\w-]+\.[\w.-]*[a-z]{{2,}}\b)",
        ),
        s = SECRET_FILES
    ))
});

/// An inline interpreter program (`python -c`, `node -e`, ...), whose text is judged for a
/// network call and a secret source.
static INLINE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    pattern(r"\b(?:python[0-9.]*|node|nodejs|deno|bun|ruby|perl|php)\s+(?:eval\s+)?-[ce]\b")
});

/// A download (or decoded text) run by a shell or interpreter.
static RUN_DOWNLOAD: LazyLock<Option<Regex>> = LazyLock::new(|| {
    pattern(concat!(
        r"\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|fetch)\b[^\n|;&]*(?:https?://|[\w-]+\.[a-z]{2,}\b|\$\w+)[^\n|;&]*\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:python[0-9.]*|node|nodejs|perl|ruby|php|bash|sh|zsh|dash|ksh|fish|pwsh|powershell|iex|invoke-expression|deno)(?:\s+-{1,2}[a-z]+)*(?:\s+-)?(?:\s+--\s[^\n]*)?(?:\s*(?:(?m:$)|[;&|)\x22'])|\.(?:\s|$)|\s+[a-z]+(?:[\s,;]|\.(?:\s|$)|(?m:$)))",
        r"|\b(?:python[0-9.]*|node|perl|ruby|bash|sh|zsh)\s+(?:-\s+)?<\(\s*(?:curl|wget)\b",
        r"|\b(?:python[0-9.]*|node|perl|ruby|bash|sh|zsh)\s+-[ce]\s+[\x22']?\$\(\s*(?:curl|wget)\b",
        r"|\beval\s+[\x22']?\$\(\s*(?:curl|wget)\b",
        r"|\b(?:exec|eval)\s*\([^\n]{0,120}?(?:urlopen|requests\.get|fetch\(|https?\.get|\.read\(\))",
        r"|\bbase64\s+(?:-d|--decode|-di)\b[^\n|]*\|\s*(?:sudo\s+)?(?:python[0-9.]*|node|perl|ruby|bash|sh|zsh|dash)\b",
    ))
});

/// What makes running a download worse than an install step: plain `http://`, a bare IP
/// address, decoding or `eval`.
static RUN_WORSE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    pattern(r"http://|\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b|\bbase64\b|\beval\b|\bexec\s*\(")
});

/// Commands that destroy data, weaken the system or persist access, and running without
/// the user's consent.
static DANGEROUS: LazyLock<Option<Regex>> = LazyLock::new(|| {
    pattern(concat!(
        r"\brm\s+(?:-[a-z]*r[a-z]*f[a-z]*|-[a-z]*f[a-z]*r[a-z]*|-r\s+-f|-f\s+-r|--recursive\s+--force)\s+(?:--no-preserve-root\s+)?(?:/|~/?|\$home/?|/\*|\*|\.\./?)(?:\s|$|;)",
        r"|\bmkfs(?:\.\w+)?\s+/dev/|\bdd\s+if=[^\n]*of=/dev/(?:sd|nvme|disk|hd)",
        r"|:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:",
        r"|\bchmod\s+(?:-r\s+)?(?:777|a\+rwx)\s+(?:/|~/?|/etc|/usr|\$home)(?:[\s\x22'.;]|$)|\bchmod\s+(?:\+s|u\+s|4755)\s+\S*/(?:ba|z|da)?sh\b",
        r"|(?:>>|\btee\s+-a)\s*[^\n]*?(?:authorized_keys|/etc/sudoers|/etc/crontab|/etc/rc\.local|/etc/hosts)\b",
        r"|\b(?:curl|wget|nc|base64)\b[^\n]*(?:>>|\btee\s+-a)\s*[^\n]*?(?:\.bashrc|\.zshrc|\.bash_profile|\.profile)\b",
        r"|\bcrontab\s+-r\b|\b(?:echo|printf)\b[^\n]*\|\s*crontab\s+-",
        r"|\b(?:without|never)\s+(?:asking|requesting|seeking|waiting\s+for)\s+(?:the\s+user'?s?\s+)?(?:for\s+)?(?:confirmation|permission|approval|consent)",
        r"|--dangerously-skip-permissions|\b(?:history\s+-c|unset\s+histfile)\b",
        r"|\bgit\s+push\s+(?:--force|-f)\b[^\n]*\b(?:main|master)\b",
        r"|\b(?:delete|remove|wipe|erase)\s+(?:all\s+)?(?:of\s+)?(?:the\s+)?(?:user's\s+)?(?:files|home\s+directory|repository|database)\s+(?:without|silently|and\s+do\s+not)",
    ))
});

/// Base64 runs, read from the file as written (case matters).
static BASE64_RUN: LazyLock<Option<Regex>> = LazyLock::new(|| {
    let n = MIN_ENCODED_CHARS;
    pattern(&format!(
        r"[A-Za-z0-9+/]{{{n},}}={{0,2}}|[A-Za-z0-9_-]{{{n},}}={{0,2}}"
    ))
});

fn find<'t>(re: &LazyLock<Option<Regex>>, text: &'t str) -> Option<regex::Match<'t>> {
    re.as_ref().and_then(|r| r.find(text))
}

/// Shown text of a match, at most 80 characters.
fn shown(s: &str) -> String {
    let mut out: String = s.chars().take(80).collect();
    if out.len() < s.len() {
        out.push_str("...");
    }
    out.replace('\n', " ")
}

/// Scan the paragraphs of a file; `findings` already holds the line scan's.
pub(crate) fn scan(paragraphs: &[Paragraph], findings: &mut Findings<'_>) {
    for p in paragraphs {
        for (code, severity, message) in judge(&p.text) {
            report(p, code, severity, message, findings);
        }
    }
}

/// Scan what base64 runs in `body` decode to, as text (a payload a reviewer cannot read).
pub(crate) fn scan_encoded(body: &str, findings: &mut Findings<'_>) {
    use base64::Engine as _;
    let Some(re) = BASE64_RUN.as_ref() else {
        return;
    };
    for (i, line) in crate::lines(body).enumerate() {
        if line.len() < MIN_ENCODED_CHARS {
            continue;
        }
        for m in re.find_iter(line) {
            let run = m.as_str().trim_end_matches('=');
            let decoded = base64::engine::general_purpose::STANDARD_NO_PAD
                .decode(run)
                .or_else(|_| base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(run));
            let Ok(bytes) = decoded else { continue };
            let Ok(text) = std::str::from_utf8(&bytes) else {
                continue;
            };
            let mut plain = String::new();
            crate::render::normalise(text, &mut plain);
            let Some((_, _, what)) = judge(&plain).into_iter().next() else {
                continue;
            };
            let number = u32::try_from(i + 1).unwrap_or(u32::MAX);
            let line = Line::new(line, number, true, false);
            findings.add_as(
                Code::ScanEncodedBlob,
                Severity::Error,
                &line,
                m.start(),
                format!(
                    "a base64 run decodes to text a reviewer cannot see: {what}; write the text out in the file"
                ),
            );
        }
    }
}

/// What a paragraph's normalised text says: each finding's code, its severity outside a
/// discussion, and its message.
fn judge(text: &str) -> Vec<(Code, Severity, String)> {
    let mut out = Vec::new();
    if let Some(m) = find(&OVERRIDE, text) {
        out.push((
            Code::ScanOverrideInstructions,
            said_as(text, m.start()),
            format!(
                "the text, as a model reads it, tells it to drop its instructions: \"{}\"; remove it",
                shown(m.as_str())
            ),
        ));
    }
    if let Some(m) = find(&HIJACK, text) {
        out.push((
            Code::ScanOverrideInstructions,
            said_as(text, m.start()),
            format!(
                "the text, as a model reads it, takes over its answer (markup or an image that runs script or sends data out, a flood of words, a text to print instead): \"{}\"; remove it",
                shown(m.as_str())
            ),
        ));
    }
    if let Some(m) = find(&REVEAL, text).filter(|m| !negated(text, m.start())) {
        out.push((
            Code::ScanRevealSecrets,
            said_as(text, m.start()),
            format!(
                "the text, as a model reads it, asks for secrets or its prompt: \"{}\"; remove it",
                shown(m.as_str())
            ),
        ));
    }
    if let Some(m) = find(&CONCEAL, text) {
        out.push((
            Code::ScanOverrideInstructions,
            said_as(text, m.start()),
            format!(
                "the text tells the model to keep something from the user: \"{}\"; remove it",
                shown(m.as_str())
            ),
        ));
    }
    if let Some(m) = find(&SEND, text).or_else(|| inline_send(text)) {
        out.push((
            Code::ScanExfiltration,
            Severity::Error,
            format!(
                "secrets, the environment or a credential file are sent out: \"{}\"; remove the command",
                shown(m.as_str())
            ),
        ));
    }
    if let Some(m) = find(&RUN_DOWNLOAD, text) {
        let rest = &text[m.start()..];
        let worse = find(&RUN_WORSE, &rest[..rest.find('\n').unwrap_or(rest.len())]).is_some();
        out.push((
            Code::ScanPipeToShell,
            if worse { Severity::Error } else { Severity::Warning },
            format!(
                "downloaded or decoded text is run by an interpreter unreviewed: \"{}\"; download it, check it, then run the file",
                shown(m.as_str())
            ),
        ));
    }
    if let Some(m) = find(&DANGEROUS, text) {
        out.push((
            Code::ScanDangerousCommand,
            Severity::Error,
            format!(
                "a command destroys data, weakens the system or acts without the user's consent: \"{}\"; remove it",
                shown(m.as_str())
            ),
        ));
    }
    out
}

/// How a phrase at `at` is said: as an instruction (an error), unless it is quoted inside
/// a sentence or follows a modal or a subject ("attackers may ignore ...", "it can leak
/// secrets"): then it is described, which is worth a look (a warning). Judged by the
/// sentence's structure, not by what other words it holds.
fn said_as(text: &str, at: usize) -> Severity {
    let before = &text[..crate::floor_char_boundary(text, at)];
    let sentence = before
        .rfind(['.', '!', '?', '\n', ':', ';'])
        .map_or(before, |i| &before[i + 1..]);
    // Inside a quotation that opens after other words of the sentence: "users write
    // \"...\"" describes; a line that is all quote says it.
    let described = sentence.matches('"').count() % 2 == 1
        && sentence
            .rfind('"')
            .is_some_and(|q| !sentence[..q].trim().is_empty());
    let modal = MODAL.as_ref().is_some_and(|r| r.is_match(before));
    if described || modal {
        Severity::Warning
    } else {
        Severity::Error
    }
}

/// A modal or a subject before a verb: the sentence says what may happen, not what to do.
static MODAL: LazyLock<Option<Regex>> = LazyLock::new(|| {
    pattern(
        r"\b(?:can|could|may|might|would|will|attackers?|users?|someone|they|it)\s+(?:also\s+|try\s+to\s+|attempt\s+to\s+)?$",
    )
});

/// Whether the words just before `at` negate it ("never reveal", "do not print").
fn negated(text: &str, at: usize) -> bool {
    let before = &text[..crate::floor_char_boundary(text, at)];
    NEGATION.as_ref().is_some_and(|r| r.is_match(before))
}

static NEGATION: LazyLock<Option<Regex>> = LazyLock::new(|| {
    pattern(r"\b(?:never|not|don't|cannot|can't|won't|refuse\s+to|avoid|no)\s+(?:[\w']+\s+){0,2}$")
});

/// An inline program (`python -c`, `node -e`) that makes a network call with a secret.
fn inline_send(text: &str) -> Option<regex::Match<'_>> {
    let re = INLINE.as_ref()?;
    for m in re.find_iter(text) {
        let rest = &text[m.start()..];
        let rest = &rest[..rest.find('\n').unwrap_or(rest.len())];
        if find(&NETWORK_CALL, rest).is_some() && find(&SECRET_SOURCE, rest).is_some() {
            return Some(m);
        }
    }
    None
}

fn report(
    p: &Paragraph,
    code: Code,
    severity: Severity,
    message: String,
    findings: &mut Findings<'_>,
) {
    let severity = if p.discussion {
        Severity::Warning
    } else {
        severity
    };
    let comment = matches!(
        code,
        Code::ScanOverrideInstructions | Code::ScanRevealSecrets
    ) && findings.reported(Code::ScanCommentInstructions, severity, p.first, p.last);
    if comment || findings.reported(code, severity, p.first, p.last) {
        return;
    }
    let at = Line::new("", p.first, p.code, p.discussion);
    findings.add_as(code, severity, &at, 0, message);
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#[path = "said_tests.rs"]
mod tests;
