"""Text from outside (hosts, servers, logs, mirrors) on its way to a person's terminal.

A hostile server or log line can carry escape sequences that write the clipboard (OSC 52), retitle
the window, clear the screen or hide what follows; rich's markup reads `[...]` as style tags. Every
such text passes through `safe()` once, where it is printed, so no room invents its own filter.
"""

from __future__ import annotations

import re

# ESC-introduced sequences: OSC / DCS / SOS / PM / APC strings end at BEL or ST (ESC \), CSI at its
# final byte, the rest (charset designations, ESC c, ...) are two or three bytes. An unterminated
# string runs to the end of the text (a terminal would swallow everything after it too).
ESCAPES = re.compile(
    r"\x1b[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c|$)"   # OSC, DCS, SOS, PM, APC
    r"|\x1b\[[0-?]*[ -/]*[@-~]?"                            # CSI
    r"|\x9b[0-?]*[ -/]*[@-~]?"                              # 8-bit CSI
    r"|[\x90\x9d\x98\x9e\x9f][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c|$)"  # 8-bit OSC, DCS, ...
    r"|\x1b[ -/]*[0-~]?"                                    # any other escape
)
# what remains of the C0 and C1 controls after the sequences are gone (tab and newline stay)
CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# colour codes as logs carry them, also in their caret form when a tool printed them as text
COLOUR = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\^\[\[[0-9;]*m")


def safe(text: object, *, keep_newlines: bool = True) -> str:
    """The text with every terminal escape sequence and control character taken out (a control is
    shown as nothing, a CR as nothing, so a line cannot rewrite itself on screen)."""
    s = ESCAPES.sub("", str(text))
    s = CONTROLS.sub("", s)
    if not keep_newlines:
        s = s.replace("\n", " ")
    return s


def safe_markup(text: object, *, keep_newlines: bool = True) -> str:
    """safe(), then escaped for rich markup: `[rank0]:` and `[/]` are shown as written."""
    from rich.markup import escape  # rich only where a rich table is drawn

    return escape(safe(text, keep_newlines=keep_newlines))
