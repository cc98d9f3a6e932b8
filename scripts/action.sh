#!/usr/bin/env bash
# The logic of the repository's GitHub Action (action.yml): the action's steps call it, and
# e2e/action_test.go runs it in `make test` with a temporary GITHUB_STEP_SUMMARY/GITHUB_OUTPUT.
#
#   scripts/action.sh cache-key   print the Go cache key and paths (GITHUB_OUTPUT lines)
#   scripts/action.sh build       build handoffcheck from the action's own checkout
#   scripts/action.sh check       run handoffcheck, write the step summary, the annotations
#                                 and the outputs, and exit with handoffcheck's code
#
# Inputs come as environment variables (action.yml maps its inputs to them; none is
# interpolated into a shell line):
#   ACTION_PATH        the action's checkout (default: this script's repository)
#   HANDOFFCHECK       the handoffcheck binary (check; default: handoffcheck on PATH)
#   INPUT_MODE         replay (default) or run
#   INPUT_CONFIG       the collector config (required)
#   INPUT_FILES        replay: span files, whitespace-separated; globs are expanded (** too)
#   INPUT_COMMAND      run: the test command, run with bash -eo pipefail -c
#   INPUT_ARGS         more handoffcheck flags, whitespace-separated (--fail-on fail,error,skipped)
#   INPUT_REPORT_DIR   where the reports go (default: $RUNNER_TEMP/handoffcheck-report)
# GitHub sets GITHUB_STEP_SUMMARY, GITHUB_OUTPUT and RUNNER_TEMP; outside a runner the
# summary and outputs are skipped where their variable is unset.
set -euo pipefail

ACTION_PATH=${ACTION_PATH:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}

# GitHub caps a step summary at 1 MiB; a longer report is cut with a pointer to the artifact.
SUMMARY_LIMIT=${SUMMARY_LIMIT:-1000000}

# output NAME VALUE appends one output line; a value with a newline is refused (a path or a
# count never has one, and a newline would let a value forge another output).
output() {
	case $2 in *$'\n'* | *$'\r'*)
		echo "action.sh: output $1 has a line break" >&2
		return 1
		;;
	esac
	if [[ -n ${GITHUB_OUTPUT:-} ]]; then
		printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"
	fi
}

# cache-key: the key of the Go build and module caches (actions/cache), from the action's
# go.sum: setup-go's own cache hashes files of the workspace only, not the action's.
cmd_cache_key() {
	local sum
	sum=$(sha256sum "$ACTION_PATH/go.sum" | cut -c1-16)
	local prefix="handoffcheck-${RUNNER_OS:-$(uname -s)}-${RUNNER_ARCH:-$(uname -m)}-$(go env GOVERSION)-"
	output key "$prefix$sum"
	output restore-key "$prefix"
	output gocache "$(go env GOCACHE)"
	output gomodcache "$(go env GOMODCACHE)"
}

cmd_build() {
	local out=${1:-${RUNNER_TEMP:-/tmp}/handoffcheck-bin/handoffcheck}
	mkdir -p "$(dirname "$out")"
	(cd "$ACTION_PATH" && CGO_ENABLED=0 go build -trimpath -o "$out" ./cmd/handoffcheck)
	output path "$out"
	echo "built $out"
}

# expand_files: INPUT_FILES split on whitespace; a word with a glob character expands to
# its matches (sorted, ** recursive) and must match something.
expand_files() {
	local -a words
	read -r -d '' -a words <<<"${INPUT_FILES:-}" || true
	shopt -s globstar nullglob
	local w m
	for w in "${words[@]}"; do
		if [[ $w == *[*?[]* ]]; then
			local -a matches=($w)
			if ((${#matches[@]} == 0)); then
				echo "::error title=handoffcheck action::no file matches $w" >&2
				return 2
			fi
			for m in "${matches[@]}"; do FILES+=("$m"); done
		else
			FILES+=("$w")
		fi
	done
	shopt -u globstar nullglob
}

# write_summary appends to the step summary: when handoffcheck did not judge (exit 2 or 3,
# or no report), what went wrong with the end of its output; then the Markdown report.
write_summary() {
	local code=$1 markdown=$2 log=$3
	[[ -n ${GITHUB_STEP_SUMMARY:-} ]] || return 0
	if ((code > 1)) || [[ ! -s $markdown ]]; then
		{
			printf '# handoffcheck\n\n**handoffcheck exited %d**' "$code"
			case $code in
			2) printf ' (config or input error)' ;;
			3) printf ' (the test command failed)' ;;
			esac
			printf '.\n\n<pre>\n'
			# HTML-escaped: the output may quote span data or the config.
			tail -n 50 "$log" | sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g'
			printf '</pre>\n\n'
		} >>"$GITHUB_STEP_SUMMARY"
	fi
	[[ -s $markdown ]] || return 0
	local size
	size=$(wc -c <"$markdown")
	if ((size > SUMMARY_LIMIT)); then
		head -c "$SUMMARY_LIMIT" "$markdown" | sed '$d' >>"$GITHUB_STEP_SUMMARY"
		printf '\n\n_The report is %d bytes, over the step summary limit: cut here; the whole report is in the artifact._\n' "$size" >>"$GITHUB_STEP_SUMMARY"
	else
		cat "$markdown" >>"$GITHUB_STEP_SUMMARY"
	fi
}

# annotate prints a workflow command per result that did not pass (from the JSON lines,
# where every string is still whole and unescaped): fail and error as ::error, a gated fail
# (the gate decides) as ::warning, skipped as ::notice; then one ::error per failed gate.
annotate() {
	local results=$1 log=$2
	if [[ -s $results ]]; then
		if ! command -v jq >/dev/null; then
			echo "::warning title=handoffcheck action::jq is not installed: no annotation per failure (the step summary has them)"
		else
			jq -r '
				def esc: gsub("%"; "%25") | gsub("\r"; "%0D") | gsub("\n"; "%0A");
				def prop: esc | gsub(":"; "%3A") | gsub(","; "%2C");
				select(.outcome != "pass")
				| (if .outcome == "fail" and (.gated // false) then "warning"
				   elif .outcome == "skipped" then "notice"
				   else "error" end) as $level
				| "::\($level) title=\("\(.outcome | ascii_upcase) \(.case) / \(.step)" | prop)::\("\(.message) (trace \(.trace_id))" | esc)"
			' "$results"
		fi
	fi
	# Gate verdicts are lines of handoffcheck's output (escaped there: one line each).
	local line
	while IFS= read -r line; do
		line=${line//'%'/%25}
		printf '::error title=handoffcheck gate::%s\n' "$line"
	done < <(grep '^GATE FAIL ' "$log" || true)
}

# count OUTCOME: the number of results with that outcome.
count() {
	if [[ -s $1 ]] && command -v jq >/dev/null; then
		jq -r --arg o "$2" 'select(.outcome == $o) | .outcome' "$1" | wc -l | tr -d ' '
	else
		echo 0
	fi
}

cmd_check() {
	local mode=${INPUT_MODE:-replay}
	local config=${INPUT_CONFIG:-}
	local bin=${HANDOFFCHECK:-handoffcheck}
	if [[ -z $config ]]; then
		echo "::error title=handoffcheck action::the config input is required"
		output exit-code 2
		return 2
	fi
	local dir=${INPUT_REPORT_DIR:-${RUNNER_TEMP:-/tmp}/handoffcheck-report}
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	local results=$dir/results.jsonl junit=$dir/junit.xml markdown=$dir/report.md
	local log=$dir/handoffcheck.log
	rm -f "$results" "$junit" "$markdown" "$log"

	local -a args extra cmd
	read -r -d '' -a extra <<<"${INPUT_ARGS:-}" || true
	args=(--config "$config" --json "$results" --junit "$junit" --markdown "$markdown" "${extra[@]}")
	case $mode in
	replay)
		local -a FILES=()
		expand_files || {
			output exit-code 2
			return 2
		}
		cmd=("$bin" replay "${args[@]}" "${FILES[@]}")
		;;
	run)
		if [[ -z ${INPUT_COMMAND:-} ]]; then
			echo "::error title=handoffcheck action::mode run needs the command input"
			output exit-code 2
			return 2
		fi
		cmd=("$bin" run "${args[@]}" -- bash -eo pipefail -c "$INPUT_COMMAND")
		;;
	*)
		echo "::error title=handoffcheck action::mode is replay or run, not ${mode//'%'/%25}"
		output exit-code 2
		return 2
		;;
	esac

	# handoffcheck's output (and the test command's) is not read as workflow commands: a
	# span name or a test's print cannot forge an annotation or set an output.
	local token
	token=handoffcheck-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
	echo "::stop-commands::$token"
	local code
	set +e
	"${cmd[@]}" 2>&1 | tee "$log"
	code=${PIPESTATUS[0]}
	set -e
	echo "::$token::"

	write_summary "$code" "$markdown" "$log"
	annotate "$results" "$log"

	output exit-code "$code"
	output report-dir "$dir"
	[[ -f $junit ]] && output junit "$junit"
	[[ -f $markdown ]] && output markdown "$markdown"
	[[ -f $results ]] && output json "$results"
	output passed "$(count "$results" pass)"
	output failed "$(count "$results" fail)"
	output errors "$(count "$results" error)"
	output skipped "$(count "$results" skipped)"
	return "$code"
}

case ${1:-} in
cache-key) cmd_cache_key ;;
build) cmd_build "${@:2}" ;;
check) cmd_check ;;
*)
	echo "usage: $0 cache-key | build [OUT] | check" >&2
	exit 2
	;;
esac
