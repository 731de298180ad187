#!/usr/bin/env bash
# cluster-up.sh: a real single-node Kubernetes cluster on this machine, offline, idempotent.
#
#   etcd (127.0.0.1:2379) -> kube-apiserver (NODE_IP:6443, TLS, Node+RBAC, PodSecurity and
#   OwnerReferencesPermissionEnforcement admission on)
#   -> kube-controller-manager + kube-scheduler -> registry (CNCF distribution, NODE_IP:REGISTRY_PORT, plain HTTP)
#   -> containerd (Debian's, own instance/socket/root; pulls from that registry through hosts.toml) + runc + CNI bridge
#   -> kubelet (cgroupfs; cgroup v1 allowed) -> kube-proxy (iptables), so the `kubernetes` Service and ClusterIPs work
#   from pods (in-cluster config, as in a user's cluster). No CoreDNS.
#
# Binaries: Kubernetes $K8S_VERSION from Go modules via hack/k8s-binaries.sh and the registry via hack/tools.sh
# (built once, cached under $KVBENCH_CACHE); containerd, runc and the CNI plugins from Debian (installed here when missing).
# State: everything under $KVBENCH_CLUSTER_DIR (default /opt/kvbench-cluster): pki etc var logs run images,
# plus what the components hard-code (/run/kvbench-containerd, /run/containerd/{s,fifo,runc}, /var/lib/cni,
# /var/lib/kubelet/device-plugins, /var/log/containers); hack/cluster-down.sh removes all of that again.
# Networking: NODE_IP (10.87.0.1) is a /32 on a port-less bridge (kvbnode0), pods live on kvbcni0 (10.88.0.0/16) with
# routes to the Service CIDR and the node IP only (no default route: nothing leaves the machine), and the
# KVBENCH-GUARD chain drops anything for those ranges that arrives on the outside interface.
# Host changes (sysctls the kubelet/CNI set, iptables chains, links, mounts) are undone by hack/cluster-down.sh.
#
# Prints the kubeconfig path on stdout as its last line (progress goes to stderr).
# Re-running with the cluster up only checks it; a half-started cluster is completed.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/cluster-env.sh"
KUBELET_SYNC_FREQUENCY=${KUBELET_SYNC_FREQUENCY-10s}   # bounds Secret/ConfigMap volume refresh (Prometheus config)
# the kubelet's DiskPressure threshold on the root disk (nodefs/imagefs.available): 5% of a large shared disk can
# be 12 GB and taint the node with GBs free; an absolute size (e.g. 3Gi) evicts only when it is really nearly full
KUBELET_EVICTION_DISK=${KUBELET_EVICTION_DISK:-5%}
[ "$(id -u)" = 0 ] || { echo "cluster-up.sh must run as root (it starts containerd and the kubelet)" >&2; exit 1; }
t0=$(date +%s%N)
el() { local d=$(( ($(date +%s%N) - t0) / 100000000 )); printf 'cluster-up %4d.%ds %s\n' $((d/10)) $((d%10)) "$*" >&2; }
running() { [ -f "$CL_RUN/$1.pid" ] && kill -0 "$(cat "$CL_RUN/$1.pid")" 2>/dev/null; }
# start NAME CMD...: detached in its own session; the pid file holds CMD's own pid (not a subshell's)
start() {
  local name=$1; shift
  if running "$name"; then el "$name already running (pid $(cat "$CL_RUN/$name.pid"))"; return; fi
  setsid "$@" >>"$CL_LOGS/$name.log" 2>&1 </dev/null 9>&- & echo $! >"$CL_RUN/$name.pid"   # 9>&-: the lock stays ours
  el "started $name (pid $!)"
}
waitfor() { # waitfor DESC TIMEOUT_S CMD...
  local desc=$1 to=$2; shift 2; local end=$(( $(date +%s) + to ))
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$end" ] || { el "TIMEOUT ($to s) waiting for $desc; logs in $CL_LOGS"; exit 1; }
    sleep 0.2
  done
  el "$desc"
}
kc() { "$KUBECTL" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }
# wfile PATH < content: replace PATH only when the content differs (kube-proxy exits when its config file is touched)
wfile() { local t; t=$(mktemp "$1.XXXX"); cat >"$t"; if cmp -s "$t" "$1"; then rm -f "$t"; else mv "$t" "$1"; fi; }

# ---- host packages (Debian) ----
PKGS=(containerd runc containernetworking-plugins iptables conntrack nftables openssl curl)   # nft: cluster-down deletes the empty tables iptables-nft created
missing=(); for p in "${PKGS[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  el "apt-get install ${missing[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# ---- binaries (built once per version, cached) ----
WHAT="kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl etcd" \
  K8S_VERSION=$K8S_VERSION KVBENCH_CACHE=$KVBENCH_CACHE nice -n "${NICE:-10}" "$HERE/k8s-binaries.sh" >/dev/null
B=$K8S_BIN
REGISTRY_BIN=$(KVBENCH_CACHE=$KVBENCH_CACHE nice -n "${NICE:-10}" "$HERE/tools.sh" registry)
IMGDIR=$("$HERE/images.sh" build)   # pause (sandbox) + testimg, tiny, cached

mkdir -p "$CL_PKI" "$CL_ETC/cni/net.d" "$CL_VAR" "$CL_LOGS" "$CL_RUN" "$CL_IMAGES"
exec 9>"$CL_RUN/.lock"   # one cluster-up/down at a time; daemons are started with 9>&- so they never hold it
flock -w 300 9 || { echo "cluster-up: $CL_RUN/.lock is held by another cluster-up/down" >&2; exit 1; }

# ---- remember what existed before (cluster-down removes only what we created) ----
if [ ! -f "$CL_RUN/host.saved" ]; then
  for k in vm.overcommit_memory kernel.panic kernel.panic_on_oops net.ipv4.ip_forward net.ipv4.conf.all.route_localnet \
    net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables net.netfilter.nf_conntrack_max; do
    v=$(sysctl -n "$k" 2>/dev/null) && echo "$k=$v"
  done >"$CL_RUN/sysctl.saved"
  for d in /var/lib/cni /var/lib/kubelet /run/containerd /var/log/containers /var/log/pods /etc/cni; do
    [ -e "$d" ] && echo "$d"
  done >"$CL_RUN/dirs.preexisting"
  # which iptables-nft tables exist now: cluster-down deletes the ones the kubelet/kube-proxy created, once empty
  { iptables-save 2>/dev/null | sed -n 's/^\*/ip /p'; ip6tables-save 2>/dev/null | sed -n 's/^\*/ip6 /p'; } >"$CL_RUN/nft-tables.preexisting"
  date -u +%FT%TZ >"$CL_RUN/host.saved"
fi

# ---- PKI: openssl only (ECDSA P-256 CA, one client cert per identity, RSA service-account key) ----
PARAMS="node=$NODE_NAME ip=$NODE_IP svc=$API_SVC_IP v1"
if [ "$(cat "$CL_PKI/params" 2>/dev/null)" != "$PARAMS" ]; then
  running kube-apiserver && { echo "cluster-up: PKI parameters changed while the cluster runs; run hack/cluster-down.sh --wipe first" >&2; exit 1; }
  rm -rf "${CL_PKI:?}"/*
  (
    cd "$CL_PKI"
    openssl ecparam -name prime256v1 -genkey -noout -out ca.key 2>/dev/null
    openssl req -x509 -new -key ca.key -sha256 -days 3650 -subj "/CN=kvbench-cluster-ca" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" -out ca.crt
    mkcert() { # NAME CN ORG EKU [SAN]
      openssl ecparam -name prime256v1 -genkey -noout -out "$1.key" 2>/dev/null
      openssl req -new -key "$1.key" -subj "/CN=$2${3:+/O=$3}" -out "$1.csr"
      { echo "basicConstraints=critical,CA:FALSE"; echo "keyUsage=critical,digitalSignature,keyEncipherment"
        echo "extendedKeyUsage=$4"; [ -n "${5:-}" ] && echo "subjectAltName=$5"; } >"$1.ext"
      openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -sha256 -days 365 -extfile "$1.ext" -out "$1.crt" 2>/dev/null
      rm -f "$1.csr" "$1.ext"
    }
    mkcert apiserver kube-apiserver "" serverAuth \
      "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,IP:127.0.0.1,IP:$API_SVC_IP,IP:$NODE_IP"
    mkcert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters clientAuth
    mkcert admin kubernetes-admin system:masters clientAuth
    mkcert controller-manager system:kube-controller-manager "" clientAuth
    mkcert scheduler system:kube-scheduler "" clientAuth
    mkcert kubelet "system:node:$NODE_NAME" system:nodes clientAuth   # Node authorizer + NodeRestriction
    mkcert kube-proxy system:kube-proxy "" clientAuth                  # bootstrap binding system:node-proxier
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    chmod 600 ./*.key
  )
  for who in admin controller-manager scheduler kubelet kube-proxy; do
    kcf=$CL_ETC/$who.kubeconfig; rm -f "$kcf"
    "$KUBECTL" config --kubeconfig="$kcf" set-cluster kvbench --server="https://$NODE_IP:6443" --certificate-authority="$CL_PKI/ca.crt" --embed-certs >/dev/null
    "$KUBECTL" config --kubeconfig="$kcf" set-credentials "$who" --client-certificate="$CL_PKI/$who.crt" --client-key="$CL_PKI/$who.key" --embed-certs >/dev/null
    "$KUBECTL" config --kubeconfig="$kcf" set-context kvbench --cluster=kvbench --user="$who" >/dev/null
    "$KUBECTL" config --kubeconfig="$kcf" use-context kvbench >/dev/null
    chmod 600 "$kcf"
  done
  cp "$CL_ETC/admin.kubeconfig" "$KUBECONFIG_ADMIN"
  echo "$PARAMS" >"$CL_PKI/params"
  el "PKI and kubeconfigs written ($PARAMS)"
fi

# ---- node IP on a port-less bridge (this kernel has no dummy links), guard against the outside interface ----
if ! ip -4 -o addr show dev "$NODE_IF" 2>/dev/null | grep -q " $NODE_IP/32 "; then
  ip link show "$NODE_IF" >/dev/null 2>&1 || ip link add "$NODE_IF" type bridge
  ip addr add "$NODE_IP/32" dev "$NODE_IF"
  ip link set "$NODE_IF" up
  el "node IP $NODE_IP/32 on $NODE_IF"
fi
# Service CIDR onto the port-less bridge: ClusterIP traffic that kube-proxy has not (yet) DNATed is dropped here
# instead of leaving through the default route, and the host talks to pods from NODE_IP, which pods route back
ip route replace "$SVC_CIDR" dev "$NODE_IF" src "$NODE_IP"
sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1   # Service traffic between pods on one bridge
OUT_IF=$(ip route show default | awk '{print $5; exit}')
if [ -n "$OUT_IF" ] && ! iptables -S "$GUARD_CHAIN" >/dev/null 2>&1; then
  iptables -N "$GUARD_CHAIN"
  for dst in "$NODE_IP" "$POD_CIDR" "$SVC_CIDR"; do iptables -A "$GUARD_CHAIN" -i "$OUT_IF" -d "$dst" -j DROP; done
  iptables -I INPUT -j "$GUARD_CHAIN"; iptables -I FORWARD -j "$GUARD_CHAIN"
  el "$GUARD_CHAIN: drop $NODE_IP $POD_CIDR $SVC_CIDR arriving on $OUT_IF"
fi

# ---- etcd (loopback only, plain http) ----
start etcd "$B/etcd" --name kvbench --data-dir "$CL_VAR/etcd" --unsafe-no-fsync=true \
  --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
  --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
  --initial-cluster kvbench=http://127.0.0.1:2380 --log-level warn
waitfor "etcd healthy" 30 curl -fsS http://127.0.0.1:2379/health

# ---- kube-apiserver (NODE_IP only; PodSecurity admission is on by default) ----
# OwnerReferencesPermissionEnforcement as on OpenShift: setting blockOwnerDeletion needs update on the owner's
# finalizers, which only a real service account's RBAC shows (test/envtest enables it too).
start kube-apiserver "$B/kube-apiserver" \
  --etcd-servers=http://127.0.0.1:2379 \
  --bind-address="$NODE_IP" --secure-port=6443 --advertise-address="$NODE_IP" \
  --tls-cert-file="$CL_PKI/apiserver.crt" --tls-private-key-file="$CL_PKI/apiserver.key" --client-ca-file="$CL_PKI/ca.crt" \
  --kubelet-client-certificate="$CL_PKI/apiserver-kubelet-client.crt" --kubelet-client-key="$CL_PKI/apiserver-kubelet-client.key" \
  --kubelet-preferred-address-types=InternalIP,Hostname \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$CL_PKI/sa.pub" --service-account-signing-key-file="$CL_PKI/sa.key" \
  --service-cluster-ip-range="$SVC_CIDR" \
  --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction,OwnerReferencesPermissionEnforcement \
  --allow-privileged=true --profiling=false --v=1
waitfor "kube-apiserver ready" 120 kc get --raw /readyz

# ---- controller-manager + scheduler ----
start kube-controller-manager "$B/kube-controller-manager" \
  --kubeconfig="$CL_ETC/controller-manager.kubeconfig" \
  --authentication-kubeconfig="$CL_ETC/controller-manager.kubeconfig" --authorization-kubeconfig="$CL_ETC/controller-manager.kubeconfig" \
  --bind-address=127.0.0.1 --leader-elect=false --use-service-account-credentials=true \
  --root-ca-file="$CL_PKI/ca.crt" --service-account-private-key-file="$CL_PKI/sa.key" \
  --cluster-signing-cert-file="$CL_PKI/ca.crt" --cluster-signing-key-file="$CL_PKI/ca.key" \
  --service-cluster-ip-range="$SVC_CIDR" --profiling=false --v=1
start kube-scheduler "$B/kube-scheduler" \
  --kubeconfig="$CL_ETC/scheduler.kubeconfig" \
  --authentication-kubeconfig="$CL_ETC/scheduler.kubeconfig" --authorization-kubeconfig="$CL_ETC/scheduler.kubeconfig" \
  --bind-address=127.0.0.1 --leader-elect=false --profiling=false --v=1

# ---- registry: CNCF distribution on the node IP (KVBENCH-GUARD keeps it off the outside interface) ----
# Images (make images-push) and the chart (helm push) go here; containerd pulls them like any registry.
wfile "$CL_ETC/registry.yml" <<YAML
version: 0.1
log: {level: warn, formatter: text, accesslog: {disabled: true}}
storage:
  filesystem: {rootdirectory: "$CL_VAR/registry"}
  delete: {enabled: true}
http:
  addr: "$REGISTRY"
  secret: kvbench-local-registry
YAML
start registry env OTEL_TRACES_EXPORTER=none "$REGISTRY_BIN" serve "$CL_ETC/registry.yml"   # no tracing exporter
waitfor "registry answers at http://$REGISTRY/v2/" 30 curl -fsS "http://$REGISTRY/v2/"

# ---- containerd (separate instance: Debian's /etc/containerd is untouched) + CNI bridge ----
# hosts.toml per registry (config_path): the local registry speaks plain HTTP.
mkdir -p "$CL_ETC/containerd/certs.d/$REGISTRY"
wfile "$CL_ETC/containerd/certs.d/$REGISTRY/hosts.toml" <<TOML
server = "http://$REGISTRY"
[host."http://$REGISTRY"]
  capabilities = ["pull", "resolve"]
TOML
wfile "$CL_ETC/containerd.toml" <<TOML
version = 2
root = "$CL_VAR/containerd"
state = "$CTRD_STATE"
[grpc]
  address = "$CTRD_SOCK"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  netns_mounts_under_state_dir = true
  # this VM's root lacks CAP_SYS_RESOURCE, so runc cannot lower oom_score_adj below 0 (kubelet asks -998
  # for sandboxes): clamp it to containerd's own value, or every sandbox fails with "can't get final child's PID"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$CL_ETC/containerd/certs.d"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$CL_ETC/cni/net.d"
TOML
wfile "$CL_ETC/cni/net.d/10-kvbench.conflist" <<JSON
{
  "cniVersion": "1.0.0",
  "name": "$CNI_NET",
  "plugins": [
    { "type": "bridge", "bridge": "$POD_IF", "isGateway": true, "ipMasq": false, "hairpinMode": true,
      "ipam": { "type": "host-local", "ranges": [[{ "subnet": "$POD_CIDR" }]], "dataDir": "$CL_VAR/cni-ipam",
                "routes": [{ "dst": "$SVC_CIDR" }, { "dst": "$NODE_IP/32" }] } }
  ]
}
JSON
start containerd containerd --config "$CL_ETC/containerd.toml"
waitfor "containerd up" 30 ctr -a "$CTRD_SOCK" version
# the sandbox image, then every tarball remembered by `hack/images.sh import` (the monitoring stack's; the
# project's images come from the registry)
imported=0
for f in "$IMGDIR/pause.tar" "$IMGDIR/testimg.tar" "$CL_IMAGES"/*.tar; do
  [ -f "$f" ] || continue   # also skips dangling links
  ctr_ images import "$f" >/dev/null; imported=$((imported+1))
done
el "imported $imported image tarballs"

# ---- kubelet ----
wfile "$CL_ETC/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: "$NODE_IP"
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: "$CL_PKI/ca.crt"}
authorization: {mode: Webhook}
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: "unix://$CTRD_SOCK"
clusterDomain: cluster.local
clusterDNS: [10.96.0.10]
podLogsDir: "$CL_VAR/log/pods"
resolvConf: /etc/resolv.conf
serializeImagePulls: false
registerNode: true
# Benchmark databases live on this node's root disk (local-nvme PVs are directories): the default thresholds
# (imagefs.available<15%) tainted the node DiskPressure mid-run and garbage-collected finished runners' logs,
# which hold their full results. Evict only when the disk is really nearly full.
evictionHard: {memory.available: "100Mi", nodefs.available: "$KUBELET_EVICTION_DISK", nodefs.inodesFree: "5%", imagefs.available: "$KUBELET_EVICTION_DISK"}
evictionPressureTransitionPeriod: 30s
# The sandbox and monitoring images are imported, not pulled: garbage-collecting one (the pause image included)
# breaks every later pod. 100 turns image GC off.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
${KUBELET_SYNC_FREQUENCY:+syncFrequency: $KUBELET_SYNC_FREQUENCY}
YAML
start kubelet "$B/kubelet" --config="$CL_ETC/kubelet.yaml" --kubeconfig="$CL_ETC/kubelet.kubeconfig" \
  --root-dir="$CL_VAR/kubelet" --cert-dir="$CL_VAR/kubelet/pki" --hostname-override="$NODE_NAME" --node-ip="$NODE_IP" --v=1
node_ready() { [ "$(kc get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]; }
waitfor "node $NODE_NAME Ready" 180 node_ready
waitfor "default ServiceAccount exists" 60 kc -n default get serviceaccount default

# ---- kube-proxy (iptables mode; changes no sysctl with these settings) ----
wfile "$CL_ETC/kube-proxy.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: "$CL_ETC/kube-proxy.kubeconfig"}
hostnameOverride: "$NODE_NAME"
mode: iptables
clusterCIDR: "$POD_CIDR"
bindAddress: "$NODE_IP"
healthzBindAddress: "127.0.0.1:10256"
metricsBindAddress: "127.0.0.1:10249"
nodePortAddresses: ["$NODE_IP/32"]
iptables: {localhostNodePorts: false, syncPeriod: 30s, minSyncPeriod: 0s}
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s, udpTimeout: 0s, udpStreamTimeout: 0s}
YAML
start kube-proxy "$B/kube-proxy" --config="$CL_ETC/kube-proxy.yaml" --v=1
svc_programmed() { local r; r=$(iptables -t nat -S KUBE-SERVICES 2>/dev/null) && [[ $r == *"default/kubernetes:https cluster IP"* ]]; }
waitfor "kube-proxy programmed the kubernetes Service" 60 svc_programmed
waitfor "https://$API_SVC_IP:443 answers from the host" 30 curl -fsSk --max-time 2 "https://$API_SVC_IP/readyz"
el "cluster up: $("$KUBECTL" version --kubeconfig "$KUBECONFIG_ADMIN" -o json 2>/dev/null | python3 -c 'import json,sys; print("server", json.load(sys.stdin)["serverVersion"]["gitVersion"])' 2>/dev/null || echo '?') at https://$NODE_IP:6443"
el "registry: http://$REGISTRY (make images-push REGISTRY=$REGISTRY)"
el "export KUBECONFIG=$KUBECONFIG_ADMIN   # kubectl: $KUBECTL; down: hack/cluster-down.sh [--wipe]"
echo "$KUBECONFIG_ADMIN"
