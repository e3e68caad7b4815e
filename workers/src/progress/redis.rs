//! Progress in Redis: the latest report of each job in a hash per trip (with a TTL, so
//! abandoned jobs disappear) and a channel per trip for live subscribers. The write is one
//! Lua script, so a reader never sees a notification before the state, and a report that is
//! not newer (by `seq`) than the stored one is dropped, keeping progress monotone. Redis
//! being down costs only the progress: the caller logs and the job goes on.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use etappe_domain::ids::TripId;
use futures::StreamExt;
use redis::aio::ConnectionManager;
use redis::{AsyncCommands, Script};

use super::{Progress, ProgressError, ProgressStore, ProgressStream};
use etappe_infra::redis_link::RedisLink;

/// How long a trip's progress is kept after its last report.
const TTL_SECONDS: u64 = 3600;

const PUBLISH: &str = r"
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current then
  local seq = cjson.decode(current)['seq']
  if seq and seq >= tonumber(ARGV[3]) then return 0 end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('PUBLISH', KEYS[2], ARGV[2])
return 1
";

fn error(e: impl std::fmt::Display) -> ProgressError {
    ProgressError(e.to_string())
}

/// Progress kept in Redis.
pub struct RedisProgress {
    link: Arc<RedisLink>,
    prefix: String,
    script: Script,
}

impl std::fmt::Debug for RedisProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisProgress")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl RedisProgress {
    /// A store over the process's Redis link. Redis being down now is not an error: progress
    /// is advisory and the connection is made on first use.
    pub async fn connect(link: Arc<RedisLink>, prefix: &str) -> Result<Self, ProgressError> {
        let store = Self {
            link,
            prefix: prefix.to_owned(),
            script: Script::new(PUBLISH),
        };
        if let Err(e) = store.connection().await {
            tracing::warn!(error = %e, "Redis is not reachable yet; progress resumes when it is");
        }
        Ok(store)
    }

    fn key(&self, trip_id: TripId) -> String {
        format!("{}:progress:{trip_id}", self.prefix)
    }

    async fn connection(&self) -> Result<ConnectionManager, ProgressError> {
        self.link.connection_now().await.map_err(ProgressError)
    }

    /// Whether Redis answers.
    pub async fn ping(&self) -> Result<(), ProgressError> {
        let mut c = self.connection().await?;
        let _: String = tokio::time::timeout(
            Duration::from_secs(2),
            redis::cmd("PING").query_async(&mut c),
        )
        .await
        .map_err(|_| ProgressError("no answer".into()))?
        .map_err(error)?;
        Ok(())
    }
}

#[async_trait]
impl ProgressStore for RedisProgress {
    async fn publish(&self, progress: &Progress) -> Result<(), ProgressError> {
        let mut c = self.connection().await?;
        let json = serde_json::to_string(progress).map_err(error)?;
        let key = self.key(progress.trip_id);
        let _: i64 = tokio::time::timeout(
            Duration::from_secs(2),
            self.script
                .key(&key)
                .key(&key)
                .arg(progress.job_id.to_string())
                .arg(json)
                .arg(progress.seq)
                .arg(TTL_SECONDS)
                .invoke_async(&mut c),
        )
        .await
        .map_err(|_| ProgressError("Redis did not answer within 2 s".into()))?
        .map_err(error)?;
        Ok(())
    }

    async fn current(&self, trip_id: TripId) -> Result<Vec<Progress>, ProgressError> {
        let mut c = self.connection().await?;
        let values: Vec<String> =
            tokio::time::timeout(Duration::from_secs(2), c.hvals(self.key(trip_id)))
                .await
                .map_err(|_| ProgressError("Redis did not answer within 2 s".into()))?
                .map_err(error)?;
        let mut all: Vec<Progress> = values
            .iter()
            .filter_map(|v| serde_json::from_str(v).ok())
            .collect();
        all.sort_by_key(|p| p.seq);
        Ok(all)
    }

    async fn subscribe(&self, trip_id: TripId) -> Result<ProgressStream, ProgressError> {
        let mut pubsub = tokio::time::timeout(
            Duration::from_secs(2),
            self.link.client().get_async_pubsub(),
        )
        .await
        .map_err(|_| ProgressError("Redis did not answer within 2 s".into()))?
        .map_err(error)?;
        pubsub.subscribe(self.key(trip_id)).await.map_err(error)?;
        let stream = pubsub.into_on_message().filter_map(|message| async move {
            let payload: String = message.get_payload().ok()?;
            serde_json::from_str::<Progress>(&payload).ok()
        });
        Ok(Box::pin(stream))
    }
}
