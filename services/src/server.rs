//! The HTTP server's own defences: a cap on concurrent connections, a deadline for a
//! request's headers, an idle deadline for keep-alive connections, and a deadline for a
//! request's body. axum's `serve` has none of these, so connections are accepted and served
//! with hyper here. SSE streams keep themselves alive with their heartbeat (a write resets
//! the idle deadline) and carry no request body; they count against the connection cap.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;

pub use crate::config::ServerLimits;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::time::{Instant, Sleep};

/// Serves `router` on `listener` until `shutdown` completes, then lets the requests in flight
/// finish (up to 30 s).
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ServerLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(Duration::from_secs(limits.header_timeout_secs.max(1)))
        .keep_alive(true);
    let idle = Duration::from_secs(limits.idle_timeout_secs.max(1));
    let service = hyper_util::service::TowerToHyperService::new(router);
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            permit = Arc::clone(&permits).acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
            () = &mut shutdown => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of descriptors and the like: pause rather than spin.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let io = TokioIo::new(IdleDeadline::new(stream, idle));
        // Handlers read the peer's address (anonymous budgets) as axum's `ConnectInfo`.
        let service = service.clone();
        let with_peer = hyper::service::service_fn(
            move |mut request: hyper::Request<hyper::body::Incoming>| {
                request
                    .extensions_mut()
                    .insert(axum::extract::ConnectInfo(peer));
                hyper::service::Service::call(&service, request)
            },
        );
        let connection = builder.serve_connection(io, with_peer);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, "connection ended with an error");
            }
            drop(permit);
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(Duration::from_secs(30)) => {
            tracing::warn!("connections still open after 30 s; closing them");
        }
    }
    Ok(())
}

/// A TCP stream that fails its next read once nothing has been read or written for `idle`.
/// hyper then closes the connection. Any traffic (a request, a response chunk, an SSE
/// heartbeat) pushes the deadline back.
struct IdleDeadline {
    stream: TcpStream,
    idle: Duration,
    deadline: Pin<Box<Sleep>>,
}

impl IdleDeadline {
    fn new(stream: TcpStream, idle: Duration) -> Self {
        Self {
            stream,
            idle,
            deadline: Box::pin(tokio::time::sleep(idle)),
        }
    }

    fn touch(&mut self) {
        let next = Instant::now() + self.idle;
        // Resetting costs a timer-wheel update: only when it moves by a second or more.
        if next.saturating_duration_since(self.deadline.deadline()) >= Duration::from_secs(1) {
            self.deadline.as_mut().reset(next);
        }
    }
}

impl AsyncRead for IdleDeadline {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.stream).poll_read(cx, buf) {
            Poll::Ready(result) => {
                if buf.filled().len() > before {
                    self.touch();
                }
                Poll::Ready(result)
            }
            Poll::Pending => match self.deadline.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "connection idle for too long",
                ))),
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

impl AsyncWrite for IdleDeadline {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.stream).poll_write(cx, data);
        if matches!(written, Poll::Ready(Ok(n)) if n > 0) {
            self.touch();
        }
        written
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        if matches!(written, Poll::Ready(Ok(n)) if n > 0) {
            self.touch();
        }
        written
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}
