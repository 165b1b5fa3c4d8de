"""A review as one self-contained HTML page: inline CSS and SVG charts, all text escaped, nothing fetched."""

from __future__ import annotations

from html import escape

from service.reports.chart import cost_time_svg, team_spend_svg
from service.reports.document import Document, Payload, Section, Table, build_document

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:2rem auto;
max-width:1400px;padding:0 1rem;color:#1b1f23;line-height:1.4}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd}
.sub{color:#586069;margin-top:0}.alert{background:#fff5f5;border-left:4px solid #d73a49;padding:.4rem .8rem}
table{border-collapse:collapse;font-size:.85rem;margin:.6rem 0;width:100%}
th,td{border:1px solid #e1e4e8;padding:.3rem .5rem;vertical-align:top;text-align:left}
th{background:#f6f8fa}td.n{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
tr:nth-child(even) td{background:#fbfcfd}figure{margin:1rem 0}svg{max-width:100%;height:auto}
figcaption{color:#586069;font-size:.85rem}ul.notes{font-size:.9rem}
footer{margin-top:2rem;color:#586069;font-size:.8rem}
"""


def _table(table: Table) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in table.headers)
    body = []
    for row in table.rows:
        cells = "".join(f'<td class="n">{escape(c)}</td>' if i in table.numeric else f"<td>{escape(c)}</td>"
                        for i, c in enumerate(row))
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _section(section: Section, *, chart: str = "") -> str:
    parts = [f'<section id="{escape(section.key)}"><h2>{escape(section.title)}</h2>']
    for index, line in enumerate(section.lines):
        css = ' class="alert"' if section.alert and index == 0 else ""
        parts.append(f"<p{css}>{escape(line)}</p>")
    parts.append(chart)
    if section.table is not None:
        parts.append(_table(section.table))
    if section.notes:
        parts.append('<ul class="notes">' + "".join(f"<li>{escape(n)}</li>" for n in section.notes) + "</ul>")
    parts.append("</section>")
    return "".join(parts)


def _figure(svg: str | None, caption: str) -> str:
    return "" if svg is None else f"<figure>{svg}<figcaption>{escape(caption)}</figcaption></figure>"


def render_document_html(doc: Document, *, charts: dict[str, str] | None = None) -> str:
    """Render a laid-out review as a page; `charts` maps a section key to the figure shown in it."""
    charts = charts or {}
    body = "".join(_section(s, chart=charts.get(s.key, "")) for s in doc.sections)
    return ("<!DOCTYPE html>\n"
            '<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{escape(doc.title)}</title><style>{_CSS}</style></head><body>"
            f"<header><h1>{escape(doc.title)}</h1><p class=\"sub\">{escape(doc.subtitle)}</p></header>"
            f"<main>{body}</main>"
            "<footer>Made by gpugauge. Estimates, not quotes: prices are the catalog's as of the date above, "
            "times are predictions from the jobs' specs.</footer></body></html>\n")


def render_html(payload: Payload) -> str:
    """Render a dumped review as a self-contained HTML page with its charts."""
    charts = {
        "summary": _figure(team_spend_svg(payload), "Planned cost per team; the dashed line is the budget."),
        "jobs": _figure(cost_time_svg(payload),
                        "Each colour is one job: faint dots are its machines (cheapest region and pricing "
                        "each), the line its options no other beats on both cost and time; "
                        "star: the planned option, triangle: the fastest within budget. Log scales."),
    }
    return render_document_html(build_document(payload), charts=charts)
