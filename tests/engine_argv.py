"""Run by an engine venv's python: parse command lines with the engine's OWN argument parser.

Reads {"vllm": {name: argv}, "transformers": {name: argv}} (argv after `-m MODULE` / after the
`transformers` executable) as JSON on stdin and prints, per name, the parsed options or the
parser's error and exit code.  Nothing is started: vLLM's parser is make_arg_parser (as its
api_server's main builds it), transformers serve's is its typer command turned into a click one.
"""

import contextlib
import io
import json
import sys


def _plain(value):
    try:
        json.dumps(value)
        return value
    except TypeError:
        return repr(value)


def _vllm_parser():
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    try:                       # 0.32 keeps it here; it has moved between versions
        from vllm.entrypoints.launchers.cli_args import make_arg_parser, validate_parsed_serve_args
    except ImportError:
        from vllm.entrypoints.openai.cli_args import make_arg_parser, validate_parsed_serve_args
    return make_arg_parser(FlexibleArgumentParser(description="vLLM OpenAI-Compatible RESTful API server.")), \
        validate_parsed_serve_args


def parse_vllm(argv):
    parser, validate = _vllm_parser()
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            ns = parser.parse_args(argv)
            validate(ns)
    except SystemExit as exc:
        return {"ok": False, "exit": exc.code, "error": err.getvalue().strip().splitlines()[-1:]}
    return {"ok": True, "options": {k: _plain(v) for k, v in sorted(vars(ns).items())}}


def parse_transformers(argv):
    import click
    import typer

    from transformers.cli.transformers import app

    group = app if isinstance(app, click.Group) else typer.main.get_command(app)   # a click group since hub 1.x
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            ctx = group.make_context("transformers", list(argv), resilient_parsing=False)
            name, cmd, rest = group.resolve_command(ctx, ctx.protected_args + ctx.args)
            sub = cmd.make_context(name, rest, parent=ctx)
    except click.exceptions.ClickException as exc:
        return {"ok": False, "exit": exc.exit_code, "error": [exc.format_message()]}
    except click.exceptions.Exit as exc:
        return {"ok": False, "exit": exc.exit_code, "error": [err.getvalue().strip()]}
    return {"ok": True, "command": name, "options": {k: _plain(v) for k, v in sorted(sub.params.items())}}


def main():
    req = json.load(sys.stdin)
    out = {"vllm": {k: parse_vllm(v) for k, v in (req.get("vllm") or {}).items()},
           "transformers": {k: parse_transformers(v) for k, v in (req.get("transformers") or {}).items()}}
    sys.stdout.write("@@ENGINE-ARGV@@" + json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
