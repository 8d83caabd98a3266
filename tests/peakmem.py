"""The most memory a child process held, for the tests that run a client or a scan in a fresh interpreter.

getrusage's ru_maxrss is the wrong number there: Linux keeps the largest RSS across execve, and Python's subprocess
starts the child by vfork + exec, so the child reports at least the RSS of the pytest process that spawned it (about
300 MB late in the full suite, which made a 300 MB bound fail on a child that held far less, and hid growth below
it). /proc/self/status's VmHWM belongs to the address space, which exec replaces, so it is the child's own peak."""

# Python source for the child: defines peak_kb(); ru_maxrss only where /proc is missing.
PEAK_KB = """
def peak_kb():
    try:
        with open('/proc/self/status') as fh:
            for ln in fh:
                if ln.startswith('VmHWM:'):
                    return int(ln.split()[1])
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
"""
