"""The checks of the vars the plans read as URLs (the pip options, a step's own index, the hubs, the layout
tarball, uv's Python downloads) and of the `installer` var: pure rules on a value, no host, no plan.

They live here, in the inventory room, because the inventory load runs them (model.var_problem): a typo is then
one line naming the inventory file and its line, for every command, before any host is touched.  The plans read
the same vars and check them again with the same code: provision/pip_index.py and provision/installer.py import
these names from here.  (Kept in provision, they made the inventory import the room that imports it: a cycle
and a climb up the layout, tests/test_layout.py.)

Every check raises a UsageError whose line names the var ("inventory var pip_index_url: ..."); `show` is how the
value is written in it: repr by default, a cut repr at load time (a value of thousands of characters is not one
line).  A URL is always shown masked (user:password@ as ***@).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from ..errors import UsageError

# Vars that are URLs wherever they are read (pip_extra_index_url: a list, or one string split on spaces or
# commas; pip_trusted_host: such a list of host or host:port)
URL_VARS = ("pip_index_url", "pip_extra_index_url", "pip_trusted_host", "torch_index_url", "paddle_index_url",
            "hf_endpoint", "hf_mirror", "modelscope_endpoint", "layout_url", "python_install_mirror")
# The installer var's choices (provision/installer.py: what each one does)
INSTALLER_MODES = ("auto", "uv", "pip")
# A trusted host: a name (an underscore too: a compose service or a container named devpi_server is a host
# name docker resolves) or a bracketed IPv6 address, either with a port
_TRUSTED_HOST = re.compile(r"[A-Za-z0-9._-]+(:\d+)?|\[[0-9A-Fa-f:]+\](:\d+)?")


def masked(url: str) -> str:
    """The URL with its credentials shown as ***@ (a password with '@', '/' or '?' in it included).  The probe masks
    with the same rule (provision/probe.mask_url, which also finds URLs inside text); it runs alone on the host and the
    inventory may not import the engine's room, so the rule is written twice and tests/provision/test_pip_index.py
    holds the two to the same answers."""
    if not url:
        return url
    scheme = re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", url)
    if not scheme and (any(c.isspace() for c in url) or "@" not in url):
        return url
    scheme = scheme.group(0) if scheme else ""
    rest = url[len(scheme):]
    # the authority ends at the first '/', '?' or '#', as urlsplit reads it
    cut = next((i for i, c in enumerate(rest) if c in "/?#"), len(rest))
    head, tail = rest[:cut], rest[cut:]
    if "@" in head:
        user, _, host = head.rpartition("@")
        return scheme + "***@" + host + tail if scheme or ":" in user else url
    user, colon, password = head.partition(":")
    at = tail.find("@")
    if tail and colon and not password.isdigit() and at > 0 and "/" not in tail[at:].split("/", 1)[0]:
        return scheme + "***@" + tail[at + 1:]          # a password with '/', '?' or '#' in it
    return url


def has_credentials(url: str) -> bool:
    """Whether the URL carries credentials (they then travel in the environment, never in argv)."""
    return bool(url) and masked(url) != url


def words(value) -> list[str]:
    """A list var as its items: a YAML list, or one string split on spaces or commas."""
    if value is None or value == "":
        return []
    items = value if isinstance(value, (list, tuple)) else re.split(r"[\s,]+", str(value))
    return [str(i).strip() for i in items if str(i).strip()]


def split_url(text: str):
    """urlsplit with both of its ValueErrors raised here: a bracketed host it cannot read (http://[::1)
    and a port out of range (read lazily by .port)."""
    parts = urlsplit(text)
    parts.port
    return parts


def _reason(exc: ValueError, text: str, limit=80) -> str:
    """urlsplit's own words, masked and cut: they may quote a piece of the credentials ("netloc 'u:pw@h' contains
    invalid characters under NFKC normalization", or "... as 'p'" for a password with '/' in it) or a port of any
    length.  A quoted piece of the credentials is shown as '***'."""
    said = str(exc)
    shown = masked(text)
    if shown != text:
        head, _, tail = shown.partition("***@")
        creds = text[len(head):len(text) - len(tail) - 1]      # user:password, as the mask hid them

        def piece(m):
            quoted = m.group(1)
            return "'***'" if quoted in creds else "'%s'" % quoted.replace(creds, "***")
        said = re.sub(r"'([^']*)'", piece, said)
    return said if len(said) <= limit else said[:limit] + "..."


def check_url(var: str, url, show=repr) -> str:
    """An index or endpoint URL from the inventory (or, when `var` is an option such as --endpoint, from
    the command line), or one clear line naming the var or the option.  urlsplit raises on a bracketed
    host it cannot read and a port out of range (split_url): both are that line too."""
    text = str(url).strip()
    where = var if var.startswith("--") else f"inventory var {var}"
    try:
        parts = split_url(text)
    except ValueError as exc:
        raise UsageError(f"{where}: {show(masked(text))} is not an http(s):// or file:// URL ({_reason(exc, text)})")
    if parts.scheme not in ("http", "https", "file") or (parts.scheme != "file" and not parts.hostname):
        raise UsageError(f"{where}: {show(masked(text))} is not an http(s):// or file:// URL")
    return text


def trusted_hosts(value, show=repr) -> list[str]:
    """pip_trusted_host's hosts (host or host:port each), checked."""
    hosts = words(value)
    for h in hosts:
        if not _TRUSTED_HOST.fullmatch(h):
            raise UsageError(f"inventory var pip_trusted_host: {show(h)} is not a host name (host or host:port)")
    return hosts


def index_urls(v: dict, show=repr) -> tuple[str | None, list[str], list[str]]:
    """(index URL or None, extra index URLs, trusted hosts), validated."""
    index = check_url("pip_index_url", v["pip_index_url"], show) if v.get("pip_index_url") else None
    extra = [check_url("pip_extra_index_url", u, show) for u in words(v.get("pip_extra_index_url"))]
    return index, extra, trusted_hosts(v.get("pip_trusted_host"), show)


def installer_mode(value, show=repr) -> str:
    """The `installer` var (or --installer), any case, checked: auto when not set."""
    chosen = str(value or "auto").strip().lower()
    if chosen not in INSTALLER_MODES:
        raise UsageError(f"inventory var installer: {show(value)} is not one of {', '.join(INSTALLER_MODES)}")
    return chosen
