# otelcol-handoff: build, test and run the collector distribution.
# Needs only Go: every tool is built from the pinned internal/tools module.

SHELL       := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build

GO        ?= go
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

# Tools: binary name -> package (versions pinned by internal/tools/go.mod).
TOOL_PKG_builder   := go.opentelemetry.io/collector/cmd/builder
TOOL_PKG_mdatagen  := go.opentelemetry.io/collector/cmd/mdatagen
TOOL_PKG_goimports := golang.org/x/tools/cmd/goimports
TOOL_PKG_gofumpt   := mvdan.cc/gofumpt
TOOL_PKG_benchstat := golang.org/x/perf/cmd/benchstat
TOOLS := $(addprefix $(TOOLS_DIR)/,builder mdatagen goimports gofumpt benchstat)

OCB       := $(TOOLS_DIR)/builder
MDATAGEN  := $(TOOLS_DIR)/mdatagen
GOIMPORTS := $(TOOLS_DIR)/goimports
GOFUMPT   := $(TOOLS_DIR)/gofumpt
BENCHSTAT := $(TOOLS_DIR)/benchstat

# Every Go file of the repo (outside _build and the tools module).
GO_FILES := $(shell find . -name '*.go' -not -path './$(BUILD_DIR)/*' -not -path './$(TOOLS_MOD)/*')
# The Go files linked into the collector: not tests, not cmd/.
COLLECTOR_SOURCES := $(filter-out ./cmd/% %_test.go,$(GO_FILES))

.PHONY: all install-tools build run test bench loadtest generate fmt vet validate tidy clean e2e-clients promtool report-assets chromium

# promtool checks and unit-tests the shipped Prometheus alert rules (examples/observability).
# It comes from Debian's `prometheus` package, pinned to the version bookworm offers
# (`apt-cache policy prometheus`); services are not started (policy-rc.d in containers,
# and nothing here runs the prometheus daemon).
PROMETHEUS_DEB_VERSION := 2.42.0+ds-5+deb12u1

# The HTML report's Mermaid renderer: dist/mermaid.min.js of the mermaid npm package pinned in
# e2e/clients, embedded into the binaries when present (internal/report/assets/README.md).
REPORT_ASSET  := internal/report/assets/mermaid.min.js
MERMAID_DIST  := $(CLIENTS_DIR)/node_modules/mermaid/dist/mermaid.min.js
REPORT_ASSETS := $(wildcard internal/report/assets/*)

# The HTML report's browser test renders it in headless Chromium: Debian's package, pinned to
# the version bookworm offers (`apt-cache policy chromium`).
CHROMIUM_DEB_VERSION := 156.0.8078.114-1~deb12u1

all: build

## install-tools: build the pinned tools into _build/tools
install-tools: $(TOOLS)

$(TOOLS_DIR)/%: $(TOOLS_MOD)/go.mod $(TOOLS_MOD)/go.sum
	@mkdir -p $(TOOLS_DIR)
	cd $(TOOLS_MOD) && $(GO) build -o $(CURDIR)/$@ $(TOOL_PKG_$*)

## build: generate the distribution with ocb and compile _build/otelcol-handoff, and _build/handoffcheck
build: report-assets $(BINARY) $(CHECK)

$(BINARY): $(OCB) $(MANIFEST) go.mod go.sum $(COLLECTOR_SOURCES) $(REPORT_ASSETS)
	$(OCB) --config $(MANIFEST)
	@touch $@

# handoffcheck links the same components as the collector.
$(CHECK): go.mod go.sum $(COLLECTOR_SOURCES) $(REPORT_ASSETS) $(wildcard cmd/handoffcheck/*.go)
	$(GO) build -o $@ ./cmd/handoffcheck

$(REPLAY): go.mod go.sum $(wildcard cmd/otlpreplay/*.go)
	$(GO) build -o $@ ./cmd/otlpreplay

## run: start the collector with $(CONFIG) and replay testdata/traces to it (Ctrl-C stops)
# The replay waits in the background until the collector's OTLP/HTTP port is up.
run: $(BINARY) $(REPLAY)
	$(REPLAY) --endpoint http://127.0.0.1:4318 --wait 60s $(TRACES) & replay=$$!; \
	trap 'kill $$replay 2>/dev/null || true' EXIT; \
	$(BINARY) --config $(CONFIG)

## test: unit and end-to-end tests (e2e tests use _build/otelcol-handoff and e2e/clients;
## the alert-rule tests use promtool; the HTML report's test headless Chromium)
test: e2e-clients build promtool chromium
	$(GO) test -race -count=1 ./...

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

## e2e-clients: install the pinned npm packages of the real-client scenarios (npm ci, only
## when node_modules is missing or older than package.json / package-lock.json)
e2e-clients: $(CLIENTS_DIR)/node_modules/.package-lock.json

$(CLIENTS_DIR)/node_modules/.package-lock.json: $(CLIENTS_DIR)/package.json $(CLIENTS_DIR)/package-lock.json
	cd $(CLIENTS_DIR) && $(NPM) ci --no-audit --no-fund
	@touch $@

## bench: benchmarks (count BENCH_COUNT), saved to _build/bench.txt and summarized by benchstat
# BENCH_COUNT runs per benchmark (benchstat wants several); BENCH_BASE, if set, is an older
# bench.txt to compare with.
BENCH_COUNT ?= 5
bench: $(BENCHSTAT)
	@mkdir -p $(BUILD_DIR)
	$(GO) test -run='^$$' -bench=. -benchmem -count=$(BENCH_COUNT) ./... | tee $(BUILD_DIR)/bench.txt
	$(BENCHSTAT) $(if $(BENCH_BASE),$(BENCH_BASE)) $(BUILD_DIR)/bench.txt

## loadtest: the built collector under sustained OTLP/HTTP load on loopback (bare vs full
## pipeline): spans/s, CPU-seconds per million spans, peak RSS, nothing lost
LOAD_DURATION ?= 20s
loadtest: $(BINARY)
	$(GO) run ./cmd/loadtest --binary $(BINARY) --duration $(LOAD_DURATION)

## generate: run mdatagen in every component, then format
generate: $(MDATAGEN)
	for c in $(COMPONENTS); do (cd $$c && $(CURDIR)/$(MDATAGEN) metadata.yaml); done
	$(MAKE) fmt

## fmt: gofmt, goimports and gofumpt on every Go file
fmt: $(GOIMPORTS) $(GOFUMPT)
	gofmt -s -w $(GO_FILES)
	$(GOIMPORTS) -w -local github.com/otelcol-handoff/otelcol-handoff $(GO_FILES)
	$(GOFUMPT) -w $(GO_FILES)

## vet: go vet
vet:
	$(GO) vet ./...

## validate: check every config in config/ with the built binary
validate: $(BINARY)
	for f in config/*.yaml; do echo "validate $$f"; $(BINARY) validate --config $$f; done

## tidy: go mod tidy in the root and tools modules
tidy:
	$(GO) mod tidy
	cd $(TOOLS_MOD) && $(GO) mod tidy

## clean: remove _build (generated sources, binaries, tools)
clean:
	rm -rf $(BUILD_DIR)
