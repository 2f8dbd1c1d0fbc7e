"""`readbench read` and `readbench variants`: run a read variant on a host file, list presets.

`readbench read PATH --variant B --offset 100 --limit 50` prints exactly the text the model
would receive (no added newline); `--json` prints `{"text", "is_error", "details"}`. A tool
error (e.g. offset past EOF, a missing file) still exits 0, since it is a valid result; bad
arguments exit 2. Missing files and directories produce pi's texts (pi-tools.md §1.4); anything
else that is not a regular file (a FIFO, a device such as /dev/zero, a socket) is refused in
the same `CODE: message, syscall` style before a byte is read, since reading it would block
forever or never end.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import sys
from typing import Any

import click

from readbench.read._session import ReadSession
from readbench.read._types import ReadVariant
from readbench.read.registry import PRESETS, get_variant, preset_names

__all__ = ["read_cmd", "read_regular_file", "resolve_like_pi", "variants_cmd"]


def resolve_like_pi(path: str) -> str:
    """pi's path handling (`path-utils.js`): strip one leading `@`, expand `~`, absolutise
    against the working directory."""
    raw = path[1:] if path.startswith("@") else path
    return os.path.abspath(os.path.expanduser(raw))


def _os_error_text(exc: OSError, absolute: str) -> str:
    """pi's error texts for files it cannot read (pi-tools.md §1.4)."""
    if exc.errno == errno.ENOENT:
        return f"ENOENT: no such file or directory, access '{absolute}'"
    if exc.errno == errno.EISDIR:
        return "EISDIR: illegal operation on a directory, read"
    if exc.errno == errno.EACCES:
        return f"EACCES: permission denied, access '{absolute}'"
    return f"{errno.errorcode.get(exc.errno or 0, 'EIO')}: {exc.strerror}, read"


NODE_MAX_FILE_BYTES = 2**31 - 1
"""Node's `kIoMaxLength`: `fs.readFile` (which pi's read tool uses, pi-tools.md §1.2 step 2) refuses a
larger file with `File size (N) is greater than 2 GiB` (ERR_FS_FILE_TOO_LARGE; checked with Node 20)."""

_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def read_regular_file(absolute: str) -> bytes | str:
    """The bytes of the regular file at `absolute`, or pi's error text when it cannot be read.

    The file is opened non-blocking (opening a FIFO does not wait for a writer) and checked
    with fstat before reading, so a FIFO or a device is refused instead of blocking or
    reading forever: `EINVAL: not a regular file (a FIFO), read '<absolute>'`. A file above
    `NODE_MAX_FILE_BYTES` gets Node's own refusal, as pi would, before a byte is read (a sparse
    2 GiB file would otherwise take ~4 GB of memory to decode).
    """
    try:
        fd = os.open(absolute, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        return _os_error_text(exc, absolute)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            return _os_error_text(IsADirectoryError(errno.EISDIR, "Is a directory"), absolute)
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "not a file")
            return f"EINVAL: not a regular file ({kind}), read '{absolute}'"
        size = os.fstat(fd).st_size
        if size > NODE_MAX_FILE_BYTES:
            return f"File size ({size}) is greater than 2 GiB"
        with os.fdopen(os.dup(fd), "rb") as fh:
            return fh.read()
    except OSError as exc:
        return _os_error_text(exc, absolute)
    finally:
        os.close(fd)


def _parse_variant(value: str) -> ReadVariant:
    spec: str | dict[str, Any] = value
    if value.lstrip().startswith("{"):
        try:
            spec = json.loads(value)
        except json.JSONDecodeError as exc:
            raise click.BadParameter(f"not valid JSON: {exc}", param_hint="--variant") from exc
    try:
        return get_variant(spec)
    except (ValueError, TypeError) as exc:
        raise click.BadParameter(str(exc), param_hint="--variant") from exc


def _emit(text: str) -> None:
    out = sys.stdout.buffer  # click.get_binary_stream is deprecated (removed in Click 9.0)
    out.write(text.encode("utf-8", errors="surrogatepass"))
    out.flush()


@click.command("read")
@click.argument("path")
@click.option(
    "--variant",
    "variant_spec",
    default="stock",
    show_default=True,
    help="Preset name (see `readbench variants`) or a JSON preset such as "
    '\'{"base": "B", "name": "B-1500", "max_lines": 1500}\'.',
)
@click.option("--offset", type=int, default=None, help="1-based first line (pi's `offset`).")
@click.option("--limit", type=int, default=None, help="Maximum lines (pi's `limit`).")
@click.option("--json", "as_json", is_flag=True, help='Print {"text", "is_error", "details"}.')
def read_cmd(
    path: str, variant_spec: str, offset: int | None, limit: int | None, as_json: bool
) -> None:
    """Print what the model would receive from `read PATH` under a read variant. A file that
    cannot be read (missing, a directory, no permission) prints the tool's error text, as the
    model would receive it, and exits 1."""
    variant = _parse_variant(variant_spec)
    absolute = resolve_like_pi(path)
    data = read_regular_file(absolute)
    if isinstance(data, str):
        text = data
        if as_json:
            _emit(
                json.dumps({"text": text, "is_error": True, "details": {}}, ensure_ascii=False)
                + "\n"
            )
        else:
            _emit(text)
        sys.exit(1)
    result = variant.read(
        data,
        path,
        offset,
        limit,
        call_id=None,
        session=ReadSession(),
        visible_call_ids=None,
        file_key=absolute,
    )
    if as_json:
        _emit(json.dumps(result.to_dict(), ensure_ascii=False) + "\n")
    else:
        _emit(result.text)


@click.command("variants")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of presets.")
@click.option("--agent", default=None, metavar="NAME",
              help="Say which presets this agent (`readbench agents`) can express, and how.")
def variants_cmd(as_json: bool, agent: str | None) -> None:
    """List the read-variant presets with their parameters and origin."""
    described = PRESETS.describe()
    if agent is not None:
        from readbench.harness.agents import expressible, get_agent

        try:
            get_agent(agent)
        except ValueError as ex:
            raise click.BadParameter(str(ex), param_hint="--agent") from None
        for d in described:
            d["agent"] = agent
            d["expressed_by"] = expressible(agent, d["name"], d["family"], d["params"])
    if as_json:
        click.echo(json.dumps(described, indent=2))
        return
    width = max(len(n) for n in preset_names())
    for d in described:
        if agent is not None:
            how = d["expressed_by"]
            click.echo(f"{d['name']:<{width}}  {'yes' if how else 'no '}  {how or 'cannot be expressed on ' + agent}")
            continue
        click.echo(f"{d['name']:<{width}}  [{d['family']}]  {d['origin']}")
        click.echo(
            " " * (width + 2) + " ".join(f"{k}={json.dumps(v)}" for k, v in d["params"].items())
        )
