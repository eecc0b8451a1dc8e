"""A report as a list of blocks, written twice: summary.md (text, PNGs by name) and a
self-contained report.html (PNGs inlined as data URIs, no script, no network)."""
import base64
import html
import os

CSS = """body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.2em;font-size:.9em}
td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}
td:first-child,th:first-child{text-align:left}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ddd;margin-top:1.6em}
img{max-width:100%;border:1px solid #eee;margin:.4em 0}
.finding{font-weight:600}code{background:#f4f4f4;padding:0 .2em}"""


class Doc:
    def __init__(self, title):
        self.title = title
        self.blocks = []

    def h2(self, text):
        self.blocks.append(("h2", text))

    def para(self, text):
        self.blocks.append(("p", text))

    def items(self, lines, strong=False):
        self.blocks.append(("ul", (list(lines), strong)))

    def table(self, header, rows):
        self.blocks.append(("table", (header, [[str(c) for c in r] for r in rows])))

    def image(self, path, caption):
        self.blocks.append(("img", (path, caption)))

    def markdown(self):
        out = [f"# {self.title}", ""]
        for kind, v in self.blocks:
            if kind == "h2":
                out += [f"## {v}", ""]
            elif kind == "p":
                out += [v, ""]
            elif kind == "ul":
                out += [f"- {line}" for line in v[0]] + [""]
            elif kind == "table":
                header, rows = v
                out.append("| " + " | ".join(header) + " |")
                out.append("|" + "|".join("---" for _ in header) + "|")
                out += ["| " + " | ".join(r) + " |" for r in rows]
                out.append("")
            elif kind == "img":
                out += [f"![{v[1]}]({os.path.basename(v[0])})", ""]
        return "\n".join(out)

    def html(self):
        e = html.escape
        out = ["<!DOCTYPE html>", "<html><head><meta charset='utf-8'>", f"<title>{e(self.title)}</title>",
               f"<style>{CSS}</style></head><body>", f"<h1>{e(self.title)}</h1>"]
        for kind, v in self.blocks:
            if kind == "h2":
                out.append(f"<h2>{e(v)}</h2>")
            elif kind == "p":
                out.append(f"<p>{e(v)}</p>")
            elif kind == "ul":
                cls = " class='finding'" if v[1] else ""
                out.append("<ul>" + "".join(f"<li{cls}>{e(line)}</li>" for line in v[0]) + "</ul>")
            elif kind == "table":
                header, rows = v
                out.append("<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in header) + "</tr>")
                out += ["<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>" for r in rows]
                out.append("</table>")
            elif kind == "img":
                with open(v[0], "rb") as f:
                    data = base64.b64encode(f.read()).decode()
                out.append(f"<figure><img alt='{e(v[1])}' src='data:image/png;base64,{data}'>"
                           f"<figcaption>{e(v[1])}</figcaption></figure>")
        out.append("</body></html>")
        return "\n".join(out)

    def write(self, outdir, md_name, html_name):
        """Writes the markdown and the HTML page into outdir; returns their paths."""
        md, page = os.path.join(outdir, md_name), os.path.join(outdir, html_name)
        with open(md, "w") as f:
            f.write(self.markdown())
        with open(page, "w") as f:
            f.write(self.html())
        return md, page
