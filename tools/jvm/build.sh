#!/usr/bin/env bash
# Compiles the lab's JVM programs.
#   tools/jvm/build.sh [OUT]          tools/jvm/*.java (Bus, Plain, Protocol) against the
#                                     Debian Disruptor jar, into OUT;
#   tools/jvm/build.sh OUT GROUP      tools/jvm/GROUP/*.java against OUT (built first) and the
#                                     jars that tools/jvm/GROUP/jars lists, into OUT/GROUP.
# OUT defaults to target/jvm under the repository root; a relative OUT is taken from the
# current directory. A group's `jars` file has one line per jar: its path and the Debian
# package that installs it ("/usr/share/java/jctools-core.jar libjctools-java").
# Prints the absolute class folder on stdout (nothing else); messages go to stderr.
# Exit 0: built or already up to date; 2: javac, a jar or the group is missing; 1: javac
# failed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
jar="${DISRUPTOR_JAR:-/usr/share/java/disruptor.jar}"
out="${1:-$here/../../target/jvm}"
group="${2:-}"

if ! command -v javac >/dev/null 2>&1; then
    echo "build.sh: javac not found; install it: apt-get install openjdk-17-jdk-headless" >&2
    exit 2
fi
if [ ! -r "$jar" ]; then
    echo "build.sh: $jar not found; install it: apt-get install libdisruptor-java" >&2
    exit 2
fi

# Whether file $1 is newer than every source of the build and every jar on its class path.
newer_than_inputs() {
    local s
    for s in "${srcs[@]}" "${jars[@]}"; do [ "$1" -nt "$s" ] || return 1; done
}

# Whether every class file of the last build into $dest (listed in $dest/$list) is newer
# than the inputs.
up_to_date() {
    local listed="$dest/$list"
    [ -f "$listed" ] && newer_than_inputs "$listed" || return 1
    local f n=0
    while IFS= read -r f; do
        [ -f "$dest/$f" ] && newer_than_inputs "$dest/$f" || return 1
        n=$((n + 1))
    done <"$listed"
    [ "$n" -gt 0 ]
}

# Compiles srcs with class path $1 into $dest: into a fresh folder first, then the classes
# are moved in, so a failed or concurrent build never leaves a half-written set behind.
compile() {
    if up_to_date; then
        echo "build.sh: $dest is up to date" >&2
        return
    fi
    tmp=$(mktemp -d "$dest/.build.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    javac -encoding UTF-8 -Xlint:all -cp "$1" -d "$tmp" "${srcs[@]}"
    (cd "$tmp" && ls -1 -- *.class) >"$tmp/$list"
    while IFS= read -r f; do mv -f "$tmp/$f" "$dest/$f"; done <"$tmp/$list"
    mv -f "$tmp/$list" "$dest/$list"
    rm -rf "$tmp"
    trap - EXIT
    echo "build.sh: compiled $(wc -l <"$dest/$list") classes into $dest" >&2
}

mkdir -p "$out"
out=$(cd "$out" && pwd)
srcs=("$here"/*.java)
jars=("$jar")
dest=$out
list=Bus.classes
compile "$jar"

if [ -z "$group" ]; then
    echo "$out"
    exit 0
fi
gdir="$here/$group"
if [ ! -f "$gdir/jars" ]; then
    valid=$(cd "$here" && ls -d -- */ 2>/dev/null | tr -d / | tr '\n' ' ')
    echo "build.sh: no JVM group '$group' (tools/jvm/$group/jars); the groups: ${valid:-none}" >&2
    exit 2
fi
cp="$out:$jar"
jars=("$jar")
while read -r path package; do
    [ -n "$path" ] && [ "${path#\#}" = "$path" ] || continue
    if [ ! -r "$path" ]; then
        echo "build.sh: $path not found; install it: apt-get install $package" >&2
        exit 2
    fi
    cp="$cp:$path"
    jars+=("$path")
done <"$gdir/jars"
dest="$out/$group"
mkdir -p "$dest"
list=Group.classes
srcs=("$gdir"/*.java)
# The group's classes depend on the base classes too: a newer base build rebuilds them.
jars+=("$out/Bus.classes")
compile "$cp"
echo "$dest"
