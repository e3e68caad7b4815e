#!/bin/sh
# The machine's raw limit for durable one-row inserts, to compare the event store with:
# pgbench inserting one ~200-byte JSON row per transaction into a scratch table, with 1 and
# 8 clients, synchronous_commit on (the default). Usage: pg-raw-limit.sh postgres://…
set -eu
URL="${1:?usage: pg-raw-limit.sh postgres://user@host/db}"
SECONDS_PER_RUN="${2:-10}"
psql "$URL" -qc "DROP TABLE IF EXISTS bench_raw_insert; CREATE TABLE bench_raw_insert (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, data jsonb NOT NULL)"
script=$(mktemp)
printf '%s\n' "INSERT INTO bench_raw_insert (data) VALUES ('{\"payload\": \"$(printf 'x%.0s' $(seq 1 160))\"}');" > "$script"
for clients in 1 8; do
  printf 'pgbench one-row insert, %s client(s): ' "$clients"
  pgbench -n -M prepared -j 2 -c "$clients" -T "$SECONDS_PER_RUN" -f "$script" "$URL" 2>/dev/null | grep -E '^tps' | sed 's/ (without initial connection time)//'
done
psql "$URL" -qc "DROP TABLE bench_raw_insert"
rm -f "$script"
