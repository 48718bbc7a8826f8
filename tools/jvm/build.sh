#!/usr/bin/env bash
# Compiles tools/jvm/*.java (Bus.java, Protocol.java) against the Debian Disruptor jar.
#   tools/jvm/build.sh [OUT]     OUT defaults to target/jvm under the repository root;
#                                a relative OUT is taken from the current directory.
# Prints the absolute class folder on stdout (nothing else); messages go to stderr.
# Exit 0: built or already up to date; 2: javac or the jar is missing; 1: javac failed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
srcs=("$here"/*.java)
jar="${DISRUPTOR_JAR:-/usr/share/java/disruptor.jar}"
out="${1:-$here/../../target/jvm}"

if ! command -v javac >/dev/null 2>&1; then
    echo "build.sh: javac not found; install it: apt-get install openjdk-17-jdk-headless" >&2
    exit 2
fi
if [ ! -r "$jar" ]; then
    echo "build.sh: $jar not found; install it: apt-get install libdisruptor-java" >&2
    exit 2
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
list="$out/Bus.classes"   # the class files of the last build, one a line

newer_than_sources() {
    local s
    for s in "${srcs[@]}"; do [ "$1" -nt "$s" ] || return 1; done
}

up_to_date() {
    [ -f "$list" ] && newer_than_sources "$list" && [ ! "$jar" -nt "$list" ] || return 1
    local f n=0
    while IFS= read -r f; do
        [ -f "$out/$f" ] && newer_than_sources "$out/$f" || return 1
        n=$((n + 1))
    done <"$list"
    [ "$n" -gt 0 ]
}

if up_to_date; then
    echo "build.sh: $out is up to date" >&2
else
    # Compile into a fresh folder, then move the classes in, so a failed or concurrent
    # build never leaves a half-written set behind.
    tmp=$(mktemp -d "$out/.build.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    javac -encoding UTF-8 -Xlint:all -cp "$jar" -d "$tmp" "${srcs[@]}"
    (cd "$tmp" && ls -1 -- *.class) >"$tmp/Bus.classes"
    while IFS= read -r f; do mv -f "$tmp/$f" "$out/$f"; done <"$tmp/Bus.classes"
    mv -f "$tmp/Bus.classes" "$list"
    echo "build.sh: compiled $(wc -l <"$list") classes into $out" >&2
fi
echo "$out"
