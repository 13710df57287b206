#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The guides' example outputs print the version this tree builds: every
# "cqpoll X.Y.Z" in the given Markdown files must be VERSION's. A guide left
# at an old version (testpmd-cq.md said 0.1.0 at 0.4.0) fails; rerun the
# example, or fix the line, when VERSION changes.
# usage: check_doc_version.sh VERSION-FILE GUIDE.md...
set -eu
want=$(cat "$1")
shift
bad=0
for f in "$@"; do
    for v in $(grep -o 'cqpoll [0-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*' "$f" | awk '{ print $2 }'); do
        if [ "$v" != "$want" ]; then
            echo "$f: prints cqpoll $v, the tree is $want"
            bad=1
        fi
    done
done
[ $bad = 0 ] && echo "guides print cqpoll $want"
exit $bad
