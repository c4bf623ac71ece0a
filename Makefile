# Run `make help` for the list of targets. Document a target by ending its rule line
# with `## description`; it then shows up in `make help`.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# Where `make tools` installs DynamoDB Local, MinIO and Terraform (git-ignored).
TOOLS_DIR ?= $(CURDIR)/.tools
export TOOLS_DIR

.PHONY: help
help: ## Show this help
	@awk 'BEGIN { FS = ":.*## " } /^[a-zA-Z0-9_.-]+:.*## / { printf "  %-18s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

.PHONY: tools
tools: ## Install DynamoDB Local, MinIO and Terraform into .tools/ (env TOOLS_DIR overrides; reuses what is there)
	@bash .ci/tools.sh
