#!/usr/bin/env bash
# checkout-state.sh save FILE | check FILE - make test's guard that no test
# writes into the checkout: `save` records what git sees as changed or
# untracked (with each such file's content hash) before the suite, `check`
# fails naming every path that differs after it. From a fresh clone that
# means `git status --porcelain` stays empty. Outside a git checkout it
# says so and passes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
state() {
  git -C "$root" status --porcelain=v1 -z --untracked-files=all | tr '\0' '\n' |
    while IFS= read -r line; do
      [ -n "$line" ] || continue
      p=${line:3}
      h=-
      [ -f "$root/$p" ] && h=$(git -C "$root" hash-object -- "$p" 2>/dev/null || echo -)
      printf '%s %s\n' "$h" "$line"
    done | sort
}
if ! git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
  echo "checkout-state: $root is not a git checkout: not checked"
  exit 0
fi
case "${1:-}" in
  save) state > "$2" ;;
  check)
    now=$(mktemp)
    trap 'rm -f "$now"' EXIT
    state > "$now"
    if ! diff -q "$2" "$now" >/dev/null; then
      echo "make test: the suite changed the checkout (tests must write only in their temp dirs):" >&2
      diff "$2" "$now" | sed -n 's/^[<>] [^ ]* /  /p' >&2
      exit 1
    fi
    echo "checkout unchanged by the suite"
    ;;
  *) echo "usage: checkout-state.sh save|check FILE" >&2; exit 2 ;;
esac
