"""A review as Markdown: the document's sections as headings, sentences and pipe tables, all text escaped."""

from __future__ import annotations

import re

from service.reports.document import Document, Payload, Table, build_document

# Characters that would start Markdown syntax or raw HTML inside a table cell or a line.
_SPECIAL = re.compile(r"([\\`*_\[\]<>|#$~])")


def escape_markdown(text: str) -> str:
    """Escape text so that Markdown shows it as written: no markup, no HTML, no broken table row."""
    flat = " ".join(str(text).split())
    return _SPECIAL.sub(r"\\\1", flat.replace("&", "&amp;"))


def _table(table: Table) -> list[str]:
    align = ["---:" if i in table.numeric else "---" for i in range(len(table.headers))]
    lines = ["| " + " | ".join(escape_markdown(h) for h in table.headers) + " |",
             "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(escape_markdown(c) for c in row) + " |" for row in table.rows]
    return lines


def render_document_markdown(doc: Document) -> str:
    """Render a laid-out review as Markdown."""
    out = [f"# {escape_markdown(doc.title)}", "", f"_{escape_markdown(doc.subtitle)}_", ""]
    for section in doc.sections:
        out += [f"## {escape_markdown(section.title)}", ""]
        for index, line in enumerate(section.lines):
            text = escape_markdown(line)
            out += [f"**{text}**" if section.alert and index == 0 else text, ""]
        if section.table is not None:
            out += [*_table(section.table), ""]
        out += [f"- {escape_markdown(n)}" for n in section.notes]
        if section.notes:
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def render_markdown(payload: Payload) -> str:
    """Render a dumped review as Markdown."""
    return render_document_markdown(build_document(payload))
