//! Outgoing mail. [`Mailer`] is the port the application sends through; two adapters
//! implement it: [`SmtpMailer`] (production, `ETAPPE_SMTP_URL`, via `lettre`) and
//! [`FileMailbox`] (the embedded default: one `.eml` file per message under a directory, which
//! `etappe mail last` prints, so a login link can be followed without a mail server).
//!
//! Both build the same RFC 5322 message with lettre's builder, so what the file mailbox holds
//! is byte for byte what SMTP would have sent.

use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;
use lettre::message::{Mailbox, header::ContentType};
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};

/// A message to send: plain text, one recipient.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mail {
    pub to: String,
    pub subject: String,
    pub text: String,
}

/// Why a message was not sent. Never carries the message's body (it may hold a login link).
#[derive(Debug, thiserror::Error)]
pub enum MailError {
    #[error("invalid address: {0}")]
    Address(String),
    #[error("the message cannot be built: {0}")]
    Build(String),
    #[error("the SMTP server refused or could not be reached: {0}")]
    Smtp(String),
    #[error("the mailbox directory cannot be written: {0}")]
    Io(#[from] std::io::Error),
    #[error("invalid SMTP URL: {0}")]
    Url(String),
}

/// Sends mail.
#[async_trait]
pub trait Mailer: Send + Sync + std::fmt::Debug {
    async fn send(&self, mail: &Mail) -> Result<(), MailError>;
}

fn build(from: &Mailbox, mail: &Mail) -> Result<lettre::Message, MailError> {
    let to: Mailbox = mail
        .to
        .parse()
        .map_err(|e: lettre::address::AddressError| MailError::Address(e.to_string()))?;
    lettre::Message::builder()
        .from(from.clone())
        .to(to)
        .subject(mail.subject.clone())
        .header(ContentType::TEXT_PLAIN)
        .body(mail.text.clone())
        .map_err(|e| MailError::Build(e.to_string()))
}

fn sender(from: &str) -> Result<Mailbox, MailError> {
    from.parse()
        .map_err(|e: lettre::address::AddressError| MailError::Address(format!("{from:?}: {e}")))
}

/// Mail through an SMTP server.
#[derive(Clone)]
pub struct SmtpMailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl std::fmt::Debug for SmtpMailer {
    // The URL may hold a password: never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmtpMailer")
            .field("from", &self.from.to_string())
            .finish_non_exhaustive()
    }
}

impl SmtpMailer {
    /// A mailer for `url`: `smtp://host:port` (plain, or STARTTLS with `?tls=required`),
    /// `smtps://host:port` (implicit TLS); `user:password@` for AUTH. Sends as `from`.
    pub fn new(url: &str, from: &str) -> Result<Self, MailError> {
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
            // The error text may quote the URL, password included: say only what is wrong.
            .map_err(|_| {
                MailError::Url(
                    "expected smtp://[user:password@]host[:port][?tls=required] or smtps://…"
                        .into(),
                )
            })?
            .timeout(Some(Duration::from_secs(20)))
            .build();
        Ok(Self {
            transport,
            from: sender(from)?,
        })
    }
}

#[async_trait]
impl Mailer for SmtpMailer {
    async fn send(&self, mail: &Mail) -> Result<(), MailError> {
        let message = build(&self.from, mail)?;
        self.transport
            .send(message)
            .await
            .map(|_| ())
            .map_err(|e| MailError::Smtp(e.to_string()))
    }
}

/// Mail kept as files: `<dir>/<UTC time>-<id>.eml`, one per message, newest last by name.
#[derive(Clone, Debug)]
pub struct FileMailbox {
    dir: PathBuf,
    from: Mailbox,
}

impl FileMailbox {
    /// A mailbox under `dir` (created when the first message arrives), sending as `from`.
    pub fn new(dir: impl Into<PathBuf>, from: &str) -> Result<Self, MailError> {
        Ok(Self {
            dir: dir.into(),
            from: sender(from)?,
        })
    }

    /// Where the messages are.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

#[async_trait]
impl Mailer for FileMailbox {
    async fn send(&self, mail: &Mail) -> Result<(), MailError> {
        let message = build(&self.from, mail)?;
        tokio::fs::create_dir_all(&self.dir).await?;
        // The time first, so that names sort in arrival order; the id keeps two messages of
        // the same microsecond apart. Written under a temporary name and renamed, so a reader
        // never sees half a message.
        let name = format!(
            "{}-{}.eml",
            chrono::Utc::now().format("%Y%m%dT%H%M%S%.6fZ"),
            uuid::Uuid::now_v7().simple()
        );
        let partial = self.dir.join(format!(".{name}.partial"));
        tokio::fs::write(&partial, message.formatted()).await?;
        tokio::fs::rename(&partial, self.dir.join(&name)).await?;
        Ok(())
    }
}

/// The newest message of the mailbox under `dir`, as its file holds it (`None`: empty).
pub fn last_message(dir: &Path) -> std::io::Result<Option<(PathBuf, String)>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let newest = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "eml")
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .max();
    newest
        .map(|path| std::fs::read_to_string(&path).map(|text| (path, text)))
        .transpose()
}

/// The text body of an RFC 5322 message as the builder writes it (headers, a blank line,
/// then the body, quoted-printable when lines are long): for tests and `etappe mail last`.
pub fn body_of(message: &str) -> String {
    let (headers, body) = message
        .split_once("\r\n\r\n")
        .or_else(|| message.split_once("\n\n"))
        .unwrap_or(("", message));
    let quoted = headers
        .to_ascii_lowercase()
        .contains("content-transfer-encoding: quoted-printable");
    if !quoted {
        return body.to_owned();
    }
    // Undo quoted-printable: soft line breaks (`=` at the end of a line) and `=XX` escapes.
    let joined = body.replace("=\r\n", "").replace("=\n", "");
    let bytes = joined.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'='
            && i + 2 < bytes.len()
            && let Some(byte) = std::str::from_utf8(&bytes[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_file_mailbox_keeps_one_message_per_file_and_answers_the_newest() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mailbox = FileMailbox::new(dir.path().join("mailbox"), "Etappe <etappe@localhost>")
            .expect("mailbox");
        assert!(last_message(mailbox.dir()).expect("read").is_none());
        for n in 1..=3 {
            mailbox
                .send(&Mail {
                    to: "rider@example.org".into(),
                    subject: format!("message {n}"),
                    text: format!(
                        "link http://127.0.0.1:8080/auth/magic?token={}\n",
                        "ab".repeat(40)
                    ),
                })
                .await
                .expect("sent");
        }
        let (_, text) = last_message(mailbox.dir())
            .expect("read")
            .expect("a message");
        assert!(text.contains("Subject: message 3"), "{text}");
        assert!(text.contains("To: rider@example.org"), "{text}");
        assert!(
            body_of(&text).contains(&format!("token={}", "ab".repeat(40))),
            "{text}"
        );
        assert_eq!(std::fs::read_dir(mailbox.dir()).expect("dir").count(), 3);
    }

    #[test]
    fn a_bad_smtp_url_or_sender_is_named_without_echoing_secrets() {
        let error =
            SmtpMailer::new("ftp://user:secret@host", "etappe@localhost").expect_err("not smtp");
        assert!(!error.to_string().contains("secret"), "{error}");
        assert!(FileMailbox::new("/tmp/x", "not an address").is_err());
    }
}
