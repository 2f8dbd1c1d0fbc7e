"""A tiny document model rendered to Markdown and to self-contained HTML.

The report is built once as a list of blocks and rendered twice, so report.md and
report.html always carry the same numbers (no Markdown parser needed; the venv has none).
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Block", "Bullets", "Heading", "Image", "Paragraph", "Table", "to_html", "to_markdown"]


@dataclass(frozen=True)
class Heading:
    """A heading of `level` 1-4."""

    level: int
    text: str


@dataclass(frozen=True)
class Paragraph:
    """Plain text; rendered as one paragraph."""

    text: str


@dataclass(frozen=True)
class Bullets:
    """An unordered list of plain-text items."""

    items: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    """A table: header cells, rows of cells (all plain text), optional group rows.

    A row whose first cell starts with ``"§ "`` is a group row (e.g. a task family): it spans
    the table in HTML and is rendered bold in Markdown.
    """

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    caption: str = ""


@dataclass(frozen=True)
class Image:
    """A PNG file next to the report; `path` is relative to the report directory."""

    path: str
    alt: str


Block = Heading | Paragraph | Bullets | Table | Image


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(blocks: list[Block]) -> str:
    """Render `blocks` as GitHub-flavoured Markdown (pipe tables)."""
    out: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            out.append("#" * b.level + " " + b.text)
        elif isinstance(b, Paragraph):
            out.append(b.text)
        elif isinstance(b, Bullets):
            out.append("\n".join(f"- {item}" for item in b.items))
        elif isinstance(b, Table):
            lines = []
            if b.caption:
                lines.append(f"*{b.caption}*")
                lines.append("")
            lines.append("| " + " | ".join(_md_cell(h) for h in b.header) + " |")
            lines.append("|" + "|".join("---" for _ in b.header) + "|")
            for row in b.rows:
                if row and row[0].startswith("§ "):
                    cells = [f"**{_md_cell(row[0][2:])}**"] + [""] * (len(b.header) - 1)
                else:
                    cells = [_md_cell(c) for c in row]
                lines.append("| " + " | ".join(cells) + " |")
            out.append("\n".join(lines))
        elif isinstance(b, Image):
            out.append(f"![{b.alt}]({b.path})")
        else:  # pragma: no cover - the Block union is closed
            raise TypeError(f"unknown block {type(b).__name__}")
    return "\n\n".join(out) + "\n"


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1200px;margin:2em auto;
padding:0 1em;color:#222;line-height:1.45}
table{border-collapse:collapse;margin:1em 0;font-size:0.86em}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:right;vertical-align:top}
th{background:#f0f0f0} td:first-child,th:first-child{text-align:left}
tr.group td{background:#fafafa;font-weight:bold;text-align:left}
caption{caption-side:top;text-align:left;font-style:italic;padding-bottom:4px}
img{max-width:100%;border:1px solid #eee}
"""


def to_html(blocks: list[Block], base_dir: Path, title: str) -> str:
    """Render `blocks` as one self-contained HTML page; images are inlined as base64 PNG.

    Raises FileNotFoundError if an `Image` block's file is missing under `base_dir`.
    """
    esc = html.escape
    parts = [f"<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{esc(title)}</title>"
             f"<style>{_CSS}</style></head><body>"]
    for b in blocks:
        if isinstance(b, Heading):
            parts.append(f"<h{b.level}>{esc(b.text)}</h{b.level}>")
        elif isinstance(b, Paragraph):
            parts.append(f"<p>{esc(b.text)}</p>")
        elif isinstance(b, Bullets):
            parts.append("<ul>" + "".join(f"<li>{esc(i)}</li>" for i in b.items) + "</ul>")
        elif isinstance(b, Table):
            rows = []
            for row in b.rows:
                if row and row[0].startswith("§ "):
                    rows.append(f"<tr class=\"group\"><td colspan=\"{len(b.header)}\">{esc(row[0][2:])}</td></tr>")
                else:
                    rows.append("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>")
            cap = f"<caption>{esc(b.caption)}</caption>" if b.caption else ""
            head = "<tr>" + "".join(f"<th>{esc(h)}</th>" for h in b.header) + "</tr>"
            parts.append(f"<table>{cap}<thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>")
        elif isinstance(b, Image):
            data = (base_dir / b.path).read_bytes()
            src = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
            parts.append(f"<figure><img src=\"{src}\" alt=\"{esc(b.alt)}\"><figcaption>{esc(b.alt)}</figcaption></figure>")
        else:  # pragma: no cover
            raise TypeError(f"unknown block {type(b).__name__}")
    parts.append("</body></html>\n")
    return "\n".join(parts)
