#!/usr/bin/env bash
# Installs the Valhalla routing engine (3.9.1) the routing tests run (tests/src/valhalla.rs):
# its binaries as PyPI's `pyvalhalla` wheel ships them (valhalla_build_tiles, valhalla_service,
# with their shared libraries next to them, found through the binaries' RPATH), unpacked to
# ${ETAPPE_VALHALLA_HOME:-/var/tmp/etappe-valhalla}/3.9.1. Idempotent: a second run only checks
# that the installed service starts. Prints the install directory on stdout (the binaries are
# in its valhalla/bin; export that as ETAPPE_VALHALLA_BIN); everything else goes to stderr.
#
# The wheel is the one binary build of Valhalla on a package registry that needs no root and no
# Docker; it is built for x86_64 glibc 2.28+ Linux. The pinned hash is the wheel's on PyPI, so
# a changed or substituted file fails the download instead of running.
set -euo pipefail

VERSION=3.9.1
WHEEL="pyvalhalla-$VERSION-cp312-abi3-manylinux_2_28_x86_64.whl"
WHEEL_SHA256=7b49c5e5f86cefd555b473aaaf34df3305889d30aa889b8abd3b4c2acc622271

home="${ETAPPE_VALHALLA_HOME:-/var/tmp/etappe-valhalla}"
dest="$home/$VERSION"
service="$dest/valhalla/bin/valhalla_service"

if "$service" --version >/dev/null 2>&1; then
  echo "$dest"
  exit 0
fi

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "install.sh: the pyvalhalla wheel is built for Linux x86_64 only, not $(uname -s)-$(uname -m)" >&2
  exit 1
fi

if ! python3 -m pip --version >/dev/null 2>&1; then
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip >&2
fi

cache="$home/cache"
mkdir -p "$cache"
requirement=""
unpack=""
# Whatever happens, no temporary file or half-unpacked directory stays behind.
cleanup() {
  [ -z "$requirement" ] || rm -f "$requirement"
  [ -z "$unpack" ] || rm -rf "$unpack"
}
trap cleanup EXIT
if ! echo "$WHEEL_SHA256  $cache/$WHEEL" | sha256sum --check --status 2>/dev/null; then
  # --require-hashes needs the requirement in a file; the platform flags fetch the wheel
  # whatever the local Python is (nothing is installed into it).
  requirement=$(mktemp)
  echo "pyvalhalla==$VERSION --hash=sha256:$WHEEL_SHA256" >"$requirement"
  python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
    --platform manylinux_2_28_x86_64 --require-hashes -r "$requirement" -d "$cache" >&2
fi

# Unpack beside the destination and move it into place in one rename, so a run that is
# interrupted (or a concurrent one) never leaves a half-unpacked install that looks complete.
unpack=$(mktemp -d "$home/.unpack.XXXXXX")
python3 -m zipfile -e "$cache/$WHEEL" "$unpack"
# Zip archives do not keep the executable bit.
chmod +x "$unpack"/valhalla/bin/*
echo "valhalla_service $("$unpack/valhalla/bin/valhalla_service" --version)" >&2
rm -rf "$dest"
mv "$unpack" "$dest"
unpack=""
echo "$dest"
