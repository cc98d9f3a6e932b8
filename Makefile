# otelcol-handoff: build, test and run the collector distribution.
# Needs only Go: every tool is built from the pinned internal/tools module.

SHELL       := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build

GO        ?= go
# The Go toolchain everything here is built and tested with: the newest patch release of Go
# 1.26, which the go command takes from the Go module proxy on first use (about 76 MB, go.dev/
# doc/toolchain). 1.26.8's net/http, crypto/tls, crypto/x509 and html/template have fixed
# vulnerabilities that our code reaches (make govulncheck). A GOTOOLCHAIN set in the
# environment is kept.
GOTOOLCHAIN ?= go1.26.10
export GOTOOLCHAIN
BUILD_DIR := _build
TOOLS_DIR := $(BUILD_DIR)/tools
TOOLS_MOD := internal/tools

BINARY   := $(BUILD_DIR)/otelcol-handoff
REPLAY   := $(BUILD_DIR)/otlpreplay
CHECK    := $(BUILD_DIR)/handoffcheck
MANIFEST := builder-config.yaml
CONFIG   ?= config/default.yaml
TRACES   ?= $(wildcard testdata/traces/*.json)

# The real-client scenarios of the e2e tests: a Node.js project with pinned npm packages.
CLIENTS_DIR := e2e/clients
NPM         ?= npm

# Components whose metadata.yaml mdatagen turns into generated code.
COMPONENTS := handoffprocessor assertionexporter connector/assertionconnector

# Tools: binary name -> package (versions pinned by internal/tools/go.mod, or by the module
# TOOL_MOD_<name> names: golangci-lint's many dependencies stay out of the other tools').
TOOL_PKG_builder   := go.opentelemetry.io/collector/cmd/builder
TOOL_PKG_mdatagen  := go.opentelemetry.io/collector/cmd/mdatagen
TOOL_PKG_goimports := golang.org/x/tools/cmd/goimports
TOOL_PKG_gofumpt   := mvdan.cc/gofumpt
TOOL_PKG_benchstat := golang.org/x/perf/cmd/benchstat
TOOL_PKG_goreleaser := github.com/goreleaser/goreleaser/v2
TOOL_PKG_golangci-lint := github.com/golangci/golangci-lint/v2/cmd/golangci-lint
TOOL_MOD_golangci-lint := $(TOOLS_MOD)/lint
TOOL_PKG_govulncheck := golang.org/x/vuln/cmd/govulncheck
TOOL_MOD_govulncheck := $(TOOLS_MOD)/vuln
TOOL_PKG_indexdb     := golang.org/x/vulndb/cmd/indexdb
TOOL_MOD_indexdb     := $(TOOLS_MOD)/vuln
TOOLS := $(addprefix $(TOOLS_DIR)/,builder mdatagen goimports gofumpt benchstat goreleaser golangci-lint govulncheck indexdb)
tool_mod = $(or $(TOOL_MOD_$(1)),$(TOOLS_MOD))

OCB       := $(TOOLS_DIR)/builder
MDATAGEN  := $(TOOLS_DIR)/mdatagen
GOIMPORTS := $(TOOLS_DIR)/goimports
GOFUMPT   := $(TOOLS_DIR)/gofumpt
BENCHSTAT := $(TOOLS_DIR)/benchstat
GORELEASER := $(TOOLS_DIR)/goreleaser
GOLANGCI_LINT := $(TOOLS_DIR)/golangci-lint
GOVULNCHECK   := $(TOOLS_DIR)/govulncheck
INDEXDB       := $(TOOLS_DIR)/indexdb

# Every Go file of the repo (outside _build and the tools module).
GO_FILES := $(shell find . -name '*.go' -not -path './$(BUILD_DIR)/*' -not -path './$(TOOLS_MOD)/*')
# The files the collector's components are built from: the Go files and what they embed
# (prompt templates, say), not tests, not testdata, not cmd/.
COMPONENT_DIRS    := handoffprocessor assertionexporter connector internal
COLLECTOR_SOURCES := $(sort $(shell find $(COMPONENT_DIRS) -path $(TOOLS_MOD) -prune -o -type d -name testdata -prune \
                       -o -type f -not -name '*_test.go' -print))
# The distribution's version (ocb manifest: dist.version): the image tag.
VERSION := $(shell sed -n 's/^  version: *//p' $(MANIFEST))

.PHONY: all install-tools build run test test-with-cover lint govulncheck bench benchmark loadtest loadtest-profile loadtest-compare scaling performance generate fmt fmt-check vet validate tidy clean e2e-clients prices promtool report-assets chromium \
	jq cmark-gfm goreleaser-check release-snapshot distribution image image-context FORCE

# Content stamps: a build target is rebuilt when the sha256 of its inputs (their paths and
# contents, the Go toolchain and the recipe, with the checkout's own path left out) differs
# from the one recorded in _build/.stamp-<name> at its last build, or its output is missing. Timestamps do not
# count, so a _build copied from another checkout (a CI cache, say) stays fresh while the
# sources it was built from are unchanged, and a checkout that touched every file does not
# rebuild. The recipes run every time (FORCE) and hash first; that takes a fraction of a second.
SHA256    := $(shell command -v sha256sum >/dev/null 2>&1 && echo sha256sum || echo 'shasum -a 256')
# (GNU make before 4.4 does not export variables to $(shell): GOTOOLCHAIN is given by hand.)
STAMP_ENV  = $(shell GOTOOLCHAIN=$(GOTOOLCHAIN) $(GO) env GOVERSION GOOS GOARCH CGO_ENABLED GOFLAGS | tr '\n' ' ')
sq         = $(subst ','\'',$(1))
# $(call stamped,NAME,OUTPUT,INPUT FILES,RECIPE): run RECIPE unless OUTPUT exists and the
# inputs hash to what _build/.stamp-NAME holds.
define stamped
	@mkdir -p $(BUILD_DIR)
	@sum=$$({ printf '%s\n' '$(call sq,$(STAMP_ENV))' '$(call sq,$(subst $(CURDIR),.,$(4)))'; $(SHA256) $(sort $(3)); } | $(SHA256) | cut -c1-64); \
	if [ -e $(2) ] && [ "$$(cat $(BUILD_DIR)/.stamp-$(1) 2>/dev/null)" = "$$sum" ]; then \
		echo "$(2): up to date (inputs as in $(BUILD_DIR)/.stamp-$(1))"; \
	else \
		rm -f $(BUILD_DIR)/.stamp-$(1); \
		echo '$(call sq,$(4))'; \
		( $(4) ); \
		echo "$$sum" >$(BUILD_DIR)/.stamp-$(1); \
	fi
endef

# promtool checks and unit-tests the shipped Prometheus alert rules (examples/observability).
# It comes from Debian's `prometheus` package, pinned to the version bookworm offers
# (`apt-cache policy prometheus`); services are not started (policy-rc.d in containers,
# and nothing here runs the prometheus daemon).
PROMETHEUS_DEB_VERSION := 2.42.0+ds-5+deb12u1

# The HTML report's Mermaid renderer: dist/mermaid.min.js of the mermaid npm package pinned in
# e2e/clients, embedded into the binaries when present (internal/report/assets/README.md).
REPORT_ASSET  := internal/report/assets/mermaid.min.js
MERMAID_DIST  := $(CLIENTS_DIR)/node_modules/mermaid/dist/mermaid.min.js

# The HTML report's browser test renders it in headless Chromium: Debian's package, pinned to
# the version bookworm offers (`apt-cache policy chromium`).
CHROMIUM_DEB_VERSION := 156.0.8078.114-1~deb12u1

all: build

## install-tools: build the pinned tools into _build/tools
install-tools: $(TOOLS)

$(TOOLS_DIR)/%: FORCE
	@mkdir -p $(TOOLS_DIR)
	$(call stamped,tool-$*,$@,$(call tool_mod,$*)/go.mod $(call tool_mod,$*)/go.sum,cd $(call tool_mod,$*) && $(GO) build -o $(CURDIR)/$@ $(TOOL_PKG_$*))

## build: generate the distribution with ocb and compile _build/otelcol-handoff, and _build/handoffcheck
build: report-assets $(BINARY) $(CHECK)

# The builder's own stamp is an input: another ocb version regenerates the distribution.
$(BINARY): $(OCB) FORCE
	$(call stamped,otelcol-handoff,$@,$(BUILD_DIR)/.stamp-tool-builder $(MANIFEST) go.mod go.sum $(COLLECTOR_SOURCES) $(wildcard internal/report/assets/*),$(OCB) --config $(MANIFEST))

# handoffcheck links the same components as the collector.
$(CHECK): FORCE
	$(call stamped,handoffcheck,$@,go.mod go.sum $(COLLECTOR_SOURCES) $(wildcard internal/report/assets/*) $(filter-out %_test.go,$(wildcard cmd/handoffcheck/*)),$(GO) build -o $@ ./cmd/handoffcheck)

$(REPLAY): FORCE
	$(call stamped,otlpreplay,$@,go.mod go.sum $(filter-out %_test.go,$(wildcard cmd/otlpreplay/*)),$(GO) build -o $@ ./cmd/otlpreplay)

## distribution: generate the distribution's sources in _build (ocb, no compilation) and stage
## the image's files: what goreleaser's before hook runs
distribution: $(OCB) image-context
	$(OCB) --config $(MANIFEST) --skip-compilation

## run: start the collector with $(CONFIG) and replay testdata/traces to it (Ctrl-C stops)
# The replay waits in the background until the collector's OTLP/HTTP port is up.
run: $(BINARY) $(REPLAY)
	$(REPLAY) --endpoint http://127.0.0.1:4318 --wait 60s $(TRACES) & replay=$$!; \
	trap 'kill $$replay 2>/dev/null || true' EXIT; \
	$(BINARY) --config $(CONFIG)

## test: goreleaser check, unit and end-to-end tests (e2e tests use _build/otelcol-handoff and
## e2e/clients; the alert-rule tests use promtool, the HTML report's test headless Chromium, the
## GitHub Action's script jq; the image test buildah or podman where one is installed)
test: fmt-check lint govulncheck e2e-clients build promtool chromium cmark-gfm jq goreleaser-check
	$(GO) test -race -count=1 ./...

## test-with-cover: the test suite with statement coverage of the packages it exercises
## in process (_build/coverage.out; the e2e tests' built binary is not counted); prints the total
test-with-cover: fmt-check lint govulncheck e2e-clients build promtool chromium cmark-gfm jq goreleaser-check
	$(GO) test -race -count=1 -coverprofile=$(BUILD_DIR)/coverage.out ./...
	$(GO) tool cover -func=$(BUILD_DIR)/coverage.out | tail -1

## goreleaser-check: validate .goreleaser.yaml with the pinned goreleaser
goreleaser-check: $(GORELEASER)
	$(GORELEASER) check

# jq: the GitHub Action's script reads the JSON-lines results with it (GitHub's runners have
# it); Debian's package, pinned to the version bookworm offers, installed when missing.
JQ_DEB_VERSION := 1.6-2.1+deb12u3
jq:
	@if command -v jq >/dev/null; then \
		jq --version; \
	else \
		sudo=; if [ "$$(id -u)" != 0 ]; then sudo=sudo; fi; \
		$$sudo apt-get update; \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y --no-install-recommends jq=$(JQ_DEB_VERSION); \
	fi

# cmark-gfm: GitHub's Markdown parser; internal/report's tests render the Markdown report
# with it (nothing span-derived may become a link, image or emphasis). Debian's package,
# pinned to the version bookworm offers, installed when missing.
CMARK_GFM_DEB_VERSION := 0.29.0.gfm.6-6
cmark-gfm:
	@if command -v cmark-gfm >/dev/null; then \
		cmark-gfm --version | head -1; \
	else \
		sudo=; if [ "$$(id -u)" != 0 ]; then sudo=sudo; fi; \
		$$sudo apt-get update; \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y --no-install-recommends cmark-gfm=$(CMARK_GFM_DEB_VERSION); \
	fi

## promtool: install Debian's prometheus package (pinned) when promtool is not on PATH
promtool:
	@if command -v promtool >/dev/null; then \
		promtool --version 2>&1 | head -1; \
	else \
		sudo=; if [ "$$(id -u)" != 0 ]; then sudo=sudo; fi; \
		$$sudo apt-get update; \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y --no-install-recommends prometheus=$(PROMETHEUS_DEB_VERSION); \
	fi

## report-assets: copy the pinned Mermaid renderer from e2e/clients (make e2e-clients) into
## internal/report/assets, where the build embeds it; without it the HTML report shows
## each diagram's Mermaid source
report-assets:
	@if [ -f $(MERMAID_DIST) ]; then \
		cmp -s $(MERMAID_DIST) $(REPORT_ASSET) || cp $(MERMAID_DIST) $(REPORT_ASSET); \
	else \
		echo "report-assets: $(MERMAID_DIST) is missing (make e2e-clients): the HTML report will show diagrams as Mermaid source"; \
	fi

## chromium: install Debian's chromium package (pinned) when chromium is not on PATH
chromium:
	@if command -v chromium >/dev/null; then \
		chromium --version 2>/dev/null | tail -1; \
	else \
		sudo=; if [ "$$(id -u)" != 0 ]; then sudo=sudo; fi; \
		$$sudo apt-get update; \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y --no-install-recommends chromium=$(CHROMIUM_DEB_VERSION); \
	fi

## prices: regenerate the pinned price table internal/pricing/data from the genai-prices npm
## package pinned in e2e/clients (TestReproducesTheSnapshot checks it is up to date)
prices: e2e-clients
	$(GO) run ./internal/pricing/gen -package $(CLIENTS_DIR)/node_modules/@pydantic/genai-prices -out internal/pricing/data

## e2e-clients: install the pinned npm packages of the real-client scenarios (npm ci, only
## when node_modules is missing or package.json / package-lock.json changed: content stamp)
e2e-clients: $(CLIENTS_DIR)/node_modules/.package-lock.json

$(CLIENTS_DIR)/node_modules/.package-lock.json: FORCE
	$(call stamped,e2e-clients,$@,$(CLIENTS_DIR)/package.json $(CLIENTS_DIR)/package-lock.json,cd $(CLIENTS_DIR) && $(NPM) ci --no-audit --no-fund)

## bench (or benchmark): benchmarks (count BENCH_COUNT), saved to _build/bench.txt and
## summarized by benchstat
# BENCH_COUNT runs per benchmark (benchstat wants several); BENCH_BASE, if set, is an older
# bench.txt to compare with.
BENCH_COUNT ?= 5
bench: $(BENCHSTAT)
	@mkdir -p $(BUILD_DIR)
	$(GO) test -run='^$$' -bench=. -benchmem -count=$(BENCH_COUNT) ./... | tee $(BUILD_DIR)/bench.txt
	$(BENCHSTAT) $(if $(BENCH_BASE),$(BENCH_BASE)) $(BUILD_DIR)/bench.txt
benchmark: bench

## loadtest: the built collector under sustained OTLP/HTTP load on loopback, bare vs
## tail_sampling vs the full pipeline (with its buffer encoded and decoded), at LOAD_RATE
## spans/s and at saturation, LOAD_ROUNDS times over (about 2.5 minutes a round):
## spans/s, CPU-seconds per million spans, peak RSS, retained bytes per span, nothing lost;
## each ratio within a round, the targets as the median of the rounds
LOAD_DURATION ?= 15s
LOAD_RATE ?= 50000
LOAD_ROUNDS ?= 3
loadtest: $(BINARY)
	$(GO) run ./cmd/loadtest --binary $(BINARY) --duration $(LOAD_DURATION) --rate $(LOAD_RATE) --rounds $(LOAD_ROUNDS)

## loadtest-profile: the three handoff pipelines' load-test runs alone (proto, S2 and decoded buffer),
## with a CPU profile of each load phase and a heap profile as it ends in _build/profiles
## (go tool pprof _build/otelcol-handoff FILE)
loadtest-profile: $(BINARY)
	@mkdir -p $(BUILD_DIR)/profiles
	$(GO) run ./cmd/loadtest --binary $(BINARY) --duration $(LOAD_DURATION) --rate $(LOAD_RATE) \
		--only handoff --profile $(BUILD_DIR)/profiles

## loadtest-compare: the full pipeline with the built collector and with BASELINE (another
## build, e.g. `make build` in a git worktree of the code before a change), back to back in
## each of LOAD_ROUNDS rounds at LOAD_RATE and at saturation, the order alternating: each
## binary's CPU-s per 1M spans per round and binary / baseline as the median of the rounds
loadtest-compare: $(BINARY)
	@test -n "$(BASELINE)" || { echo "loadtest-compare: set BASELINE to the collector binary to compare with"; exit 2; }
	$(GO) run ./cmd/loadtest --binary $(BINARY) --baseline $(BASELINE) --only "handoff →" \
		--duration $(LOAD_DURATION) --rate $(LOAD_RATE) --rounds $(LOAD_ROUNDS)

## scaling: the scaling benchmarks (spans per trace 10..10,000, rules 1..100) into
## docs/scaling-bench.txt, drawn by cmd/perfplot as docs/scaling.svg
SCALING_COUNT ?= 3
scaling:
	@mkdir -p $(BUILD_DIR)
	$(GO) test -run='^$$' -bench=ScalingBuild -count=$(SCALING_COUNT) ./internal/agentgraph/ > $(BUILD_DIR)/scaling-bench.txt
	$(GO) test -run='^$$' -bench='ScalingProcessor|ScalingRules' -benchtime=10x -count=$(SCALING_COUNT) \
		./handoffprocessor/ ./assertionexporter/ >> $(BUILD_DIR)/scaling-bench.txt
	grep -v '^ok\|^PASS' $(BUILD_DIR)/scaling-bench.txt > docs/scaling-bench.txt
	$(GO) run ./cmd/perfplot < docs/scaling-bench.txt > docs/scaling.svg

## performance: every figure of docs/performance.md's load test, scaling and memory sections
## in one go (on a quiet machine): make loadtest (table saved to _build/loadtest.txt), make
## scaling, and the memory_limiter e2e test
performance: $(BINARY)
	$(GO) run ./cmd/loadtest --binary $(BINARY) --duration $(LOAD_DURATION) --rate $(LOAD_RATE) --rounds $(LOAD_ROUNDS) > $(BUILD_DIR)/loadtest.txt
	cat $(BUILD_DIR)/loadtest.txt
	$(MAKE) --no-print-directory scaling
	$(GO) test -race -count=1 -v ./e2e/ -run TestMemoryLimiter

## generate: run mdatagen in every component, then format
generate: $(MDATAGEN)
	for c in $(COMPONENTS); do (cd $$c && $(CURDIR)/$(MDATAGEN) metadata.yaml); done
	$(MAKE) fmt

## fmt-check: fail, naming the files, when `make fmt` would change any (part of `make test`)
fmt-check: $(GOIMPORTS) $(GOFUMPT)
	@bad=$$( { gofmt -s -l $(GO_FILES); $(GOIMPORTS) -l -local github.com/otelcol-handoff/otelcol-handoff $(GO_FILES); \
		$(GOFUMPT) -l $(GO_FILES); } | sed "s|^\./||" | sort -u ); \
	if [ -n "$$bad" ]; then echo "make fmt would change:"; echo "$$bad"; exit 1; fi

## fmt: gofmt, goimports and gofumpt on every Go file
fmt: $(GOIMPORTS) $(GOFUMPT)
	gofmt -s -w $(GO_FILES)
	$(GOIMPORTS) -w -local github.com/otelcol-handoff/otelcol-handoff $(GO_FILES)
	$(GOFUMPT) -w $(GO_FILES)

## vet: go vet
vet:
	$(GO) vet ./...

## govulncheck: govulncheck over every package against the Go vulnerability database as of
## the golang.org/x/vulndb version pinned in internal/tools/vuln (its OSV files indexed into
## _build/vulndb: nothing fetched but modules); fails on a vulnerability our code reaches;
## part of make test
VULNDB := $(BUILD_DIR)/vulndb
govulncheck: $(GOVULNCHECK) $(INDEXDB)
	$(call stamped,vulndb,$(VULNDB)/index/db.json,$(TOOL_MOD_indexdb)/go.mod $(TOOL_MOD_indexdb)/go.sum,rm -rf $(VULNDB) && $(INDEXDB) -vulns "$$(cd $(TOOL_MOD_indexdb) && $(GO) list -m -f '{{.Dir}}' golang.org/x/vulndb)/data/osv" -out $(VULNDB))
	$(GOVULNCHECK) -db file://$(CURDIR)/$(VULNDB) ./...

## lint: golangci-lint with .golangci.yml (its standard linters: errcheck, govet, ineffassign,
## staticcheck, unused; and misspell); part of make test
lint: $(GOLANGCI_LINT)
	$(GOLANGCI_LINT) run ./...

## validate: check every config in config/ with the built binary
validate: $(BINARY)
	for f in config/*.yaml; do echo "validate $$f"; $(BINARY) validate --config $$f; done

## tidy: go mod tidy in the root and tools modules
tidy:
	$(GO) mod tidy
	cd $(TOOLS_MOD) && $(GO) mod tidy
	cd $(TOOL_MOD_golangci-lint) && $(GO) mod tidy
	cd $(TOOL_MOD_govulncheck) && $(GO) mod tidy

## image: the container image from the static binary (Containerfile: FROM scratch, non-root,
## the default config) with buildah or podman, no daemon and no registry pull; tagged
## $(IMAGE) in the local container storage and written as an OCI archive to $(IMAGE_ARCHIVE)
# (`podman load -i`, `skopeo copy oci-archive:... docker://...`). IMAGE_STORAGE passes global
# storage flags (--root DIR --runroot DIR --storage-driver vfs: what an unprivileged or
# nested environment may need); IMAGE_BINARY and IMAGE_ARCH build another platform's image
# from a cross-compiled binary (release-snapshot does).
IMAGE          ?= localhost/otelcol-handoff:$(VERSION)
IMAGE_BUILDER  ?= $(shell command -v buildah 2>/dev/null || command -v podman 2>/dev/null)
IMAGE_STORAGE  ?=
IMAGE_BINARY   ?= $(BINARY)
IMAGE_ARCH     ?=
IMAGE_DIR      ?= $(BUILD_DIR)/image
IMAGE_ARCHIVE  ?= $(BUILD_DIR)/otelcol-handoff-image.oci.tar
IMAGE_CONFIG   := examples/deploy/standalone.yaml
# The CA bundle of the build host (Debian's ca-certificates): TLS to trace backends and judges.
CA_BUNDLE      ?= /etc/ssl/certs/ca-certificates.crt

image-context:
	@mkdir -p $(IMAGE_DIR)
	cp $(IMAGE_CONFIG) $(IMAGE_DIR)/config.yaml
	cp $(CA_BUNDLE) $(IMAGE_DIR)/ca-certificates.crt

image: $(IMAGE_BINARY) image-context
	@if [ -z "$(IMAGE_BUILDER)" ]; then echo "make image: needs buildah or podman (apt-get install buildah)" >&2; exit 2; fi
	ln -f $(IMAGE_BINARY) $(IMAGE_DIR)/otelcol-handoff 2>/dev/null || cp $(IMAGE_BINARY) $(IMAGE_DIR)/otelcol-handoff
	$(IMAGE_BUILDER) $(IMAGE_STORAGE) build --isolation chroot --timestamp 0 $(if $(IMAGE_ARCH),--arch $(IMAGE_ARCH)) \
		-f $(CURDIR)/Containerfile -t $(IMAGE) $(IMAGE_DIR)
	rm -f $(IMAGE_ARCHIVE)
	$(IMAGE_BUILDER) $(IMAGE_STORAGE) push $(IMAGE) oci-archive:$(abspath $(IMAGE_ARCHIVE)):$(IMAGE)
	@echo "image $(IMAGE); OCI archive $(IMAGE_ARCHIVE)"

## release-snapshot: goreleaser snapshot (not in CI): binaries and archives in dist/, then the
## linux images (amd64, arm64) from its binaries with buildah or podman (no Docker daemon)
release-snapshot: $(GORELEASER) jq
	$(GORELEASER) release --snapshot --clean --skip=docker,publish,sign
	version=$$(jq -r .version dist/metadata.json); \
	for arch in amd64 arm64; do \
		bin=$$(ls dist/otelcol-handoff_linux_$${arch}*/otelcol-handoff); \
		$(MAKE) image IMAGE_BINARY=$$bin IMAGE_ARCH=$$arch IMAGE=localhost/otelcol-handoff:$$version-$$arch \
			IMAGE_DIR=dist/image-$$arch IMAGE_ARCHIVE=dist/otelcol-handoff-image_$${version}_linux_$$arch.oci.tar; \
	done

## clean: remove _build (generated sources, binaries, tools) and dist (release-snapshot)
clean:
	rm -rf $(BUILD_DIR) dist
