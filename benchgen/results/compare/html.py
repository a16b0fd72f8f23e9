"""A self-contained HTML page of a comparison: inline CSS, PNG plots embedded as base64 data
URIs, every table of the markdown report. Nothing is fetched when the page opens.

Once the page has loaded, a small inline script sets ``data-images-loaded="N/M"`` on ``<body>``
(images whose pixels decoded / images) and ``data-rendered="yes"`` when all of them did, so a
headless browser can check the page renders (tests/compare/test_html.py).
"""

from __future__ import annotations

import base64
import html
from pathlib import Path

from benchgen.results.compare import render
from benchgen.scoring import CLASSES

CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 1200px;
       color: #222; line-height: 1.4; padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ddd; } h3 { margin-top: 1.4em; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th { background: #f2f2f2; } td:first-child, th:first-child { text-align: left; }
tr:nth-child(even) td { background: #fafafa; }
.forced { background: #fde2e2; border: 2px solid #c00; color: #900; padding: 0.8em; font-weight: bold; }
.note { color: #555; font-size: 0.9em; }
.win { color: #075; font-weight: bold; } .loss { color: #a00; font-weight: bold; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.85em; }
.scroll { overflow-x: auto; }
"""

SCRIPT = """
(function () {
  function check() {
    var imgs = document.images, ok = 0;
    for (var i = 0; i < imgs.length; i++) { if (imgs[i].complete && imgs[i].naturalWidth > 0) ok++; }
    document.body.setAttribute('data-images-loaded', ok + '/' + imgs.length);
    if (ok === imgs.length) document.body.setAttribute('data-rendered', 'yes');
  }
  window.addEventListener('load', check);
})();
"""

CAPTIONS = {
    "aggregates.png": "Aggregates with stratified-bootstrap confidence intervals (references: point estimates).",
    "probability_of_improvement.png": "Probability of improvement P(X > Y), with stratified independent bootstrap intervals.",
    "performance_profiles.png": "Performance profiles: fraction of (run, task) scores above each threshold (at or "
    "above it under Bellemare et al. 2013's normalizations, their score distribution).",
    "classes.png": "SABER score classes, side by side.",
    "learning_curves.png": "Learning curves at matching frame counts: IQM over tasks and seeds, bootstrap band.",
    "learning_curves_tasks.png": "Per-task learning curves: mean over seeds with a Student-t interval.",
}


def _e(text) -> str:
    return html.escape(str(text))


def _table(table_id: str, head: list[str], rows: list[list[str]], classes: dict[int, str] | None = None) -> str:
    out = [
        f'<div class="scroll"><table id="{table_id}"><thead><tr>'
        + "".join(f"<th>{_e(h)}</th>" for h in head)
        + "</tr></thead><tbody>"
    ]
    for row in rows:
        cells = []
        for i, c in enumerate(row):
            cls = (classes or {}).get(i)
            css = f' class="{c.split(" ")[0]}"' if cls == "result" and c.split(" ")[0] in ("win", "loss") else ""
            cells.append(f"<td{css}>{_e(c)}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    return "\n".join(out) + "</tbody></table></div>"


def _md_inline(text: str) -> str:
    """The header lines use **bold**; render it."""
    parts = _e(text).split("**")
    return "".join(f"<strong>{p}</strong>" if i % 2 else p for i, p in enumerate(parts))


def _image(path: Path) -> str:
    data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
    name = Path(path).name
    return (
        f'<figure><img alt="{_e(name)}" data-name="{_e(name)}" src="data:image/png;base64,{data}">'
        f"<figcaption>{_e(CAPTIONS.get(name, name))}</figcaption></figure>"
    )


#: videos up to this size are embedded in the page (data URI); larger ones are linked
MAX_EMBEDDED_VIDEO_BYTES = 4_000_000


def _video(path: str, caption: str) -> str:
    size = Path(path).stat().st_size
    if size > MAX_EMBEDDED_VIDEO_BYTES:
        return f'<p><a href="{_e(Path(path).resolve().as_uri())}">{_e(caption)}</a> ({size / 1e6:.0f} MB, linked)</p>'
    data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
    return (
        f'<figure><video controls muted loop preload="metadata" width="320" src="data:video/mp4;base64,{data}">'
        f"</video><figcaption>{_e(caption)}</figcaption></figure>"
    )


def to_html(result: dict, images: list[Path] = ()) -> str:
    norm = result["normalized"]
    forced = f'<div class="forced" id="forced-label">{_e(result["forced_label"])}</div>' if result["forced"] else ""
    body = [f"<h1>Comparison: {_e(result['title'])}</h1>", forced]
    body += [f'<p class="note">{_md_inline(line)}</p>' for line in render.header_lines(result)]
    body.append("<h2>Runs</h2>")
    body.append(_table("runs", *render.runs_table(result)))
    body.append(f"<h2>Aggregates ({len(result['aggregate_tasks'])} tasks)</h2>")
    body.append(
        _table(
            "aggregates",
            render.aggregate_head(result),
            render.aggregate_rows(result),
        )
    )
    by_name = {Path(p).name: p for p in images}
    for name in ("aggregates.png",):
        if name in by_name:
            body.append(_image(by_name.pop(name)))
    if result["probability_of_improvement"]:
        body.append("<h2>Probability of improvement</h2>")
        body.append(_table("probability-of-improvement", *render.improvement_table(result)))
        if "probability_of_improvement.png" in by_name:
            body.append(_image(by_name.pop("probability_of_improvement.png")))

    for i, (title, text, tables) in enumerate(render.published_runs_blocks(result, norm)):
        body.append(f"<h2>{_e(title)}</h2>")
        body += [f'<p class="note">{_md_inline(paragraph)}</p>' for paragraph in text]
        for j, (caption, head, rows) in enumerate(tables):
            body.append(f"<h3>{_e(caption)}</h3>" + _table(f"published-runs-{i}-{j}", head, rows))
    body.append("<h2>Performance profiles</h2>")
    if "performance_profiles.png" in by_name:
        body.append(_image(by_name.pop("performance_profiles.png")))
    class_rows = render.class_rows(result) if norm else []
    if class_rows:
        body.append("<h2>Score classes (SABER)</h2>")
        body.append(_table("classes", ["agent"] + [n for n, _ in CLASSES], class_rows))
        if "classes.png" in by_name:
            body.append(_image(by_name.pop("classes.png")))
    body.append("<h2>Learning curves</h2>")
    for name in ("learning_curves.png", "learning_curves_tasks.png"):
        if name in by_name:
            body.append(_image(by_name.pop(name)))
    for i, pair in enumerate(result["welch"]):
        body.append(f"<h2>Paired per-task comparison: {_e(pair['x'])} vs {_e(pair['y'])} (Welch's t-test)</h2>")
        body.append(
            f'<p class="note"><em>{_e(pair["method"])}.</em> {_e(pair["x"])}: {pair["wins"]} wins, '
            f"{pair['losses']} losses, {pair['ties']} ties, {pair['not_tested']} not tested.</p>"
        )
        body.append(
            _table(
                f"welch-{i}",
                ["task", f"mean {pair['x']}", f"mean {pair['y']}", "seeds", "t", "p", "result"],
                render.welch_rows(pair),
                classes={6: "result"},
            )
        )
    if result.get("videos"):
        body.append("<h2>Videos</h2>")
        for label, by_task in result["videos"].items():
            for task, path in by_task.items():
                body.append(_video(path, f"{label} on {task}"))
    body.append("<h2>Per-task scores</h2>")
    if norm:
        head, rows = render.normalized_rows(result)
        body.append(f"<h3>Normalized ({_e(result['baseline'])})</h3>" + _table("per-task-normalized", head, rows))
    for view in result["views"]:
        head, rows = render.per_task_rows(result, view)
        body.append(f"<h3>Raw scores, view {_e(result['view_labels'].get(view, view))} (mean ± std over seeds)</h3>")
        body.append(_table(f"per-task-{view}", head, rows))
    if result["per_task"].get("final_score"):
        head, rows = render.per_task_rows(result, "final_score")
        body.append(f"<h3>{_e(render.FINAL_SCORE_TITLE)}</h3>" + _table("per-task-final-score", head, rows))
    for path in by_name.values():
        body.append(_image(path))
    if result["notes"]:
        body.append("<h2>Notes</h2><ul>" + "".join(f"<li>{_e(n)}</li>" for n in result["notes"]) + "</ul>")
    if result["forced"]:
        body.append(f'<div class="forced">{_e(result["forced_label"])}</div>')
    body.append(f'<p class="note">Generated by benchgen compare, {_e(result["generated_at"])}.</p>')
    title = ("[FORCED] " if result["forced"] else "") + f"benchgen comparison: {result['title']}"
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>'
        f"<style>{CSS}</style></head>\n<body>\n"
        + "\n".join(b for b in body if b)
        + f"\n<script>{SCRIPT}</script>\n</body></html>\n"
    )
