# elf-deps.sh: shared-library closure of a dynamically linked program (sourced by hack/build-images.sh and the
# Dockerfile's hack/docker-rootfs.sh, so both images get the same files at the same paths).
#
#   elf_needed ROOT FILE TRIPLET   prints "SRC DST" for FILE's loader and every shared library it needs (DT_NEEDED,
#                                  recursively), found the way ld.so finds them without an ld.so.cache (the images
#                                  have none): /lib/TRIPLET, /usr/lib/TRIPLET, /lib, /usr/lib, in the filesystem at
#                                  ROOT ("" for /). SRC is the real file, DST the path ld.so opens. readelf reads any
#                                  architecture, so an arm64 sysroot works on an amd64 host.
#   elf_resolve ROOT PATH          the real file behind PATH inside ROOT (absolute links stay inside ROOT)

elf_resolve() {
  local root=$1 p=$1$2 t n=0
  while [ -L "$p" ] && [ $n -lt 20 ]; do
    t=$(readlink "$p"); n=$((n + 1))
    case $t in /*) p=$root$t ;; *) p=$(dirname "$p")/$t ;; esac
  done
  readlink -f "$p"
}

elf_needed() {
  local root=$1 triplet=$3 todo=("$2") seen=" " f so d found interp
  interp=$(readelf -l "$root$2" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
  [ -n "$interp" ] || { echo "elf-deps: $root$2 is not dynamically linked" >&2; return 1; }
  echo "$(elf_resolve "$root" "$interp") $interp"
  while [ ${#todo[@]} -gt 0 ]; do
    f=${todo[0]}; todo=("${todo[@]:1}")
    for so in $(readelf -d "$root$f" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'); do
      case $seen in *" $so "*) continue ;; esac
      seen+="$so "; found=""
      for d in "/lib/$triplet" "/usr/lib/$triplet" /lib /usr/lib; do
        if [ -e "$root$d/$so" ]; then found=$d/$so; break; fi
      done
      [ -n "$found" ] || { echo "elf-deps: $so (needed by $f) is not in ${root:-/}" >&2; return 1; }
      # the loader is also a library of libc: once, at the interpreter's path
      [ "$(elf_resolve "$root" "$found")" = "$(elf_resolve "$root" "$interp")" ] || echo "$(elf_resolve "$root" "$found") $found"
      todo+=("$found")
    done
  done
}

# elf_closure ROOT TRIPLET INTERP PROVIDED FILE...: elf_needed for files that live outside ROOT (a jlink runtime, a
# JNI library) and use ROOT's libraries: prints "SRC DST" for the loader INTERP and every library FILE... need,
# recursively, except those found in PROVIDED (colon-separated host directories: the runtime's own lib/).
elf_closure() {
  local root=$1 triplet=$2 interp=$3 provided=$4 seen=" " f so d p found skip pd
  shift 4
  local todo=("$@")
  IFS=: read -ra pd <<<"$provided"
  echo "$(elf_resolve "$root" "$interp") $interp"
  while [ ${#todo[@]} -gt 0 ]; do
    f=${todo[0]}; todo=("${todo[@]:1}")
    for so in $(readelf -d "$f" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'); do
      case $seen in *" $so "*) continue ;; esac
      seen+="$so "; skip=""
      for p in "${pd[@]}"; do if [ -e "$p/$so" ]; then skip=1; fi; done
      [ -z "$skip" ] || continue
      found=""
      for d in "/lib/$triplet" "/usr/lib/$triplet" /lib /usr/lib; do
        if [ -e "$root$d/$so" ]; then found=$d/$so; break; fi
      done
      [ -n "$found" ] || { echo "elf-deps: $so (needed by $f) is not in ${root:-/}" >&2; return 1; }
      [ "$(elf_resolve "$root" "$found")" = "$(elf_resolve "$root" "$interp")" ] || echo "$(elf_resolve "$root" "$found") $found"
      todo+=("$(elf_resolve "$root" "$found")")
    done
  done
}
