#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# devtools/check-layout.sh on the source tree's app/, lib/ and drivers/ (no
# file over 600 lines; in lib/ and drivers/ mutants switch whole functions
# and no symbol of the test kit is named), and its negative controls on
# made-up trees: a file of 601 lines, a mutant switch inside a function
# body, a mutant switch without its default in the mutant header and a kit
# symbol named in the product must each fail it, naming the file; a file
# of 600 lines and a function-level mutant with its default pass.
#
# usage: check_layout.sh CHECK_LAYOUT SRCDIR
set -euo pipefail

check=$1
src=$2
"$check" "$src/app" "$src/lib" "$src/drivers"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'CQPOLL_EMU_0.1 {\n\tglobal:\n\t\tkit_naive_arm;\n\tlocal: *;\n};\n' > "$tmp/kit.map"
printf '#ifndef CQPOLL_MUTANT_NAIVE\n#define CQPOLL_MUTANT_NAIVE 0\n#endif\n' > "$tmp/mutant.h"
mkdir -p "$tmp/app/sub" "$tmp/lib"
seq 600 > "$tmp/app/sub/ok.c"
cat > "$tmp/lib/ok.c" <<'C'
#if CQPOLL_MUTANT(NAIVE)
static int
arm(void)
{
	return 0;
}
#else
static int
arm(void)
{
	return 1;
}
#endif
C
"$check" --kit "$tmp/kit.map" --mutants "$tmp/mutant.h" "$tmp/app" "$tmp/lib" > /dev/null ||
    { echo "FAIL: a 600-line file or a function-level mutant was refused"; exit 1; }

# expect_fail NAME FILE...: the check refuses the tree, naming NAME.
expect_fail() {
    local name=$1 out
    shift
    if out=$("$check" --kit "$tmp/kit.map" --mutants "$tmp/mutant.h" "$@"); then
        echo "FAIL: the control $name passed the layout check"
        exit 1
    fi
    case $out in
    *"$name"*) echo "ok: the control $name fails: $(echo "$out" | head -1)" ;;
    *) echo "FAIL: the check failed without naming $name: $out"; exit 1 ;;
    esac
}
seq 601 > "$tmp/app/sub/long.c"
expect_fail long.c "$tmp/app"
rm "$tmp/app/sub/long.c"
mkdir -p "$tmp/in_body/lib"
cat > "$tmp/in_body/lib/in_body.c" <<'C'
static int
arm(void)
{
#if CQPOLL_MUTANT(NAIVE)
	return 0;
#endif
	return 1;
}
C
expect_fail in_body.c "$tmp/in_body/lib"
mkdir -p "$tmp/kit/drivers"
printf 'int kit_naive_arm(void);\n' > "$tmp/kit/drivers/kit.c"
expect_fail kit.c "$tmp/kit/drivers"
mkdir -p "$tmp/no_default/lib"
sed 's/NAIVE/NAIVE_TYPO/' "$tmp/lib/ok.c" > "$tmp/no_default/lib/no_default.c"
expect_fail no_default.c "$tmp/no_default/lib"
