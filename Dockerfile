# syntax=docker/dockerfile:1
#
# otelcol-handoff container image: the distribution built by `make build` (ocb, pinned
# tools), as a static binary on a distroless base, running as a non-root user.
#
#   docker build -t otelcol-handoff:0.1.0 .
#   docker run --rm -p 4317:4317 -p 4318:4318 -p 13133:13133 -p 8888:8888 otelcol-handoff:0.1.0
#
# The default config (examples/deploy/standalone.yaml) listens on every interface and logs
# failed assertions; mount your own at /etc/otelcol-handoff/config.yaml to replace it
# (examples/deploy/k8s/ does that with ConfigMaps).

# ---- build ----
FROM golang:1.26 AS build
WORKDIR /src
# A static binary: no libc in the final image. ocb builds with CGO_ENABLED=0 and -trimpath
# already; the variable keeps handoffcheck and the tools static too.
ENV CGO_ENABLED=0

# Module downloads first, in their own layer: they change less often than the sources.
COPY go.mod go.sum ./
COPY internal/tools/go.mod internal/tools/go.sum internal/tools/
RUN go mod download && cd internal/tools && go mod download

# Only what the build reads (not _build/, e2e/clients/node_modules/ or the test corpus).
COPY Makefile builder-config.yaml ./
COPY handoffprocessor/ handoffprocessor/
COPY assertionexporter/ assertionexporter/
COPY internal/ internal/
COPY cmd/ cmd/
RUN make build \
 && go version -m _build/otelcol-handoff | grep -q 'CGO_ENABLED=0' \
 && _build/otelcol-handoff --version

# ---- run ----
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /src/_build/otelcol-handoff /usr/local/bin/otelcol-handoff
COPY examples/deploy/standalone.yaml /etc/otelcol-handoff/config.yaml
# distroless "nonroot": uid/gid 65532.
USER 65532:65532
# OTLP gRPC, OTLP/HTTP, health_check, Prometheus metrics (service.telemetry).
EXPOSE 4317 4318 13133 8888
ENTRYPOINT ["/usr/local/bin/otelcol-handoff", "--config", "/etc/otelcol-handoff/config.yaml"]
