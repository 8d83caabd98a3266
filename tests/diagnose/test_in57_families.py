"""(round in57) Four install/compile families written by their tools' key tokens:

- nvcc-host-compiler-unsupported p6: torch's cpp_extension refusing the host compiler's version before any nvcc call
  (torch/utils/cpp_extension.py _check_cuda_version: "The current installed version of {compiler} ({version}) is
  greater than the maximum required version by CUDA {cuda}." and its "less than the minimum" sibling, with or without
  torch 1.11-1.13's bound in brackets); a retelling that cuts the compiler to "..." stays out (the entry's veto);
  p7: nvcc's own "nvcc fatal   : Host compiler targets unsupported OS." (a MinGW / MSYS2 g++ handed to nvcc on Windows);
- msvc-build-tools-missing p9: MSVC's C1083 for a C/C++ standard library, CRT or Windows SDK header (crtdefs.h,
  corecrt.h, vcruntime.h, stdio.h, cerrno, algorithm, windows.h ...), cl.exe run without the VC++ workload's / SDK's
  include paths; CUDA's own headers stay cuda-headers-missing's, and CUDA's host_config.h including crtdefs.h is this
  entry's, not cuda-headers-missing's;
- flash-attn-build-prereqs (p0 under two new contexts): the line before names the install of a torch extension and
  ends in a colon ("pip was installing xformers-0.0.29:"), or an error word stands before the install on the line of
  the ModuleNotFoundError ("Error on pip install: ModuleNotFoundError: No module named 'torch'"); a run after a
  finished install stays python-module-missing;
- pip-timeout p14: pip's "Could not find a version that satisfies the requirement X" with no versions seen, after pip's
  own retry warnings (a new preceded_by): the index never answered; a proxy's refusal in the retry line, a listed
  version or no retry at all stays out.
"""

import pytest

import corpus

CASES = [
    ("nvcc-host-compiler-unsupported", 6, "mit-han-lab/torchsparse/issues/189"),
    ("nvcc-host-compiler-unsupported", 6, "Hanqer/deep-hough-transform/issues/42"),
    ("nvcc-host-compiler-unsupported", 7, "kcheng1021/GaussianPro/issues/29"),
    ("nvcc-host-compiler-unsupported", 7, "zq-chen/ParaPano/issues/6"),
    ("msvc-build-tools-missing", 9, "hrydgard/ppsspp/issues/7875"),
    ("msvc-build-tools-missing", 9, "microsoft/vcpkg/issues/19266"),
    ("msvc-build-tools-missing", 9, "tom-r/tactics_pi/issues/41"),
]
# each wording one line or a short block (the training batches' shapes)
WORDINGS = [
    ("nvcc-host-compiler-unsupported", 6, "RuntimeError: The current installed version of g++ (12.2.1) is greater than "
     "the maximum required version by CUDA 11.7. Please make sure to use an adequate version of g++ (>=6.0.0, <12.0)."),
    ("nvcc-host-compiler-unsupported", 6, "RuntimeError: The current installed version of /usr/bin/c++ (5.4.0) is less "
     "than the minimum required version by CUDA 12.1 (6.0.0). Please make sure to use an adequate version of /usr/bin/c++ "
     "(>=6.0.0, <13.0)."),
    # a console wrapping the line after the compiler's path: the comparison is on the next line
    ("nvcc-host-compiler-unsupported", 6, "RuntimeError: The current installed version of .../x86_64-conda-linux-gnu-c++\n"
     "(14.3.0) is greater than the maximum required version by CUDA 12.8."),
    ("nvcc-host-compiler-unsupported", 7, "    nvcc fatal : Host compiler targets unsupported OS."),
    ("msvc-build-tools-missing", 9, "Can't install \"tiny cuda nn\" - host_config.h(231): fatal error C1083: Cannot open "
     "include file: 'crtdefs.h': No such file or directory"),
    ("msvc-build-tools-missing", 9, "      E:\\Program Files\\CUDA\\v11.7\\include\\crt/host_config.h(231): fatal error "
     "C1083: Cannot open include file: 'crtdefs.h': No such file or directory"),
    ("msvc-build-tools-missing", 9, "fatal error C1083: Cannot open include file: 'cerrno': No such file or directory"),
    ("msvc-build-tools-missing", 9, "particles.cpp(2): fatal error C1083: 无法打开包括文件: “random”: No such file or "
     "directory"),
    ("msvc-build-tools-missing", 9, "DeepSpeed\\csrc\\includes\\StopWatch.h(3): fatal error C1083: Cannot open include "
     "file: 'windows.h': No such file or directory"),
    ("flash-attn-build-prereqs", 0, "From a clean install I got the error wilest pip was installing xformers-0.0.29:\n"
     "ModuleNotFoundError: No module named 'torch'"),
    ("flash-attn-build-prereqs", 0, "Error on pip install: ModuleNotFoundError: No module named 'torch'"),
]
# lines the new patterns leave to others or to nobody
QUIET = [
    ("nvcc-host-compiler-unsupported", "RuntimeError: The current installed version of ... (15.2.0) is greater than the "
     "maximum required version by CUDA 11.6 (<12.0)"),
    ("nvcc-host-compiler-unsupported", "W1029 20:55:47.576000 79341 torch/utils/cpp_extension.py:531] There are no "
     "/usr/bin/g++-14 version bounds defined for CUDA version 13.0"),
    ("cuda-headers-missing", "E:\\Program Files\\CUDA\\v11.7\\include\\crt/host_config.h(231): fatal error C1083: "
     "Cannot open include file: 'crtdefs.h': No such file or directory"),
    ("msvc-build-tools-missing", "[Windows] fatal error C1083: Cannot open include file: 'cuda_runtime.h': No such file "
     "or directory"),
    ("msvc-build-tools-missing", "C:\\src\\fmt/format-inl.h(11): fatal error C1083: Cannot open include file: "
     "'fmt/core.h': No such file or directory"),
    ("msvc-build-tools-missing", "src/main.c:1:10: fatal error: stdio.h: No such file or directory"),
    ("msvc-build-tools-missing", "cannot open source file \"corecrt.h\" (dependency of \"iostream\")"),
    ("flash-attn-build-prereqs", "Successfully installed xformers-0.0.29\nTraceback (most recent call last):\n"
     "  File \"app.py\", line 1, in <module>\nModuleNotFoundError: No module named 'torch'"),
    ("flash-attn-build-prereqs", "I got this error after installing xformers:\nModuleNotFoundError: No module named "
     "'torch'"),
    ("pip-timeout", "WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after "
     "connection broken by 'ProxyError('Cannot connect to proxy.', OSError(0, 'Error'))': /simple/jupyterlab/\n"
     "ERROR: Could not find a version that satisfies the requirement jupyterlab"),
    ("pip-timeout", "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after "
     "connection broken by 'ReadTimeoutError(\"HTTPSConnectionPool(host='mirror.example', port=443): Read timed out.\")': "
     "/simple/pip/\nERROR: Could not find a version that satisfies the requirement gpflow==1.1.0 (from versions: 1.0.0, "
     "1.1.1, 1.2.0)"),
    ("pip-timeout", "WARNING:urllib3.connectionpool:Retrying (Retry(total=2, connect=None, read=None, redirect=None, "
     "status=None)) after connection broken by 'NewConnectionError(...)': /api/items\nERROR: Could not find a version "
     "that satisfies the requirement attr==0.3.2 (from versions: none)"),
    ("pip-timeout", "ERROR: Could not find a version that satisfies the requirement sample-helper-aws-appconfig (from "
     "versions: none)"),
    # a TLS failure in pip's pool line is the certificate's (a Python without ssl, an untrusted mirror), not a timeout
    ("pip-timeout", "Could not fetch URL https://pypi.org/simple/certifi/: There was a problem confirming the ssl "
     "certificate: HTTPSConnectionPool(host='pypi.org', port=443): Max retries exceeded with url: /simple/certifi/ "
     "(Caused by SSLError(\"Can't connect to HTTPS URL because the SSL module is not available.\")) - skipping\n"
     "ERROR: Could not find a version that satisfies the requirement certifi (from versions: none)"),
]
NEAR = [
    ("nvcc-host-compiler-unsupported", "pytorch/pytorch/issues/166580"),
    ("msvc-build-tools-missing", "microsoft/vscode-cpptools/issues/1237"),
    ("flash-attn-build-prereqs", "Nerogar/OneTrainer/issues/720"),
    ("pip-timeout", "aws-samples/sample-python-helper-aws-appconfig/issues/1"),
]


(test_each_new_case_is_named_through_its_new_pattern, test_each_wording_is_named_through_its_pattern,
 test_lines_left_to_others_stay_out_of_the_entry, test_the_near_misses_stay_quiet) = corpus.family_tests(CASES, WORDINGS,
                                                                                                       QUIET, NEAR)

# pip-timeout's new pattern needs pip's retry warnings above it, which pip-retrying names too (a warning): the cases
# hold both, pip-timeout through pattern 14
PIP_TIMEOUT = ["naturalstupid/PyJHora/issues/34", "datarobot/syftr/issues/22"]
PIP_WORDINGS = [
    "`WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by "
    "'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7ff99f4f7970>: Failed to establish a "
    "new connection: [Errno -3] Temporary failure in name resolution')': /whl/torch_stable.html`\n"
    "ERROR: Could not find a version that satisfies the requirement torch==1.7.1+cu110\n"
    "ERROR: No matching distribution found for torch==1.7.1+cu110",
    "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by "
    "'SSLError(SSLEOFError(8, '[SSL: UNEXPECTED_EOF_WHILE_READING] EOF occurred in violation of protocol "
    "(_ssl.c:1000)'))': /simple/detectron2/\n"
    "ERROR: Could not find a version that satisfies the requirement detectron2 (from versions: none)",
    # torch's "(from versions: none)" after the retries is the index's, not python-version-unsupported's
    "WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after connection broken by "
    "'ConnectTimeoutError(<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f0>, 'Connection to "
    "download.pytorch.org timed out. (connect timeout=15)')': /whl/cu121/torch/\n"
    "ERROR: Could not find a version that satisfies the requirement torch (from versions: none)",
]
_scan, _data = corpus.Scanner(), corpus.load()


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("log", [corpus.case_log(_data, "pip-timeout", t) for t in PIP_TIMEOUT]
                         + [w + "\n" for w in PIP_WORDINGS],
                         ids=PIP_TIMEOUT + [f"wording{i}" for i in range(len(PIP_WORDINGS))])
def test_pip_timeout_after_pips_retries(engine, log):
    """The corpus cases and the wordings alike: pip-timeout through pattern 14, beside pip-retrying's warning."""
    found = _scan.findings(log, engine)
    assert set(found) == {"pip-timeout", "pip-retrying"} and 14 in found["pip-timeout"], found
