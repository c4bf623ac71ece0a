# Run `make help` for the list of targets. Document a target by ending its rule line
# with `## description`; it then shows up in `make help`.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# Where `make tools` installs DynamoDB Local, MinIO, Terraform and the AWS provider (git-ignored).
TOOLS_DIR ?= $(CURDIR)/.tools
export TOOLS_DIR
# Which tools `make tools` installs: some of dynamodb minio terraform aws-provider chromium (default all).
TOOLS ?=
export TOOLS
# `make demo`'s archive: fs (an Iceberg warehouse on the local filesystem, no MinIO: the fast
# first run) or minio (S3 on MinIO, built from source on a first run, as `make test` uses).
DEMO_ARCHIVE ?= fs
export DEMO_ARCHIVE
# `make deploy`: the action and stage, and extra flags (e.g. DEPLOY_FLAGS="--backend-bucket b").
ACTION ?= plan
STAGE ?= dev
DEPLOY_FLAGS ?=

.PHONY: help
help: ## Show this help
	@awk 'BEGIN { FS = ":.*## " } /^[a-zA-Z0-9_.-]+:.*## / { printf "  %-18s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

.PHONY: tools
tools: ## Install DynamoDB Local, MinIO, Terraform and the hashicorp/aws provider (built from source, ~10 min) into .tools/, and Debian's chromium; TOOLS="dynamodb minio" for some (reuses what is there)
	@bash .ci/tools.sh

.PHONY: build
build: ## Build bin/streamfold (CGO_ENABLED=0)
	@mkdir -p bin
	CGO_ENABLED=0 go build -o bin/streamfold ./cmd/streamfold

.PHONY: package
package: ## Build every Lambda function into dist/<name>.zip (linux/arm64, CGO_ENABLED=0) for Terraform
	@bash .ci/package.sh

.PHONY: serve
serve: build ## Serve the HTTP API and the dashboard on 127.0.0.1:8080 against the local stack (make up first)
	STREAMFOLD_DYNAMODB_ENDPOINT=$${STREAMFOLD_DYNAMODB_ENDPOINT:-http://127.0.0.1:8766} bin/streamfold serve --addr 127.0.0.1:8080

.PHONY: deploy
deploy: build ## streamfold deploy ACTION (default plan) --stage STAGE (dev) DEPLOY_FLAGS; builds Terraform into .tools/ only if none is on PATH
	@if [ ! -x "$(TOOLS_DIR)/bin/terraform" ] && ! command -v terraform >/dev/null 2>&1; then bash .ci/tools.sh terraform; fi
	bin/streamfold deploy $(ACTION) --stage $(STAGE) $(DEPLOY_FLAGS)

.PHONY: demo
demo: ## The main job: DynamoDB Local (no MinIO, no Terraform), a workload simulated, projected, archived to a local Iceberg warehouse, verified; DEMO_ARCHIVE=minio archives to MinIO
	@bash .ci/demo.sh

.PHONY: test
test: ## Every test: tools, gofmt/vet, private services on test ports, go test ./..., services stopped
	@bash .ci/test.sh

.PHONY: up
up: build ## Start the local stack (DynamoDB Local + MinIO, or the local warehouse if the last `dev up`/`make demo` chose it) and create tables and bucket
	bin/streamfold dev up --tools-dir $(TOOLS_DIR)

.PHONY: down
down: build ## Stop the local stack started by `make up` / `make demo`
	bin/streamfold dev down --tools-dir $(TOOLS_DIR)

.PHONY: bench
bench: ## Go benchmarks (no services needed for the pure ones; see docs/benchmarks.md)
	go test -run '^$$' -bench . -benchmem ./...
