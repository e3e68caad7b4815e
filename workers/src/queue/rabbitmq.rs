//! The RabbitMQ adapter (lapin, AMQP 0-9-1).
//!
//! Topology, all durable, names prefixed (`{p}` = `ETAPPE_QUEUE_PREFIX`):
//! - `{p}.jobs` (direct exchange) → `{p}.jobs` (quorum queue, `x-delivery-limit` 5, dead
//!   letters to `{p}.jobs.dlx` → `{p}.jobs.dlq`). The delivery limit bounds a message that
//!   crashes its workers over and over; the dead-letter queue keeps it for an operator.
//! - `{p}.jobs.retry` (direct exchange) → `{p}.jobs.retry.{1s,5s,30s}`: queues with a message
//!   TTL whose dead letters go back to `{p}.jobs`, which is how a retry waits without holding
//!   a worker.
//!
//! Messages are persistent, published with confirms (a publish resolves only once the broker
//! has it), consumed with manual acks and a prefetch equal to the worker's concurrency. A
//! lost connection is re-opened on the next use; deliveries a dead channel held are
//! redelivered by the broker, and the workers are idempotent.

use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use lapin::message::Delivery as AmqpDelivery;
use lapin::options::{
    BasicAckOptions, BasicConsumeOptions, BasicNackOptions, BasicPublishOptions, BasicQosOptions,
    BasicRejectOptions, ConfirmSelectOptions, ExchangeDeclareOptions, QueueBindOptions,
    QueueDeclareOptions,
};
use lapin::types::{AMQPValue, FieldTable, ShortString};
use lapin::{BasicProperties, Channel, Connection, ConnectionProperties, Consumer, ExchangeKind};
use tokio::sync::Mutex;
use tracing::Instrument;
use uuid::Uuid;

use super::{Acker, Deliveries, Delivery, JobQueue, QueueError};
use crate::jobs::JobMessage;

const RETRY_BUCKETS: [(u64, &str); 3] = [(1, "1s"), (5, "5s"), (30, "30s")];
/// Deliveries of one message before the broker dead-letters it (crash loops).
const DELIVERY_LIMIT: i64 = super::DELIVERY_LIMIT as i64;

#[derive(Debug, Clone)]
struct Names {
    exchange: String,
    queue: String,
    dlx: String,
    dlq: String,
    retry_exchange: String,
}

impl Names {
    fn new(prefix: &str) -> Self {
        Self {
            exchange: jobs_queue_name(prefix),
            queue: jobs_queue_name(prefix),
            dlx: format!("{prefix}.jobs.dlx"),
            dlq: dead_letter_queue_name(prefix),
            retry_exchange: format!("{prefix}.jobs.retry"),
        }
    }
}

/// The queue the workers consume (`ETAPPE_QUEUE_PREFIX` + `.jobs`: `etappe.jobs` by default):
/// what an autoscaler watches (`deploy/kubernetes/keda-scaledobject.yaml`).
pub fn jobs_queue_name(prefix: &str) -> String {
    format!("{prefix}.jobs")
}

/// The queue of jobs given up (`etappe.jobs.dlq` by default).
pub fn dead_letter_queue_name(prefix: &str) -> String {
    format!("{prefix}.jobs.dlq")
}

fn unavailable(error: impl std::fmt::Display) -> QueueError {
    QueueError::Unavailable(error.to_string())
}

/// The RabbitMQ queue.
pub struct RabbitQueue {
    url: String,
    names: Names,
    connection: Mutex<Option<Connection>>,
    publisher: Mutex<Option<Channel>>,
}

impl std::fmt::Debug for RabbitQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RabbitQueue")
            .field("names", &self.names)
            .finish_non_exhaustive()
    }
}

fn table(entries: &[(&str, AMQPValue)]) -> FieldTable {
    let mut t = FieldTable::default();
    for (k, v) in entries {
        t.insert(ShortString::from(*k), v.clone());
    }
    t
}

fn text(value: &str) -> AMQPValue {
    AMQPValue::LongString(value.into())
}

impl RabbitQueue {
    /// Connects and declares the topology.
    pub async fn connect(url: &str, prefix: &str) -> Result<Self, QueueError> {
        let queue = Self {
            url: url.to_owned(),
            names: Names::new(prefix),
            connection: Mutex::new(None),
            publisher: Mutex::new(None),
        };
        // A broker that is down (or going away) now is not a reason to stop: the topology is
        // declared again on every new connection, and every attempt has a deadline.
        if let Err(error) = queue.channel().await {
            tracing::warn!(%error, "RabbitMQ is not reachable yet; retrying on use");
        }
        Ok(queue)
    }

    /// A new channel, re-opening the connection if it is gone. Bounded in time: a broker
    /// that is going away can leave a connection that neither works nor fails.
    async fn channel(&self) -> Result<Channel, QueueError> {
        let timeout = Duration::from_secs(5);
        let mut connection = self.connection.lock().await;
        if let Some(c) = connection.as_ref()
            && c.status().connected()
            && let Ok(Ok(channel)) = tokio::time::timeout(timeout, c.create_channel()).await
        {
            return Ok(channel);
        }
        let fresh = tokio::time::timeout(
            timeout,
            Connection::connect(&self.url, ConnectionProperties::default()),
        )
        .await
        .map_err(|_| QueueError::Unavailable("the broker did not answer within 5 s".into()))?
        .map_err(unavailable)?;
        let channel = tokio::time::timeout(timeout, fresh.create_channel())
            .await
            .map_err(|_| {
                QueueError::Unavailable("the broker did not open a channel within 5 s".into())
            })?
            .map_err(unavailable)?;
        tokio::time::timeout(Duration::from_secs(10), self.declare(&channel))
            .await
            .map_err(|_| {
                QueueError::Unavailable("the broker did not declare the queues in time".into())
            })??;
        *connection = Some(fresh);
        Ok(channel)
    }

    /// The topology: the work exchange and its quorum queue (with a delivery limit and a
    /// dead-letter exchange), the dead letters' exchange and queue, and one retry queue per
    /// delay bucket, whose expired messages go back to the work exchange.
    async fn declare(&self, channel: &Channel) -> Result<(), QueueError> {
        let n = &self.names;
        let durable = ExchangeDeclareOptions {
            durable: true,
            ..Default::default()
        };
        for (exchange, kind) in [
            (&n.exchange, ExchangeKind::Direct),
            (&n.dlx, ExchangeKind::Fanout),
            (&n.retry_exchange, ExchangeKind::Direct),
        ] {
            channel
                .exchange_declare(
                    exchange.as_str().into(),
                    kind,
                    durable,
                    FieldTable::default(),
                )
                .await
                .map_err(unavailable)?;
        }
        // Each queue: its name, its arguments, and the exchange and routing key it is bound by.
        let mut queues = vec![
            (
                n.queue.clone(),
                table(&[
                    ("x-queue-type", text("quorum")),
                    ("x-delivery-limit", AMQPValue::LongLongInt(DELIVERY_LIMIT)),
                    ("x-dead-letter-exchange", text(&n.dlx)),
                ]),
                &n.exchange,
                "job".to_owned(),
            ),
            (
                n.dlq.clone(),
                table(&[("x-queue-type", text("quorum"))]),
                &n.dlx,
                String::new(),
            ),
        ];
        for (seconds, bucket) in RETRY_BUCKETS {
            queues.push((
                format!("{}.{bucket}", n.retry_exchange),
                table(&[
                    (
                        "x-message-ttl",
                        AMQPValue::LongLongInt((seconds * 1000) as i64),
                    ),
                    ("x-dead-letter-exchange", text(&n.exchange)),
                    ("x-dead-letter-routing-key", text("job")),
                ]),
                &n.retry_exchange,
                bucket.to_owned(),
            ));
        }
        let durable_queue = QueueDeclareOptions {
            durable: true,
            ..Default::default()
        };
        for (queue, args, exchange, routing_key) in queues {
            channel
                .queue_declare(queue.as_str().into(), durable_queue, args)
                .await
                .map_err(unavailable)?;
            channel
                .queue_bind(
                    queue.as_str().into(),
                    exchange.as_str().into(),
                    routing_key.as_str().into(),
                    QueueBindOptions::default(),
                    FieldTable::default(),
                )
                .await
                .map_err(unavailable)?;
        }
        Ok(())
    }

    fn properties(message: &JobMessage, attempt: u32) -> BasicProperties {
        let mut headers = vec![("x-attempt", AMQPValue::LongLongInt(i64::from(attempt)))];
        if let Some(traceparent) = &message.traceparent {
            headers.push(("traceparent", text(traceparent)));
        }
        BasicProperties::default()
            .with_delivery_mode(2)
            .with_content_type("application/json".into())
            .with_message_id(message.job.id().to_string().into())
            .with_headers(table(&headers))
    }

    /// Publishes with a confirm on the shared publishing channel (re-opened when broken).
    async fn publish_to(
        &self,
        exchange: &str,
        routing_key: &str,
        message: &JobMessage,
        attempt: u32,
    ) -> Result<(), QueueError> {
        // A producer span under the dispatcher's or the worker's, as OpenTelemetry's
        // messaging conventions name it (`send {destination}`).
        let span = tracing::info_span!(
            "queue",
            otel.name = %format!("send {exchange}"),
            otel.kind = "producer",
            messaging.system = "rabbitmq",
            messaging.operation.type = "send",
            messaging.destination.name = exchange,
            messaging.rabbitmq.destination.routing_key = routing_key,
            messaging.message.id = %message.job.id(),
            etappe.attempt = attempt,
        );
        self.publish_confirmed(exchange, routing_key, message, attempt)
            .instrument(span)
            .await
    }

    /// [`Self::publish_to`] inside its span.
    async fn publish_confirmed(
        &self,
        exchange: &str,
        routing_key: &str,
        message: &JobMessage,
        attempt: u32,
    ) -> Result<(), QueueError> {
        let payload = serde_json::to_vec(message).map_err(|e| QueueError::Nacked(e.to_string()))?;
        let mut publisher = self.publisher.lock().await;
        for try_number in 0..2 {
            let channel = match publisher.as_ref().filter(|c| c.status().connected()) {
                Some(c) => c.clone(),
                None => {
                    let c = self.channel().await?;
                    c.confirm_select(ConfirmSelectOptions::default())
                        .await
                        .map_err(unavailable)?;
                    *publisher = Some(c.clone());
                    c
                }
            };
            let publish = async {
                let confirm = channel
                    .basic_publish(
                        exchange.into(),
                        routing_key.into(),
                        BasicPublishOptions {
                            mandatory: true,
                            ..Default::default()
                        },
                        &payload,
                        Self::properties(message, attempt),
                    )
                    .await?;
                confirm.await
            };
            let confirm = match tokio::time::timeout(CONFIRM_TIMEOUT, publish).await {
                Ok(result) => result.map_err(unavailable),
                Err(_) => Err(QueueError::Unavailable(
                    "no publisher confirm within 10 s".into(),
                )),
            };
            match confirm {
                Ok(c) => {
                    // Mandatory: an unroutable message comes back with the ack.
                    let acked = c.is_ack();
                    let returned = c.take_message().is_some();
                    if !acked || returned {
                        return Err(QueueError::Nacked("the broker did not take the job".into()));
                    }
                    return Ok(());
                }
                Err(e) if try_number == 0 => {
                    tracing::warn!(error = %e, "publishing failed; reconnecting once");
                    *publisher = None;
                }
                Err(e) => return Err(e),
            }
        }
        Err(QueueError::Unavailable("publishing failed".into()))
    }

    async fn count(&self, queue: &str) -> Result<u64, QueueError> {
        let channel = self.channel().await?;
        let q = channel
            .queue_declare(
                queue.into(),
                QueueDeclareOptions {
                    passive: true,
                    ..Default::default()
                },
                FieldTable::default(),
            )
            .await
            .map_err(unavailable)?;
        let _ = channel.close(200, "done".into()).await;
        Ok(u64::from(q.message_count()))
    }
}

struct RabbitAcker {
    delivery: lapin::Acker,
    queue: std::sync::Arc<RabbitQueue>,
}

#[async_trait]
impl Acker for RabbitAcker {
    async fn ack(&self) -> Result<(), QueueError> {
        let span = tracing::info_span!(
            "queue",
            otel.name = "ack jobs",
            otel.kind = "client",
            messaging.system = "rabbitmq",
            messaging.operation.type = "settle",
            messaging.operation.name = "ack",
        );
        self.delivery
            .ack(BasicAckOptions::default())
            .instrument(span)
            .await
            .map(|_| ())
            .map_err(unavailable)
    }

    async fn retry(
        &self,
        message: &JobMessage,
        attempt: u32,
        delay: Duration,
    ) -> Result<(), QueueError> {
        let bucket = RETRY_BUCKETS
            .iter()
            .find(|(s, _)| Duration::from_secs(*s) >= delay)
            .or(RETRY_BUCKETS.last())
            .map_or("30s", |(_, b)| *b);
        // The copy is confirmed before the original is acked: a crash in between duplicates
        // the job (harmless), never loses it.
        self.queue
            .publish_to(&self.queue.names.retry_exchange, bucket, message, attempt)
            .await?;
        self.ack().await
    }

    async fn dead_letter(&self) -> Result<(), QueueError> {
        self.delivery
            .reject(BasicRejectOptions { requeue: false })
            .await
            .map(|_| ())
            .map_err(unavailable)
    }

    async fn requeue(&self) -> Result<(), QueueError> {
        self.delivery
            .nack(BasicNackOptions {
                requeue: true,
                ..Default::default()
            })
            .await
            .map(|_| ())
            .map_err(unavailable)
    }
}

struct RabbitDeliveries {
    queue: std::sync::Arc<RabbitQueue>,
    prefetch: u16,
    consumer: Option<Consumer>,
    channel: Option<Channel>,
}

/// How often a waiting consumer checks that its channel is still alive: a broker that went
/// away does not always end the consumer's stream, and a consumer on a dead channel would
/// wait for ever.
const LIVENESS_CHECK: Duration = Duration::from_secs(1);
/// How long a consumer may sit idle before it asks the broker whether its channel still lives.
const PROBE_EVERY: Duration = Duration::from_secs(3);
/// How long a publish may wait for its confirm before the channel is considered dead.
const CONFIRM_TIMEOUT: Duration = Duration::from_secs(10);

impl RabbitDeliveries {
    async fn open(&mut self) -> Result<(), QueueError> {
        let channel = self.queue.channel().await?;
        channel
            .basic_qos(self.prefetch, BasicQosOptions::default())
            .await
            .map_err(unavailable)?;
        let consumer = channel
            .basic_consume(
                self.queue.names.queue.as_str().into(),
                format!("worker-{}", Uuid::now_v7()).into(),
                BasicConsumeOptions::default(),
                FieldTable::default(),
            )
            .await
            .map_err(unavailable)?;
        self.consumer = Some(consumer);
        self.channel = Some(channel);
        Ok(())
    }

    fn reset(&mut self) {
        self.consumer = None;
        self.channel = None;
    }

    /// Whether the consumer's channel answers a passive declare of its queue within 2 s.
    async fn probe(&self) -> bool {
        let Some(channel) = self.channel.as_ref().filter(|c| c.status().connected()) else {
            return false;
        };
        let declare = channel.queue_declare(
            self.queue.names.queue.as_str().into(),
            QueueDeclareOptions {
                passive: true,
                ..Default::default()
            },
            FieldTable::default(),
        );
        matches!(
            tokio::time::timeout(Duration::from_secs(2), declare).await,
            Ok(Ok(_))
        )
    }

    fn decode(&self, delivery: AmqpDelivery) -> Delivery {
        let headers = delivery.properties.headers().clone().unwrap_or_default();
        let attempt = match headers.inner().get("x-attempt") {
            Some(AMQPValue::LongLongInt(n)) => u32::try_from(*n).unwrap_or(0),
            Some(AMQPValue::LongInt(n)) => u32::try_from(*n).unwrap_or(0),
            _ => 0,
        };
        // Quorum queues count the deliveries that came back unsettled.
        let lost_deliveries = match headers.inner().get("x-delivery-count") {
            Some(AMQPValue::LongLongInt(n)) => u32::try_from(*n).unwrap_or(0),
            Some(AMQPValue::LongInt(n)) => u32::try_from(*n).unwrap_or(0),
            Some(AMQPValue::ShortInt(n)) => u32::try_from(*n).unwrap_or(0),
            _ => 0,
        };
        let message =
            serde_json::from_slice::<JobMessage>(&delivery.data).map_err(|e| e.to_string());
        Delivery {
            message,
            attempt,
            redelivered: delivery.redelivered,
            lost_deliveries,
            acker: Box::new(RabbitAcker {
                delivery: delivery.acker,
                queue: std::sync::Arc::clone(&self.queue),
            }),
        }
    }
}

#[async_trait]
impl Deliveries for RabbitDeliveries {
    async fn next(&mut self) -> Option<Delivery> {
        let mut pause = Duration::from_millis(200);
        let mut idle = Duration::ZERO;
        loop {
            if self.consumer.is_none()
                && let Err(error) = self.open().await
            {
                tracing::warn!(%error, "cannot consume; retrying");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(5));
                continue;
            }
            let consumer = self.consumer.as_mut()?;
            let next = tokio::select! {
                item = consumer.next() => Some(item),
                () = tokio::time::sleep(LIVENESS_CHECK) => None,
            };
            match next {
                Some(Some(Ok(delivery))) => return Some(self.decode(delivery)),
                Some(Some(Err(error))) => {
                    tracing::warn!(%error, "consumer failed; reconnecting");
                    self.reset();
                }
                Some(None) => {
                    tracing::warn!("consumer closed; reconnecting");
                    self.reset();
                }
                None => {
                    // Idle: make sure the channel really is alive. A broker restart does not
                    // always end the consumer's stream, nor flip the channel's status, so ask
                    // the broker something cheap, with a deadline.
                    idle += LIVENESS_CHECK;
                    if idle >= PROBE_EVERY {
                        idle = Duration::ZERO;
                        if !self.probe().await {
                            tracing::warn!("the consumer's channel does not answer; reconnecting");
                            self.reset();
                        }
                    }
                }
            }
        }
    }
}

/// A cheap handle: the queue is shared by the dispatcher and the workers of a process.
#[derive(Debug, Clone)]
pub struct SharedRabbitQueue(pub std::sync::Arc<RabbitQueue>);

#[async_trait]
impl JobQueue for SharedRabbitQueue {
    async fn publish(&self, message: &JobMessage) -> Result<(), QueueError> {
        self.0
            .publish_to(&self.0.names.exchange, "job", message, 0)
            .await
    }

    async fn consume(&self, prefetch: u16) -> Result<Box<dyn Deliveries>, QueueError> {
        let mut deliveries = RabbitDeliveries {
            queue: std::sync::Arc::clone(&self.0),
            prefetch,
            consumer: None,
            channel: None,
        };
        deliveries.open().await?;
        Ok(Box::new(deliveries))
    }

    async fn depth(&self) -> Result<u64, QueueError> {
        self.0.count(&self.0.names.queue).await
    }

    async fn dead_lettered(&self) -> Result<u64, QueueError> {
        self.0.count(&self.0.names.dlq).await
    }

    async fn replay_dead_letters(&self, limit: u64) -> Result<u64, QueueError> {
        let channel = self.0.channel().await?;
        let mut moved = 0;
        while moved < limit {
            let got = channel
                .basic_get(
                    self.0.names.dlq.as_str().into(),
                    lapin::options::BasicGetOptions { no_ack: false },
                )
                .await
                .map_err(unavailable)?;
            let Some(got) = got else { break };
            let Ok(message) = serde_json::from_slice::<JobMessage>(&got.delivery.data) else {
                // Unreadable: it stays where it is, for a person to look at.
                let _ = got
                    .delivery
                    .nack(lapin::options::BasicNackOptions {
                        requeue: true,
                        ..Default::default()
                    })
                    .await;
                tracing::warn!("an unreadable dead letter stays in the dead-letter queue");
                break;
            };
            // Published first, acknowledged after: a crash between leaves a copy in each
            // queue, never none (the job is idempotent).
            self.0
                .publish_to(&self.0.names.exchange, "job", &message, 0)
                .await?;
            got.delivery
                .ack(lapin::options::BasicAckOptions::default())
                .await
                .map_err(unavailable)?;
            moved += 1;
        }
        Ok(moved)
    }

    fn is_durable(&self) -> bool {
        true
    }

    async fn is_settled(&self, _job_id: Uuid) -> bool {
        true
    }
}
