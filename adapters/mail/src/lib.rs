//! Outgoing mail. [`Mailer`] is the port the application sends through; two adapters
//! implement it: [`SmtpMailer`] (production, `ETAPPE_SMTP_URL`, via `lettre`) and
//! [`FileMailbox`] (the embedded default: one `.eml` file per message under a directory, which
//! `etappe mail last` prints, so a login link can be followed without a mail server).
//!
//! Both build the same RFC 5322 message with lettre's builder, so what the file mailbox holds
//! is byte for byte what SMTP would have sent.
//!
//! Every message of the file mailbox holds a live login link, so the mailbox is the owner's
//! alone: its directory is made (or, when it already existed, set) 0700 and each file is
//! created 0600, whatever the modes of the directories above it and the process's umask.
//! [`Mailer::forget`] deletes what was kept for an address (a deleted account's mail); an
//! SMTP server's mail, once sent, is out of reach.

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

    /// Deletes the messages this mailer still keeps for `to` (compared without regard to
    /// case); answers how many. A mailer that keeps nothing (SMTP: sent is gone) answers 0.
    async fn forget(&self, to: &str) -> Result<usize, MailError> {
        let _ = to;
        Ok(0)
    }
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
    /// A mailbox under `dir` (created 0700 when the first message arrives), sending as `from`.
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
        make_private_dir(&self.dir).await?;
        // The time first, so that names sort in arrival order; the id keeps two messages of
        // the same microsecond apart. Written under a temporary name and renamed, so a reader
        // never sees half a message.
        let name = format!(
            "{}-{}.eml",
            chrono::Utc::now().format("%Y%m%dT%H%M%S%.6fZ"),
            uuid::Uuid::now_v7().simple()
        );
        let partial = self.dir.join(format!(".{name}.partial"));
        write_private(&partial, &message.formatted()).await?;
        tokio::fs::rename(&partial, self.dir.join(&name)).await?;
        Ok(())
    }

    async fn forget(&self, to: &str) -> Result<usize, MailError> {
        let mut entries = match tokio::fs::read_dir(&self.dir).await {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(e.into()),
        };
        let mut deleted = 0;
        while let Some(entry) = entries.next_entry().await? {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            // Half-written messages too (`.<name>.partial`): they hold the same link.
            if !(name.ends_with(".eml") || name.ends_with(".eml.partial")) {
                continue;
            }
            let text = match tokio::fs::read_to_string(&path).await {
                Ok(text) => text,
                // Renamed or deleted meanwhile: nothing left to forget under this name.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e.into()),
            };
            if addressed_to(&text, to) {
                match tokio::fs::remove_file(&path).await {
                    Ok(()) => deleted += 1,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(e.into()),
                }
            }
        }
        Ok(deleted)
    }
}

/// Creates `dir` (and what is missing above it) and sets it 0700: a directory that already
/// existed with a wider mode is narrowed too, so no other local user can list or read it.
async fn make_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = tokio::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    builder.mode(0o700);
    builder.create(dir).await?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tokio::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).await?;
    }
    Ok(())
}

/// Writes `bytes` to a new file created 0600 (never readable by others, not for an instant).
async fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use tokio::io::AsyncWriteExt;
    let mut options = tokio::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    options.mode(0o600);
    let mut file = options.open(path).await?;
    file.write_all(bytes).await?;
    file.flush().await?;
    Ok(())
}

/// Whether the message `text` is addressed to `to`: an address of its `To:` header (the
/// header block unfolded; `Name <addr>` or a bare address) equals `to`, ignoring case.
pub fn addressed_to(text: &str, to: &str) -> bool {
    let headers = text
        .split_once("\r\n\r\n")
        .or_else(|| text.split_once("\n\n"))
        .map_or(text, |(headers, _)| headers);
    let unfolded = headers
        .replace("\r\n", "\n")
        .replace("\n ", " ")
        .replace("\n\t", " ");
    let wanted = to.trim();
    unfolded
        .lines()
        .filter_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.trim().eq_ignore_ascii_case("to").then_some(value)
        })
        .flat_map(|value| value.split(','))
        .map(|one| {
            let one = one.trim();
            match (one.rfind('<'), one.rfind('>')) {
                (Some(open), Some(close)) if open < close => &one[open + 1..close],
                _ => one,
            }
        })
        .any(|address| address.trim().eq_ignore_ascii_case(wanted))
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

    fn mail_to(to: &str, n: usize) -> Mail {
        Mail {
            to: to.into(),
            subject: format!("message {n}"),
            text: format!(
                "link http://127.0.0.1:8080/auth/magic?token={}\n",
                "cd".repeat(32)
            ),
        }
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn the_mailbox_is_the_owners_alone_even_in_a_directory_that_existed_open() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("temp dir");
        let open = dir.path().join("mailbox");
        std::fs::create_dir(&open).expect("mkdir");
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let mailbox = FileMailbox::new(&open, "Etappe <etappe@localhost>").expect("mailbox");
        mailbox
            .send(&mail_to("rider@example.org", 1))
            .await
            .expect("sent");
        let mode = |p: &Path| std::fs::metadata(p).expect("metadata").permissions().mode() & 0o777;
        assert_eq!(
            mode(&open),
            0o700,
            "the directory that existed 0755 is narrowed"
        );
        let (file, _) = last_message(&open).expect("read").expect("a message");
        assert_eq!(mode(&file), 0o600);
        // A mailbox made afresh (with its parents) is 0700 from the start.
        let fresh = dir.path().join("data").join("mailbox");
        let mailbox = FileMailbox::new(&fresh, "Etappe <etappe@localhost>").expect("mailbox");
        mailbox
            .send(&mail_to("rider@example.org", 2))
            .await
            .expect("sent");
        assert_eq!(mode(&fresh), 0o700);
    }

    #[tokio::test]
    async fn forgetting_an_address_deletes_its_messages_and_only_those() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mailbox = FileMailbox::new(dir.path().join("mailbox"), "Etappe <etappe@localhost>")
            .expect("mailbox");
        assert_eq!(mailbox.forget("gone@example.org").await.expect("empty"), 0);
        for (n, to) in ["gone@example.org", "stays@example.org", "gone@example.org"]
            .into_iter()
            .enumerate()
        {
            mailbox.send(&mail_to(to, n)).await.expect("sent");
        }
        // The address is compared without regard to case, as accounts are.
        assert_eq!(mailbox.forget("GONE@example.org").await.expect("forget"), 2);
        let (_, left) = last_message(mailbox.dir())
            .expect("read")
            .expect("one left");
        assert!(addressed_to(&left, "stays@example.org"), "{left}");
        assert_eq!(std::fs::read_dir(mailbox.dir()).expect("dir").count(), 1);
        // An address that is only a suffix, or in the body, is another address.
        assert!(!addressed_to(
            "To: agone@example.org\r\n\r\nbody",
            "gone@example.org"
        ));
        assert!(!addressed_to(
            "To: x@example.org\r\n\r\nTo: gone@example.org",
            "gone@example.org"
        ));
        assert!(addressed_to(
            "Subject: s\r\nTo: Rider\r\n <gone@example.org>\r\n\r\nb",
            "gone@example.org"
        ));
    }

    #[test]
    fn a_bad_smtp_url_or_sender_is_named_without_echoing_secrets() {
        let error =
            SmtpMailer::new("ftp://user:secret@host", "etappe@localhost").expect_err("not smtp");
        assert!(!error.to_string().contains("secret"), "{error}");
        assert!(FileMailbox::new("/tmp/x", "not an address").is_err());
    }
}
