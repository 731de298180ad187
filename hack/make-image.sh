#!/usr/bin/env bash
# make-image.sh [options] BINARY IMAGE_REF OUT_TAR
# Pack a static binary (plus optional extra files) into a single-layer OCI-compatible image in `docker save`
# format (manifest.json + <sha>.json config + <sha>/layer.tar), using only tar and sha256sum. No Docker engine,
# no registry. Reproducible: sorted entries, uid/gid 0, mtime 0, fixed created date, so the same inputs give the
# same image ID. Load with `ctr -n k8s.io images import OUT_TAR` (hack/images.sh import) or `podman load`.
#
#   --entrypoint PATH   where the binary goes in the image and the Entrypoint (default /<basename of BINARY>)
#   --uid N             config User "N:N" (e.g. 65534 for nobody); default: no User (root unless the pod says otherwise)
#   --add SRC:DST       copy file SRC to DST in the image (repeatable; mode kept; directories are created)
#   --env K=V           add to the config Env (repeatable; PATH is always set)
#   --allow-dynamic     do not refuse a dynamically linked BINARY (it will only run if its libraries are --add'ed)
#
# IMAGE_REF must carry an explicit tag other than "latest" (e.g. localhost/kvbench-operator:v0.1.0-dev), so that
# the kubelet's default IfNotPresent policy never tries to pull it.
set -euo pipefail
ep="" uid="" dyn=0; adds=(); envs=()
while [ $# -gt 0 ]; do case $1 in
  --entrypoint) ep=$2; shift 2 ;;
  --uid) uid=$2; shift 2 ;;
  --add) adds+=("$2"); shift 2 ;;
  --env) envs+=("$2"); shift 2 ;;
  --allow-dynamic) dyn=1; shift ;;
  -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
  --) shift; break ;;
  -*) echo "make-image: unknown option $1" >&2; exit 2 ;;
  *) break ;;
esac; done
[ $# -eq 3 ] || { echo "usage: make-image.sh [--entrypoint PATH] [--uid N] [--add SRC:DST]... [--env K=V]... BINARY IMAGE_REF OUT_TAR" >&2; exit 2; }
bin=$1 ref=$2 out=$3
ep=${ep:-/$(basename "$bin")}
name=${ref%:*}; tag=${ref##*:}
case $ref in *@*) echo "make-image: digests are not supported in $ref" >&2; exit 2 ;; esac
if [ "$name" = "$ref" ] || [[ $tag == */* ]] || [ "$tag" = latest ]; then
  echo "make-image: $ref needs an explicit tag other than latest" >&2; exit 2
fi
[ -f "$bin" ] || { echo "make-image: no such file $bin" >&2; exit 2; }
if [ "$dyn" = 0 ] && command -v readelf >/dev/null && readelf -l "$bin" 2>/dev/null | grep -q 'Requesting program interpreter'; then
  echo "make-image: $bin is dynamically linked (build with CGO_ENABLED=0 or -extldflags -static, or pass --allow-dynamic)" >&2; exit 2
fi
json_str() { python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$1"; }

work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
root=$work/rootfs
mkdir -p "$root"/{etc,tmp,dev,proc,sys} "$root$(dirname "$ep")"
install -m 0755 "$bin" "$root$ep"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n' > "$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$root/etc/group"
if [ -n "$uid" ] && [ "$uid" != 0 ] && [ "$uid" != 65534 ]; then
  echo "app:x:$uid:$uid:app:/nonexistent:/sbin/nologin" >> "$root/etc/passwd"; echo "app:x:$uid:" >> "$root/etc/group"
fi
chmod 1777 "$root/tmp"
for a in "${adds[@]}"; do
  src=${a%%:*} dst=${a#*:}
  [ -e "$src" ] && [ "${dst:0:1}" = / ] || { echo "make-image: bad --add $a (SRC must exist, DST must be absolute)" >&2; exit 2; }
  mkdir -p "$root$(dirname "$dst")"; cp -a "$src" "$root$dst"
done
(cd "$root" && tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 --format=gnu -cf ../layer.tar $(ls -A))
diff=$(sha256sum "$work/layer.tar" | cut -d' ' -f1)

envjson='"PATH=/usr/local/bin:/usr/bin:/bin"'
for e in "${envs[@]}"; do envjson+=",$(json_str "$e")"; done
userjson=""; [ -n "$uid" ] && userjson=",\"User\":\"$uid:$uid\""
printf '{"architecture":"amd64","os":"linux","created":"1970-01-01T00:00:00Z","config":{"Entrypoint":[%s],"Env":[%s],"WorkingDir":"/"%s},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"history":[{"created":"1970-01-01T00:00:00Z","created_by":"hack/make-image.sh"}]}' \
  "$(json_str "$ep")" "$envjson" "$userjson" "$diff" > "$work/config.json"
cfg=$(sha256sum "$work/config.json" | cut -d' ' -f1)
mkdir -p "$work/out/$diff"
mv "$work/layer.tar" "$work/out/$diff/layer.tar"
mv "$work/config.json" "$work/out/$cfg.json"
printf '[{"Config":"%s.json","RepoTags":[%s],"Layers":["%s/layer.tar"]}]' "$cfg" "$(json_str "$ref")" "$diff" > "$work/out/manifest.json"
mkdir -p "$(dirname "$out")"
(cd "$work/out" && tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - $(ls -A)) >"$out.tmp"
mv "$out.tmp" "$out"
echo "make-image: wrote $out ($ref, image id sha256:${cfg:0:12}, $(du -h "$out" | cut -f1))"
