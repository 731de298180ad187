#!/usr/bin/env bash
# cluster-down.sh [--wipe]: stop the cluster hack/cluster-up.sh started and put the host back as it was.
#   - stops only the processes cluster-up.sh started, by pid file (never by name); pod containers are removed
#     through the cluster's own containerd, and leftover shims only if they serve that containerd's socket
#   - unmounts what the kubelet/containerd mounted, deletes the kvbcni0/kvbnode0 bridges, the KVBENCH-GUARD chain and
#     the KUBE-* chains of the kubelet and kube-proxy, conntrack entries of pods/Services, empty kubepods cgroups
#   - restores the sysctls saved by cluster-up.sh, removes the hard-coded paths the components created
#     (/var/lib/cni, /var/lib/kubelet/device-plugins, /run/containerd, /var/log/containers ...) unless they existed before
#   --wipe also deletes etcd data, containerd/kubelet state, the registry's storage, logs and the run dir (keeps pki/, images/ and the
#   binary caches), so the next cluster-up starts from an empty cluster.
# Safe to run when nothing is up.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/cluster-env.sh"
[ "$(id -u)" = 0 ] || { echo "cluster-down.sh must run as root" >&2; exit 1; }
t0=$(date +%s%N)
el() { local d=$(( ($(date +%s%N) - t0) / 100000000 )); printf 'cluster-down %4d.%ds %s\n' $((d/10)) $((d%10)) "$*" >&2; }
[ -d "$CL_RUN" ] || { el "nothing to do ($CL_RUN does not exist)"; [ "${1:-}" = --wipe ] && rm -rf "$CL_VAR" "$CL_LOGS"; exit 0; }
exec 9>"$CL_RUN/.lock"
flock -w 300 9 || { echo "cluster-down: $CL_RUN/.lock is held by another cluster-up/down" >&2; exit 1; }
stop() { # stop NAME...: SIGTERM all of them at once, wait up to 20 s, then SIGKILL what is left
  local n f pid pids=() names=()
  for n in "$@"; do
    f=$CL_RUN/$n.pid; [ -f "$f" ] || continue; pid=$(cat "$f"); rm -f "$f"
    kill -0 "$pid" 2>/dev/null || continue
    kill -TERM "$pid"; pids+=("$pid"); names+=("$n")
  done
  [ ${#pids[@]} -gt 0 ] || return 0
  for _ in $(seq 1 100); do
    local alive=0; for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && break; sleep 0.2
  done
  for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && { el "pid $pid did not stop in 20s: SIGKILL"; kill -KILL "$pid"; }; done
  el "stopped ${names[*]}"
}
stop kube-proxy kubelet
if [ -S "$CTRD_SOCK" ] && ctr -a "$CTRD_SOCK" version >/dev/null 2>&1; then
  n=0
  for t in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks kill -s SIGKILL "$t" >/dev/null 2>&1; n=$((n+1)); done
  sleep 1
  for t in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks delete -f "$t" >/dev/null 2>&1; done
  for c in $(ctr_ containers ls -q 2>/dev/null); do ctr_ containers delete "$c" >/dev/null 2>&1; done
  el "removed $n pod containers"
fi
stop containerd
# comm is cut to 15 characters ("containerd-shim"); end only shims that talk to our containerd
for p in $(pgrep -x containerd-shim 2>/dev/null); do
  cmd=$(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null) || continue
  [[ $cmd == *"-address $CTRD_SOCK"* ]] && { kill -KILL "$p"; el "killed leftover shim $p"; }
done
stop registry kube-scheduler kube-controller-manager kube-apiserver
stop etcd

# mounts under our state dirs (pod volumes, netns, overlay rootfs), deepest first
for m in $(awk '{print $2}' /proc/self/mounts | grep -E "^($CL_VAR|$CTRD_STATE|/run/containerd)(/|$)" | sort -r); do
  umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
done
for l in "$POD_IF" "$NODE_IF"; do ip link show "$l" >/dev/null 2>&1 && ip link delete "$l" && el "deleted link $l"; done
# our guard chain and every KUBE-* chain (kubelet: KUBE-FIREWALL, KUBE-KUBELET-CANARY, KUBE-IPTABLES-HINT; kube-proxy's)
for ipt in iptables ip6tables; do
  for tbl in filter nat mangle; do
    chains=$($ipt -t $tbl -S 2>/dev/null | awk -v g="$GUARD_CHAIN" '$1=="-N" && ($2 ~ /^KUBE-/ || $2==g) {print $2}')
    [ -n "$chains" ] || continue
    for ch in $chains; do   # first the jumps to our chains from built-in chains
      $ipt -t $tbl -S | grep -E -- "-j $ch( |$)" | grep -vE "^-A (KUBE-|$GUARD_CHAIN)" | sed 's/^-A/-D/' |
        while read -r r; do eval "$ipt -t $tbl $r"; done
    done
    for ch in $chains; do $ipt -t $tbl -F "$ch"; done
    for ch in $chains; do $ipt -t $tbl -X "$ch"; done
    el "removed $(echo $chains | wc -w) chains from $ipt -t $tbl"
  done
done
# iptables-nft leaves empty filter/nat/mangle tables behind: delete those that did not exist before cluster-up
if [ -f "$CL_RUN/nft-tables.preexisting" ] && command -v nft >/dev/null; then
  for fam in ip ip6; do
    ipt=iptables; [ $fam = ip6 ] && ipt=ip6tables
    for tbl in $($ipt-save 2>/dev/null | sed -n 's/^\*//p'); do
      grep -qx "$fam $tbl" "$CL_RUN/nft-tables.preexisting" && continue
      rest=$($ipt -t "$tbl" -S 2>/dev/null | grep -vx -- '-P [A-Z]* ACCEPT')   # only ACCEPT policies left = empty
      [ -z "$rest" ] && nft delete table "$fam" "$tbl" 2>/dev/null && el "deleted empty nft table $fam $tbl"
    done
  done
fi
if command -v conntrack >/dev/null; then
  for f in "-s $POD_CIDR" "-d $POD_CIDR" "-d $SVC_CIDR" "-s $NODE_IP" "-d $NODE_IP"; do conntrack -D $f >/dev/null 2>&1; done
fi
if [ -f "$CL_RUN/sysctl.saved" ]; then sysctl -q -p "$CL_RUN/sysctl.saved" && el "restored sysctls: $(tr '\n' ' ' <"$CL_RUN/sysctl.saved")"; fi
# cgroup v1, cgroupfs driver: remove the kubelet's (empty) kubepods trees
for sub in /sys/fs/cgroup/*/; do
  [ -d "${sub}kubepods" ] && find "${sub}kubepods" -depth -type d -exec rmdir {} \; 2>/dev/null
done
# paths the kubelet / containerd 1.6 / libcni hard-code outside our dirs
rm -f /var/lib/cni/results/"$CNI_NET"-* /var/lib/cni/results/cni-loopback-* 2>/dev/null
rm -f /var/lib/kubelet/device-plugins/kubelet.sock /var/lib/kubelet/device-plugins/DEPRECATION 2>/dev/null
find /var/log/containers -maxdepth 1 -type l -lname "$CL_VAR/*" -delete 2>/dev/null
pre=$(cat "$CL_RUN/dirs.preexisting" 2>/dev/null)
for d in /var/lib/cni/results /var/lib/cni /var/lib/kubelet/device-plugins /var/lib/kubelet /var/log/containers /var/log/pods \
         /run/containerd/runc/k8s.io /run/containerd/runc /run/containerd/fifo /run/containerd/s /run/containerd; do
  keep=0; for p in $pre; do case $d in "$p"|"$p"/*) keep=1 ;; esac; done   # it or a parent was there before
  [ $keep = 0 ] && [ -d "$d" ] && rmdir "$d" 2>/dev/null
done
# containerd's runtime state (sockets, netns mount points; it is under /run and meaningless once containerd is gone)
awk '{print $2}' /proc/self/mounts | grep -q "^$CTRD_STATE/" || rm -rf "$CTRD_STATE"
rm -f "$CL_RUN/sysctl.saved" "$CL_RUN/dirs.preexisting" "$CL_RUN/nft-tables.preexisting" "$CL_RUN/host.saved"
if [ "${1:-}" = --wipe ]; then
  rm -rf "$CL_VAR" "$CL_LOGS" "$CTRD_STATE" "$CD/helm"
  rm -rf "$CL_RUN"   # last: holds the lock file
  el "wiped $CL_VAR, $CL_LOGS, $CTRD_STATE"
fi
el "down"
