"""Hostile text never reaches the terminal as control sequences (red team L7)."""

from ocrdeploy.terminal import safe, safe_markup


def test_osc52_clipboard_write_with_bel_and_with_st_is_removed():
    assert safe("id\x1b]52;c;ZWNobyBwd25lZA==\x07 ok") == "id ok"
    assert safe("id\x1b]52;c;ZWNobyBwd25lZA==\x1b\\ ok") == "id ok"
    assert safe("a\x1b]0;title\x1b\\b") == "ab"


def test_csi_clear_screen_title_and_colours_are_removed():
    assert safe("\x1b[2J\x1b[Hx\x1b[31mred\x1b[0m") == "xred"
    assert safe("\x9b2Jx") == "x"


def test_nul_bytes_cr_and_other_controls_are_removed_tabs_and_newlines_kept():
    assert safe("a" + "\x00" * 400 + "b\r\tc\nd\x7f") == "ab\tc\nd"
    assert safe("a\nb", keep_newlines=False) == "a b"


def test_an_unterminated_osc_swallows_the_rest_as_a_terminal_would():
    assert safe("ok\x1b]52;c;AAAA") == "ok"


def test_plain_text_and_unicode_are_untouched():
    text = "模型 minicpm-ocr [rank0]: naïve – ok"
    assert safe(text) == text


def test_markup_is_escaped_for_rich():
    from rich.console import Console

    console = Console(record=True, width=200)
    console.print(safe_markup("[rank0]: oom [/] \x1b]52;c;x\x07end"))
    assert "[rank0]: oom [/] end" in console.export_text()
