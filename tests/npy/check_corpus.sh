#!/bin/sh
# check_corpus.sh: the committed tests/npy/corpus is exactly what make_corpus.sh writes.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sh "$here/make_corpus.sh" "$tmp"
if ! diff -r "$here/corpus" "$tmp" >/dev/null; then
    echo "check_corpus: tests/npy/corpus differs from what make_corpus.sh writes; rerun it and commit:" >&2
    diff -r "$here/corpus" "$tmp" >&2 || true
    exit 1
fi
echo "check_corpus: $(ls "$tmp" | wc -l) files up to date"
