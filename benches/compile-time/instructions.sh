#!/usr/bin/env bash
# Instructions rustc executes to check the two 100-tool crates after a touch,
# counted with valgrind (callgrind), which, unlike wall time, repeats to the
# last digit whatever else the machine is doing. Run `run.sh` first: it
# generates the crates and builds their dependencies.
#
# Usage: benches/compile-time/instructions.sh [MODE]   (check, the default, or build)
# Prints gate's and rmcp's count in billions and their ratio.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=target/compile-time
sub=${1:-check}
command -v valgrind >/dev/null || { echo "valgrind is needed" >&2; exit 2; }

count() { # crate: billions of instructions of rustc on the tools crate
    local crate=$1 cmd log
    (
        cd "$out/$crate"
        export CARGO_TARGET_DIR="$PWD/../target-$crate"
        cargo "$sub" -q
        touch src/lib.rs
        # The rustc command cargo runs for the tools crate, run again under valgrind.
        cmd=$(cargo "$sub" -v 2>&1 | grep -o "Running \`[^\`]*--crate-name tools_$crate[^\`]*\`" | tail -1)
        cmd=${cmd#Running \`}
        cmd=${cmd%\`}
        log=$(mktemp)
        eval "valgrind --tool=callgrind --callgrind-out-file=/dev/null $cmd" >/dev/null 2>"$log" || true
        awk '/Collected/ {s += $4} END {printf "%.3f\n", s / 1e9}' "$log"
        rm -f "$log"
    )
}

g=$(count gate)
r=$(count rmcp)
printf '%-6s gate %s G  rmcp %s G  gate / rmcp %.2f\n' "$sub" "$g" "$r" "$(python3 -c "print($g / $r)")"
