# One image for the API (`etappe`) and the workers (`etappe-worker`). Build: docker build -t etappe .
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p etappe-services --bin etappe -p etappe-workers --bin etappe-worker

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates && rm -rf /var/lib/apt/lists/* \
 && useradd --system --home /var/lib/etappe etappe && mkdir -p /var/lib/etappe && chown etappe /var/lib/etappe
COPY --from=build /src/target/release/etappe /src/target/release/etappe-worker /usr/local/bin/
USER etappe
ENV ETAPPE_ADDR=0.0.0.0:8080 ETAPPE_DATA_DIR=/var/lib/etappe
EXPOSE 8080
# The API's liveness (compose gives the workers their own check: etappe-worker health).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=5 CMD ["etappe", "health", "--live"]
ENTRYPOINT ["etappe"]
CMD ["serve"]
