#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The layout rules of the tree:
#   - no file under app/, lib/ or drivers/ longer than 600 lines, so that
#     each stays one job a reader can hold at once;
#   - in the product (lib/ and drivers/), a mutant (CQPOLL_MUTANT, the
#     negative controls' naive code) switches whole functions: no
#     "#if CQPOLL_MUTANT(...)" inside a function body, and each switch has
#     its "#define CQPOLL_MUTANT_<NAME> 0" in lib/cqpoll/cqpoll_mutant.h
#     ("#if" takes an undefined name for 0 without a word, so a switch
#     without one would build, and a typo in a control's flag would go
#     unseen);
#   - the product names no symbol of the test kit (what libcqpoll_emu
#     exports: emu/version.map).
#
# usage: devtools/check-layout.sh [--max N] [--product] [--kit MAP]
#                                 [--mutants HEADER] [DIR...]
#
# DIR defaults to the source tree's app/, lib/ and drivers/. A DIR named
# lib or drivers, or any DIR with --product, gets the product's checks too.
# Every regular file counts for the length (C, headers, meson.build,
# scripts); the product's checks read its .c and .h files. A function body
# is what lies between a "{" and a "}" in the first column (the project's
# style). Exits 0 when every rule holds, 1 naming each breach, 2 on bad
# usage.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
max=600
product=0
kit=$top/emu/version.map
mutants=$top/lib/cqpoll/cqpoll_mutant.h
while [ $# -gt 0 ]; do
    case $1 in
    --max)
        [ $# -ge 2 ] && [[ $2 =~ ^[0-9]+$ ]] || { echo "check-layout: --max needs a number" >&2; exit 2; }
        max=$2
        shift 2
        ;;
    --product)
        product=1
        shift
        ;;
    --kit)
        [ $# -ge 2 ] && [ -f "$2" ] || { echo "check-layout: --kit needs a version map" >&2; exit 2; }
        kit=$2
        shift 2
        ;;
    --mutants)
        [ $# -ge 2 ] && [ -f "$2" ] || { echo "check-layout: --mutants needs a header" >&2; exit 2; }
        mutants=$2
        shift 2
        ;;
    *)
        break
        ;;
    esac
done
if [ $# -eq 0 ]; then
    set -- "$top/app" "$top/lib" "$top/drivers"
fi
[ -f "$kit" ] || { echo "check-layout: $kit: no kit version map" >&2; exit 2; }
# The kit's symbols: the global names of its version map.
kitsyms=$(sed -n 's/^[[:space:]]*\([a-z_][a-z0-9_]*\);[[:space:]]*$/\1/p' "$kit" | sort -u)
[ -n "$kitsyms" ] || { echo "check-layout: $kit names no symbol" >&2; exit 2; }
[ -f "$mutants" ] || { echo "check-layout: $mutants: no mutant header" >&2; exit 2; }
mutants=$(realpath "$mutants")

bad=0
files=0
for dir in "$@"; do
    [ -d "$dir" ] || { echo "check-layout: $dir: not a directory" >&2; exit 2; }
    while IFS= read -r -d '' f; do
        files=$((files + 1))
        n=$(wc -l < "$f")
        if [ "$n" -gt "$max" ]; then
            echo "check-layout: $f: $n lines (at most $max)"
            bad=$((bad + 1))
        fi
    done < <(find "$dir" -type f -print0)
    case $(basename "$dir") in
    lib | drivers) ;;
    *) [ "$product" -eq 1 ] || continue ;;
    esac
    while IFS= read -r -d '' f; do
        if ! awk -v f="$f" '
            /^\{/ { body = 1 }
            /^\}/ { body = 0 }
            body && /^[ \t]*#[ \t]*(if|ifdef|ifndef|elif)[ \t].*CQPOLL_MUTANT/ {
                printf "check-layout: %s:%d: a mutant switch inside a function body: %s\n", f, FNR, $0
                bad = 1
            }
            END { exit bad }' "$f"; then
            bad=$((bad + 1))
        fi
        if [ "$(realpath "$f")" != "$mutants" ]; then
            while IFS= read -r name; do
                grep -qx "#define CQPOLL_MUTANT_$name 0" "$mutants" && continue
                echo "check-layout: $f: mutant $name has no \"#define CQPOLL_MUTANT_$name 0\" in $mutants"
                bad=$((bad + 1))
            done < <(grep -ohE 'CQPOLL_MUTANT\([A-Z0-9_]+\)' "$f" | sed 's/^CQPOLL_MUTANT(\(.*\))$/\1/' | sort -u)
        fi
        if hits=$(grep -nwF -- "$kitsyms" "$f"); then
            while IFS= read -r h; do
                echo "check-layout: $f:${h%%:*}: names a symbol of the test kit: ${h#*:}"
            done <<< "$hits"
            bad=$((bad + 1))
        fi
    done < <(find "$dir" -type f \( -name '*.c' -o -name '*.h' \) -print0)
done
if [ "$files" -eq 0 ]; then
    echo "check-layout: no file found in $*" >&2
    exit 2
fi
if [ "$bad" -ne 0 ]; then
    echo "check-layout: $bad breaches in $files files"
    exit 1
fi
echo "check-layout: $files files, none over $max lines, the product's mutants at function level with their defaults, no kit symbol in it"
