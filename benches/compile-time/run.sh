#!/usr/bin/env bash
# Compile time of 100 tools: gate's `#[tool]` + `toolbox!` against rmcp's
# `#[tool]` + `#[tool_router]`, as the ratio gate / rmcp in four modes:
#   check       `cargo check` after touching the tools' file
#   incremental `cargo build` (debug, incremental) after touching it
#   clean       `cargo build` (debug) after `cargo clean -p` of the tools' crate
#   release     `cargo build --release` after `cargo clean --release -p` of it
# Dependencies are built once first and not counted: what is timed is the
# crate the macros expand into. The two commands run in turn (gate, rmcp,
# gate, …) so a machine that speeds up or slows down affects both; each ratio
# is the median of the per-pair ratios.
#
# Both crates take only what their tools need (rmcp: `server` and `macros`;
# gate: `default-features = false`); `GATE_FEATURES=default` gives gate its
# default features (the SQLite store, the OpenAI-compatible client).
#
# Usage: benches/compile-time/run.sh [RUNS] [TOOLS]   (defaults: 7, 100)
# Output directory: target/compile-time (kept, so a second run starts warm).
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-7}
tools=${2:-100}
out=target/compile-time
python3 benches/compile-time/generate.py "$out" . "$tools"

build() { # crate, cargo arguments...
    local crate=$1
    shift
    (cd "$out/$crate" && CARGO_TARGET_DIR="$PWD/../target-$crate" cargo "$@" -q)
}

prepare() { # mode, crate
    case $1 in
        check) touch "$out/$2/src/lib.rs" ;;
        incremental) touch "$out/$2/src/lib.rs" ;;
        clean) build "$2" clean -p "tools-$2" ;;
        release) build "$2" clean --release -p "tools-$2" ;;
    esac
}

run() { # mode, crate
    case $1 in
        check) build "$2" check ;;
        incremental | clean) build "$2" build ;;
        release) build "$2" build --release ;;
    esac
}

seconds() { # mode, crate: prints the wall time of one timed run
    prepare "$1" "$2"
    local start end
    start=$(date +%s%N)
    run "$1" "$2"
    end=$(date +%s%N)
    echo "$(( (end - start) / 1000000 ))"
}

for crate in gate rmcp; do
    for mode in check incremental release; do run "$mode" "$crate"; done
done

printf '%-12s %8s %8s %8s   (%s runs of %s tools, median of pairwise ratios)\n' mode gate_ms rmcp_ms ratio "$runs" "$tools"
for mode in check incremental clean release; do
    ratios=() gates=() rmcps=()
    for _ in $(seq "$runs"); do
        g=$(seconds "$mode" gate)
        r=$(seconds "$mode" rmcp)
        gates+=("$g") rmcps+=("$r")
        ratios+=("$(python3 -c "print($g / $r)")")
    done
    median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
    printf '%-12s %8s %8s %8.2f\n' "$mode" "$(median "${gates[@]}")" "$(median "${rmcps[@]}")" "$(median "${ratios[@]}")"
done
