# POSIX-sh facts probe for hosts without any Python: raw sections, parsed by the controller.
# $1 = work dir (may start with ~).
wd=$1
case "$wd" in "~"*) wd="$HOME${wd#\~}";; esac
echo "@@OCRDEPLOY-SH@@"
echo "hostname=$(hostname 2>/dev/null || uname -n)"
echo "kernel=$(uname -r)"
echo "arch=$(uname -m)"
echo "user=$(id -un 2>/dev/null)"
echo "uid=$(id -u 2>/dev/null)"
echo "home=$HOME"
echo "path=$PATH"
echo "cpus=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null)"
. /etc/os-release 2>/dev/null && echo "os_id=$ID" && echo "os_version_id=$VERSION_ID" && echo "os_pretty=$PRETTY_NAME"
awk '/^MemTotal:/{print "mem_total_kb="$2} /^MemAvailable:/{print "mem_available_kb="$2}' /proc/meminfo 2>/dev/null
echo "workdir=$wd"
d=$wd; while [ ! -e "$d" ] && [ "$d" != "/" ]; do d=$(dirname "$d"); done
[ -d "$wd" ] && echo "workdir_exists=1"
echo "disk_path=$d"
df -Pk "$d" 2>/dev/null | awk 'NR==2{print "disk_total_kb="$2; print "disk_free_kb="$4}'
for t in apt-get sudo git ccache nvcc docker curl tar systemctl ninja gcc g++ gcc-13 g++-13; do
  p=$(command -v "$t" 2>/dev/null) && echo "tool_$t=$p"
done
for c in gcc g++ gcc-13 g++-13; do
  command -v "$c" >/dev/null 2>&1 && echo "version_$c=$("$c" -dumpfullversion -dumpversion 2>/dev/null)"
done
for v in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY; do
  eval "x=\${$v:-}"; [ -n "$x" ] && echo "env_$v=$x"
done
if command -v nvidia-smi >/dev/null 2>&1; then
  echo "smi=$(command -v nvidia-smi)"
  for q in query_gpu compute_apps header; do
    case $q in
      query_gpu) out=$(nvidia-smi --query-gpu=index,name,uuid,memory.total,memory.used,memory.free,driver_version --format=csv,noheader,nounits 2>&1); rc=$?;;
      compute_apps) out=$(nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory --format=csv,noheader,nounits 2>&1); rc=$?;;
      header) out=$(nvidia-smi 2>&1); rc=$?;;
    esac
    echo "@@SECTION $q $rc"
    printf '%s\n' "$out"
  done
fi
