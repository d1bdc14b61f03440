#!/bin/sh
# check_corpus.sh: the committed tests/npy/corpus is exactly what make_corpus.sh writes.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/corpus"
sh "$here/make_corpus.sh" "$tmp/corpus"
if ! diff -r "$here/corpus" "$tmp/corpus" >"$tmp/diff" 2>&1; then
    echo "check_corpus: tests/npy/corpus differs from what make_corpus.sh writes; rerun it and commit:" >&2
    cat "$tmp/diff" >&2
    exit 1
fi
echo "check_corpus: $(ls "$tmp/corpus" | wc -l) files up to date"
