#!/bin/sh
echo "entries: $(grep -c '^- ' CHANGELOG.md)"
cat "$(dirname "$0")/../references/STYLE.md" | head -1
