#!/usr/bin/env bash
# Builds the fuzz targets and runs each in turn for a while, starting from its seeds.
#
#   fuzz/run.sh [SECONDS] [TARGET...]        default: 30 seconds, every target
#   fuzz/run.sh --rotate SECONDS              every target built and run over its seeds; a
#                                             quarter of them fuzzed, chosen from the commit
#
# With --rotate, the commit's position in history (`git rev-list --count HEAD`) modulo 4 picks
# the quarter: targets 0, 4, 8, ... of the list below on one commit, 1, 5, 9, ... on the next,
# so four commits in a row fuzz every target (a quarter rather than a third keeps CI's whole
# run inside its 45 minutes). `FUZZ_SHARE=K` picks the quarter by hand.
# Needs cargo-fuzz (`cargo install cargo-fuzz --locked`); RUSTC_BOOTSTRAP=1 lets a stable
# toolchain build with the sanitizer flags. New inputs go to fuzz/corpus/<target>, crashes and
# each run's log to fuzz/artifacts/ (both ignored by git). Stops at the first crash, non-zero.
set -euo pipefail
cd "$(dirname "$0")"

rotate=0
if [[ "${1:-}" == --rotate ]]; then rotate=1; shift; fi
seconds="${1:-30}"
shift || true
all=(record_codec import_claude import_codex import_opencode import_annal import_gemini import_aider import_cline import_pi import_qwen import_copilot import_continue import_vscode import_openhands import_kimi import_factory import_cursor import_kiro import_kiro_log import_amp import_cursor_transcript import_zed import_crush import_goose import_opencode_rows responses_items append_jsonl export_roundtrip project_invariants search_query)
if [[ $# -gt 0 ]]; then targets=("$@"); else targets=("${all[@]}"); fi

# The quarter of the targets this run fuzzes with --rotate; the others only replay their seeds.
share="${FUZZ_SHARE:-}"
if [[ $rotate -eq 1 && -z "$share" ]]; then
    commits="$(git rev-list --count HEAD 2>/dev/null || echo 0)"
    share=$((commits % 4))
fi
fuzzed() {
    local i
    [[ $rotate -eq 0 ]] && return 0
    for i in "${!targets[@]}"; do
        if [[ "${targets[$i]}" == "$1" ]]; then (( i % 4 == share )); return; fi
    done
    return 1
}
if [[ $rotate -eq 1 ]]; then echo "fuzz: share $share of 4 fuzzed for ${seconds} s each, the rest replay their seeds"; fi

export RUSTC_BOOTSTRAP=1
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"
host="$(rustc -vV | sed -n 's/^host: //p')"

# The codec target feeds bytes straight into rkyv's unsafe validation, so it runs under
# AddressSanitizer. The others drive a whole store per input (a writer thread, a page cache),
# which ASan slows about sixfold; they are safe Rust over that same codec and run without it.
sanitizer() { if [[ $1 == record_codec ]]; then echo address; else echo none; fi; }

# Each sanitizer builds into its own folder, so switching does not rebuild everything. Every
# target at once is one cargo build of all of them (its jobs link two binaries at a time, where
# one build per target links one after another); the ASan target is built apart.
if [[ $# -eq 0 ]]; then
    cargo fuzz build --sanitizer none --target-dir target/none
    cargo fuzz build --sanitizer address --target-dir target/address record_codec
else
    for target in "${targets[@]}"; do
        s="$(sanitizer "$target")"
        cargo fuzz build --sanitizer "$s" --target-dir "target/$s" "$target"
    done
fi

mkdir -p artifacts
for target in "${targets[@]}"; do
    s="$(sanitizer "$target")"
    mkdir -p "corpus/$target" "artifacts/$target"
    inputs=("corpus/$target")
    for seeds in seeds/"$target" ../formats/src/agents/*/seeds/"$target"; do
        if [[ -d $seeds ]]; then inputs+=("$seeds"); fi
    done
    if fuzzed "$target"; then
        options=(-max_total_time="$seconds")
        what="${seconds} s"
    else
        # -runs=0: every seed and corpus input is executed once, then no new input is made.
        options=(-runs=0)
        what="seeds only"
    fi
    options+=(-timeout=10 -print_final_stats=1 -artifact_prefix="artifacts/$target/")
    if [[ $target == import_* || $target == append_jsonl ]]; then options+=(-dict=dicts/transcripts.dict); fi
    log="artifacts/$target.log"
    status=0
    # Run the built binary, not `cargo fuzz run`, so edits to the tree during a long run are not
    # picked up half way.
    nice -n 19 "target/$s/$host/release/$target" "${options[@]}" "${inputs[@]}" >"$log" 2>&1 || status=$?
    runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
    crashes="$(find "artifacts/$target" -type f | wc -l)"
    echo "fuzz $target: ${runs:-?} executions, ${what}, sanitizer $s, exit $status, ${crashes} crash files"
    if [[ $status -ne 0 ]]; then
        tail -n 60 "$log"
        exit "$status"
    fi
done
